//! Archives built in the test: zips as GitHub and GitLab serve them, tgzs as npm does, and the
//! malicious shapes the reader must refuse.

use std::io::{Cursor, Write};

use flate2::Compression;
use flate2::write::GzEncoder;
use zip::write::SimpleFileOptions;

/// A PNG header and bytes that are not UTF-8.
pub const BINARY: &[u8] = &[
    0x89, b'P', b'N', b'G', 0x0d, 0x0a, 0x1a, 0x0a, 0xff, 0xfe, 0x00,
];

/// One zip entry: a folder when the name ends in `/`.
pub fn zip(entries: &[(&str, &[u8])]) -> Vec<u8> {
    let mut writer = zip::ZipWriter::new(Cursor::new(Vec::new()));
    let options = SimpleFileOptions::default();
    for (name, contents) in entries {
        if name.ends_with('/') {
            writer.add_directory(*name, options).unwrap();
        } else {
            writer.start_file(*name, options).unwrap();
            writer.write_all(contents).unwrap();
        }
    }
    writer.finish().unwrap().into_inner()
}

/// A zip holding `entries` and then a symlink `link` → `target`.
pub fn zip_with_symlink(entries: &[(&str, &[u8])], link: &str, target: &str) -> Vec<u8> {
    let mut writer = zip::ZipWriter::new_append(Cursor::new(zip(entries))).unwrap();
    writer
        .add_symlink(link, target, SimpleFileOptions::default())
        .unwrap();
    writer.finish().unwrap().into_inner()
}

/// A GitHub-style zip: every path under `{root}/`, the root folder first.
pub fn github_zip(root: &str, files: &[(&str, &[u8])]) -> Vec<u8> {
    let names: Vec<String> = files
        .iter()
        .map(|(name, _)| format!("{root}/{name}"))
        .collect();
    let folder = format!("{root}/");
    let mut entries: Vec<(&str, &[u8])> = vec![(folder.as_str(), b"")];
    entries.extend(
        names
            .iter()
            .map(String::as_str)
            .zip(files.iter().map(|(_, c)| *c)),
    );
    zip(&entries)
}

/// What one tar member is.
pub enum Member<'a> {
    File(&'a [u8]),
    Folder,
    Symlink(&'a str),
    HardLink(&'a str),
}

/// A gzip'd tar of `members`, in order.
pub fn tgz(members: &[(&str, Member<'_>)]) -> Vec<u8> {
    let mut builder = tar::Builder::new(GzEncoder::new(Vec::new(), Compression::default()));
    for (path, member) in members {
        let mut header = tar::Header::new_gnu();
        header.set_mode(0o644);
        match member {
            Member::File(contents) => {
                header.set_size(contents.len() as u64);
                builder.append_data(&mut header, path, *contents).unwrap();
            }
            Member::Folder => {
                header.set_entry_type(tar::EntryType::Directory);
                header.set_size(0);
                builder.append_data(&mut header, path, &[][..]).unwrap();
            }
            Member::Symlink(target) | Member::HardLink(target) => {
                let kind = match member {
                    Member::Symlink(_) => tar::EntryType::Symlink,
                    _ => tar::EntryType::Link,
                };
                header.set_entry_type(kind);
                header.set_size(0);
                builder.append_link(&mut header, path, target).unwrap();
            }
        }
    }
    builder.into_inner().unwrap().finish().unwrap()
}

//! Reading a plugin archive (zip, else gzip'd tar) into its text files, within limits, refusing
//! paths that leave the archive and links of any kind. Nothing is written to disk.

use std::cell::Cell;
use std::collections::BTreeMap;
use std::io::{self, Cursor, Read};

use domain::plugin::{PluginFiles, UpstreamError};

use super::source_text;

/// How much of an archive (or local plugin) is read.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    /// Entries of any kind, folders included.
    pub max_files: usize,
    /// Decompressed bytes, counted as they are read.
    pub max_unpacked_bytes: u64,
    /// Larger files are left out of `PluginFiles` (they are not source a client edits).
    pub max_file_bytes: u64,
}

pub(crate) fn invalid(reason: impl Into<String>) -> UpstreamError {
    UpstreamError::InvalidArchive(reason.into())
}

pub(crate) fn too_many_files(limits: Limits) -> UpstreamError {
    invalid(format!(
        "The plugin has more than {} files and folders",
        limits.max_files
    ))
}

fn too_large_unpacked(limits: Limits) -> UpstreamError {
    invalid(format!(
        "The plugin archive unpacks to more than {} bytes",
        limits.max_unpacked_bytes
    ))
}

/// The text files under the archive's root folder (and under `subdirectory` of it, if given).
/// The root is found as PostHog finds it: in a zip, the first entry when it is a folder
/// (GitHub's `repo-sha/`); in a tgz, the first member's top folder (npm's `package/`).
///
/// # Errors
/// `InvalidArchive` for neither zip nor tgz, an unsafe path, a link, or a limit broken.
pub(crate) fn read_archive(
    bytes: &[u8],
    subdirectory: Option<&str>,
    limits: Limits,
) -> Result<PluginFiles, UpstreamError> {
    let unpacked = Cell::new(0);
    let (entries, root) = if bytes.starts_with(b"PK") {
        let entries = zip_entries(bytes, limits, &unpacked)?;
        let root = match entries.first() {
            Some(Entry::Folder(path)) => path.clone(),
            _ => String::new(),
        };
        (entries, root)
    } else if bytes.starts_with(&[0x1f, 0x8b]) {
        let entries = tar_entries(bytes, limits, &unpacked)?;
        let root = entries
            .first()
            .and_then(|entry| entry.path().split_once('/'))
            .map(|(top, _)| format!("{top}/"))
            .unwrap_or_default();
        (entries, root)
    } else {
        return Err(invalid(
            "The plugin archive is neither a zip nor a gzip'd tar file",
        ));
    };
    Ok(text_files(entries, &plugin_root(root, subdirectory)))
}

/// A folder or regular file of an archive, by its safe path.
enum Entry {
    /// The path ends in `/`.
    Folder(String),
    /// `contents` is `None` when the file is over the size limit.
    File {
        path: String,
        contents: Option<Vec<u8>>,
    },
}

impl Entry {
    fn path(&self) -> &str {
        match self {
            Self::Folder(path) | Self::File { path, .. } => path,
        }
    }
}

/// `root` (ending in `/` or empty) with `subdirectory` below it.
fn plugin_root(root: String, subdirectory: Option<&str>) -> String {
    let mut root = root;
    for part in subdirectory
        .unwrap_or_default()
        .split('/')
        .filter(|part| !part.is_empty() && *part != ".")
    {
        root.push_str(part);
        root.push('/');
    }
    root
}

/// Regular files under `root`, by path relative to it, when source text and within the size
/// limit.
fn text_files(entries: Vec<Entry>, root: &str) -> PluginFiles {
    let mut files = BTreeMap::new();
    for entry in entries {
        let Entry::File {
            path,
            contents: Some(contents),
        } = entry
        else {
            continue;
        };
        let Some(relative) = path.strip_prefix(root) else {
            continue;
        };
        if relative.is_empty() {
            continue;
        }
        if let Some(text) = source_text(contents) {
            files.insert(relative.to_owned(), text);
        }
    }
    files
}

/// An entry's name as `/`-separated normal components, refusing `..`, absolute paths, drive
/// prefixes and NUL bytes, whichever separator the archiver used.
fn safe_path(name: &str) -> Result<String, UpstreamError> {
    let outside = || {
        invalid(format!(
            "The plugin archive has an entry outside its root: {name}"
        ))
    };
    if name.starts_with(['/', '\\']) || name.contains('\0') {
        return Err(outside());
    }
    let mut parts = Vec::new();
    for (index, part) in name.split(['/', '\\']).enumerate() {
        match part {
            "" | "." => {}
            ".." => return Err(outside()),
            drive if index == 0 && drive.len() == 2 && drive.ends_with(':') => {
                return Err(outside());
            }
            part => parts.push(part),
        }
    }
    Ok(parts.join("/"))
}

/// A reader adding every byte it gives to a shared count, failing once past `limit`.
struct Counted<'a, R> {
    inner: R,
    count: &'a Cell<u64>,
    limit: u64,
}

impl<R: Read> Read for Counted<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let read = self.inner.read(buf)?;
        self.count.set(self.count.get().saturating_add(read as u64));
        if self.count.get() > self.limit {
            return Err(io::Error::other("the unpacked size limit was passed"));
        }
        Ok(read)
    }
}

/// Reads one file to its end, keeping at most `max_file_bytes` (`None` when it is larger).
fn read_file(reader: &mut impl Read, max_file_bytes: u64) -> io::Result<Option<Vec<u8>>> {
    let mut kept = Vec::new();
    let mut too_large = false;
    let mut buffer = [0u8; 16 * 1024];
    loop {
        let read = match reader.read(&mut buffer) {
            Ok(0) => break,
            Ok(read) => read,
            Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
            Err(error) => return Err(error),
        };
        if too_large {
            continue;
        }
        if (kept.len() + read) as u64 > max_file_bytes {
            too_large = true;
            kept = Vec::new();
        } else {
            kept.extend_from_slice(&buffer[..read]);
        }
    }
    Ok((!too_large).then_some(kept))
}

fn zip_entries(
    bytes: &[u8],
    limits: Limits,
    unpacked: &Cell<u64>,
) -> Result<Vec<Entry>, UpstreamError> {
    let not_zip = |error: zip::result::ZipError| {
        invalid(format!("The plugin archive is not a valid zip: {error}"))
    };
    // `ZipArchive::new` reserves room for, then parses, every entry the end record declares
    // (zip 2.6 `read.rs`, `read_central_header`), bounding the count only by the archive's own
    // size — some 450,000 entries in 20 MiB. The limit applies before it does.
    if declared_zip_entries(bytes).is_some_and(|declared| declared > limits.max_files as u64) {
        return Err(too_many_files(limits));
    }
    let mut archive = zip::ZipArchive::new(Cursor::new(bytes)).map_err(not_zip)?;
    // The crate falls back on an earlier end record when the last one is inconsistent.
    if archive.len() > limits.max_files {
        return Err(too_many_files(limits));
    }
    let mut entries = Vec::with_capacity(archive.len());
    for index in 0..archive.len() {
        let file = archive.by_index(index).map_err(not_zip)?;
        let path = safe_path(file.name())?;
        const FILE_TYPE: u32 = 0o170_000;
        const SYMLINK: u32 = 0o120_000;
        if file
            .unix_mode()
            .is_some_and(|mode| mode & FILE_TYPE == SYMLINK)
        {
            return Err(invalid(format!("The plugin archive has a link: {path}")));
        }
        if file.is_dir() {
            entries.push(Entry::Folder(format!("{path}/")));
            continue;
        }
        let mut reader = Counted {
            inner: file,
            count: unpacked,
            limit: limits.max_unpacked_bytes,
        };
        let contents = read_file(&mut reader, limits.max_file_bytes).map_err(|error| {
            if unpacked.get() > limits.max_unpacked_bytes {
                too_large_unpacked(limits)
            } else {
                invalid(format!("The plugin archive is not a valid zip: {error}"))
            }
        })?;
        entries.push(Entry::File { path, contents });
    }
    Ok(entries)
}

/// The number of entries a zip's end of central directory declares — the greatest of its counts,
/// and of its zip64 record's when a zip64 locator precedes it — or `None` without one. The end
/// record is found as `zip` finds it: the last signature whose comment fits in the archive.
fn declared_zip_entries(bytes: &[u8]) -> Option<u64> {
    const END: &[u8] = b"PK\x05\x06";
    const END_LEN: usize = 22;
    const LOCATOR: &[u8] = b"PK\x06\x07";
    const LOCATOR_LEN: usize = 20;
    const END64: &[u8] = b"PK\x06\x06";
    let field = |at: usize, len: usize| {
        bytes.get(at..at + len).map(|field| {
            field
                .iter()
                .rev()
                .fold(0u64, |value, byte| value << 8 | u64::from(*byte))
        })
    };
    let end = (0..=bytes.len().checked_sub(END_LEN)?).rev().find(|&at| {
        bytes[at..].starts_with(END)
            && field(at + 20, 2)
                .is_some_and(|comment| at + END_LEN + comment as usize <= bytes.len())
    })?;
    // Entries on this disk, and in all.
    let declared = field(end + 8, 2)?.max(field(end + 10, 2)?);
    let zip64 = end
        .checked_sub(LOCATOR_LEN)
        .filter(|&locator| bytes[locator..].starts_with(LOCATOR))
        .and_then(|locator| {
            // The record is where the locator says, or after it when junk was prepended.
            let stated = usize::try_from(field(locator + 8, 8)?).ok()?;
            let record = stated
                + bytes
                    .get(stated..locator)?
                    .windows(END64.len())
                    .position(|window| window == END64)?;
            Some(field(record + 24, 8)?.max(field(record + 32, 8)?))
        });
    Some(declared.max(zip64.unwrap_or_default()))
}

/// Every decompressed byte of the tar stream counts against the limit, headers and skipped
/// entries included, so no entry kind can smuggle a bomb past it.
fn tar_entries(
    bytes: &[u8],
    limits: Limits,
    unpacked: &Cell<u64>,
) -> Result<Vec<Entry>, UpstreamError> {
    let mut archive = tar::Archive::new(Counted {
        inner: flate2::read::MultiGzDecoder::new(bytes),
        count: unpacked,
        limit: limits.max_unpacked_bytes,
    });
    let unreadable = |error: io::Error| {
        if unpacked.get() > limits.max_unpacked_bytes {
            too_large_unpacked(limits)
        } else {
            invalid(format!("The plugin archive is not a valid tgz: {error}"))
        }
    };
    let mut entries = Vec::new();
    let mut count = 0usize;
    for entry in archive.entries().map_err(unreadable)? {
        let mut entry = entry.map_err(unreadable)?;
        let kind = entry.header().entry_type();
        if kind.is_pax_global_extensions() {
            continue;
        }
        count += 1;
        if count > limits.max_files {
            return Err(too_many_files(limits));
        }
        let path = safe_path(&String::from_utf8_lossy(&entry.path_bytes()))?;
        if kind.is_symlink() || kind.is_hard_link() {
            return Err(invalid(format!("The plugin archive has a link: {path}")));
        }
        if kind.is_dir() {
            entries.push(Entry::Folder(format!("{path}/")));
        } else if kind.is_file() {
            let contents = read_file(&mut entry, limits.max_file_bytes).map_err(unreadable)?;
            entries.push(Entry::File { path, contents });
        }
    }
    Ok(entries)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn safe_paths_keep_normal_components_and_refuse_escapes() {
        assert_eq!(
            safe_path("repo-abc/./src/index.ts").unwrap(),
            "repo-abc/src/index.ts"
        );
        assert_eq!(safe_path("dir\\file.js").unwrap(), "dir/file.js");
        for bad in [
            "../evil.js",
            "a/../../b",
            "/etc/passwd",
            "\\evil",
            "C:/evil.js",
            "C:\\x",
        ] {
            assert!(
                matches!(safe_path(bad), Err(UpstreamError::InvalidArchive(_))),
                "{bad}"
            );
        }
    }

    #[test]
    fn a_subdirectory_is_appended_to_the_root_without_empty_parts() {
        assert_eq!(
            plugin_root("repo/".into(), Some("/plugins//geo/")),
            "repo/plugins/geo/"
        );
        assert_eq!(plugin_root(String::new(), None), "");
    }

    #[test]
    fn files_over_the_size_limit_are_read_through_but_not_kept() {
        let mut small = Cursor::new(b"abc".to_vec());
        assert_eq!(read_file(&mut small, 3).unwrap(), Some(b"abc".to_vec()));
        let mut large = Cursor::new(b"abcd".to_vec());
        assert_eq!(read_file(&mut large, 3).unwrap(), None);
        assert_eq!(large.position(), 4);
    }
}

//! Archives the reader refuses — too large, too many entries, unpacking too far, escaping their
//! root, holding links, or no archive at all — and files it leaves out without refusing.

use adapters::UpstreamSettings;
use domain::plugin::{PluginArchive, PluginUpstream, UpstreamError};

use super::archives::{BINARY, Member, github_zip, tgz, zip, zip_with_symlink};
use super::fake::{Fake, Reply};
use super::{names, upstream};

const ARCHIVE: &str = "/a/b/archive/v1.zip";

/// Serves `bytes` as GitHub's archive of `a/b` at `v1` and downloads it with `settings`.
pub(super) async fn download(
    bytes: Vec<u8>,
    reply: fn(Vec<u8>) -> Reply,
    settings: impl FnOnce(UpstreamSettings) -> UpstreamSettings,
) -> Result<PluginArchive, UpstreamError> {
    let fake = Fake::start().await;
    fake.route(ARCHIVE, reply(bytes));
    let upstream = upstream(settings(super::settings(&fake)));
    upstream
        .download(&super::url("https://github.com/a/b"), "v1")
        .await
}

pub(super) fn invalid(result: Result<PluginArchive, UpstreamError>) -> String {
    match result {
        Err(UpstreamError::InvalidArchive(message)) => message,
        other => panic!("expected InvalidArchive, got {other:?}"),
    }
}

fn plugin_zip() -> Vec<u8> {
    github_zip(
        "b-v1",
        &[("plugin.json", b"{}"), ("index.ts", &[b'x'; 4096])],
    )
}

#[tokio::test]
async fn an_archive_over_the_size_limit_is_refused_by_its_content_length() {
    let bytes = plugin_zip();
    let limit = bytes.len() as u64 - 1;

    let result = download(bytes, Reply::bytes, |settings| UpstreamSettings {
        max_archive_bytes: limit,
        ..settings
    })
    .await;

    assert_eq!(
        invalid(result),
        format!("The plugin archive is larger than {limit} bytes")
    );
}

#[tokio::test]
async fn an_archive_without_a_length_is_refused_once_it_streams_past_the_limit() {
    let bytes = [plugin_zip(), vec![0; 256 * 1024]].concat();

    let result = download(
        bytes,
        |bytes| Reply::bytes(bytes).without_length(),
        |settings| UpstreamSettings {
            max_archive_bytes: 64 * 1024,
            ..settings
        },
    )
    .await;

    assert_eq!(
        invalid(result),
        "The plugin archive is larger than 65536 bytes"
    );
}

#[tokio::test]
async fn an_archive_just_within_the_size_limit_is_read() {
    let bytes = plugin_zip();
    let limit = bytes.len() as u64;

    let archive = download(bytes, Reply::bytes, |settings| UpstreamSettings {
        max_archive_bytes: limit,
        ..settings
    })
    .await
    .unwrap();

    assert_eq!(names(&archive.files), ["index.ts", "plugin.json"]);
}

#[tokio::test]
async fn a_zip_entry_climbing_out_with_dot_dot_is_refused() {
    let bytes = zip(&[
        ("b-v1/", b""),
        ("b-v1/plugin.json", b"{}"),
        ("../evil.js", b"pwned"),
    ]);

    let result = download(bytes, Reply::bytes, |settings| settings).await;

    assert_eq!(
        invalid(result),
        "The plugin archive has an entry outside its root: ../evil.js"
    );
}

#[tokio::test]
async fn zip_entries_with_an_absolute_path_or_a_drive_are_refused() {
    for name in ["/etc/cron.d/evil", "C:\\Windows\\evil.js"] {
        let bytes = zip(&[("plugin.json", b"{}"), (name, b"pwned")]);

        let result = download(bytes, Reply::bytes, |settings| settings).await;

        assert_eq!(
            invalid(result),
            format!("The plugin archive has an entry outside its root: {name}")
        );
    }
}

#[tokio::test]
async fn a_zip_symlink_is_refused() {
    let bytes = zip_with_symlink(
        &[("b-v1/", b""), ("b-v1/plugin.json", b"{}")],
        "b-v1/index.js",
        "/etc/passwd",
    );

    let result = download(bytes, Reply::bytes, |settings| settings).await;

    assert_eq!(
        invalid(result),
        "The plugin archive has a link: b-v1/index.js"
    );
}

#[tokio::test]
async fn tar_symlinks_and_hard_links_are_refused() {
    for (member, name) in [
        (Member::Symlink("/etc/passwd"), "symlink"),
        (Member::HardLink("package/plugin.json"), "hard link"),
    ] {
        let bytes = tgz(&[
            ("package/plugin.json", Member::File(b"{}")),
            ("package/index.js", member),
        ]);

        let result = download(bytes, Reply::bytes, |settings| settings).await;

        assert_eq!(
            invalid(result),
            "The plugin archive has a link: package/index.js",
            "{name}"
        );
    }
}

#[tokio::test]
async fn archives_with_more_entries_than_the_limit_are_refused() {
    let contents: Vec<String> = (0..5).map(|i| format!("file {i}")).collect();
    let paths: Vec<String> = (0..5).map(|i| format!("package/{i}.js")).collect();
    let zipped: Vec<(&str, &[u8])> = paths
        .iter()
        .zip(&contents)
        .map(|(path, contents)| (path.as_str(), contents.as_bytes()))
        .collect();
    let tarred: Vec<(&str, Member<'_>)> = paths
        .iter()
        .zip(&contents)
        .map(|(path, contents)| (path.as_str(), Member::File(contents.as_bytes())))
        .collect();

    for bytes in [zip(&zipped), tgz(&tarred)] {
        let result = download(bytes, Reply::bytes, |settings| UpstreamSettings {
            max_files: 4,
            ..settings
        })
        .await;

        assert_eq!(
            invalid(result),
            "The plugin has more than 4 files and folders"
        );
    }
}

#[tokio::test]
async fn archives_unpacking_past_the_limit_are_refused_whatever_their_headers_say() {
    let zeros = vec![0u8; 1024 * 1024];
    let zipped = zip(&[
        ("package/plugin.json", b"{}"),
        ("package/zeros.bin", &zeros),
    ]);
    let tarred = tgz(&[
        ("package/plugin.json", Member::File(b"{}")),
        ("package/zeros.bin", Member::File(&zeros)),
    ]);

    for bytes in [zipped, tarred] {
        assert!(bytes.len() < 64 * 1024, "the archive compresses the zeros");
        let result = download(bytes, Reply::bytes, |settings| UpstreamSettings {
            max_unpacked_bytes: 256 * 1024,
            ..settings
        })
        .await;

        assert_eq!(
            invalid(result),
            "The plugin archive unpacks to more than 262144 bytes"
        );
    }
}

#[tokio::test]
async fn bytes_that_are_neither_zip_nor_tgz_are_refused() {
    for bytes in [
        b"<html>Not an archive</html>".to_vec(),
        b"PK garbage".to_vec(),
    ] {
        let result = download(bytes, Reply::bytes, |settings| settings).await;

        let message = invalid(result);
        assert!(
            message == "The plugin archive is neither a zip nor a gzip'd tar file"
                || message.starts_with("The plugin archive is not a valid zip"),
            "{message}"
        );
    }
    let gzip_of_text = {
        use std::io::Write;
        let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        encoder.write_all(&[b'x'; 2048]).unwrap();
        encoder.finish().unwrap()
    };
    let result = download(gzip_of_text, Reply::bytes, |settings| settings).await;
    assert!(
        invalid(result).starts_with("The plugin archive is not a valid tgz"),
        "a gzip of no tar is refused"
    );
}

#[tokio::test]
async fn binary_and_oversized_files_are_left_out_without_refusing_the_archive() {
    let big = vec![b'a'; 2048];
    let bytes = tgz(&[
        ("package/", Member::Folder),
        ("package/plugin.json", Member::File(b"{}")),
        ("package/logo.png", Member::File(BINARY)),
        // Valid UTF-8, but U+0000 makes it binary (and PostgreSQL's text refuses it).
        ("package/data.js", Member::File(b"export const a = '\0'")),
        ("package/dist/bundle.js", Member::File(&big)),
        ("package/index.ts", Member::File(b"export {}")),
    ]);

    let archive = download(bytes, Reply::bytes, |settings| UpstreamSettings {
        max_file_bytes: 1024,
        ..settings
    })
    .await
    .unwrap();

    assert_eq!(names(&archive.files), ["index.ts", "plugin.json"]);
    assert_eq!(archive.files["index.ts"], "export {}");
}

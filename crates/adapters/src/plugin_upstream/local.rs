//! Reading a `file:` plugin from the local plugins directory, never outside it and never
//! through a link.

use std::collections::BTreeMap;
use std::fs::{self, File};
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use domain::plugin::{PluginFiles, UpstreamError};

use super::archive::{Limits, invalid, too_many_files};
use super::source_text;

/// Folders never holding plugin source, yet often thousands of files (and links): skipped so a
/// plugin under development installs without hitting the file limit.
const SKIPPED_FOLDERS: [&str; 2] = ["node_modules", ".git"];

/// The text files of `root/path`, by path relative to it. Links inside are skipped, not
/// followed; `node_modules` and `.git` are skipped.
///
/// # Errors
/// `InvalidArchive` for a path leaving `root`, a missing folder or a limit broken;
/// `Unavailable` when `root` itself cannot be read.
pub(crate) fn read_plugin_dir(
    root: &Path,
    path: &str,
    limits: Limits,
) -> Result<PluginFiles, UpstreamError> {
    let root = root.canonicalize().map_err(|_| {
        UpstreamError::Unavailable("The local plugins directory cannot be read".into())
    })?;
    let dir = match root.join(path).canonicalize() {
        Ok(dir) => dir,
        Err(error) if error.kind() == io::ErrorKind::NotFound => {
            return Err(invalid(format!(
                "The local plugin {path} does not exist in the local plugins directory"
            )));
        }
        Err(_) => {
            return Err(UpstreamError::Unavailable(format!(
                "The local plugin {path} cannot be read"
            )));
        }
    };
    if !dir.starts_with(&root) {
        return Err(invalid(format!(
            "The local plugin {path} is outside the local plugins directory"
        )));
    }
    if !dir.is_dir() {
        return Err(invalid(format!("The local plugin {path} is not a folder")));
    }
    let unreadable =
        |_| UpstreamError::Unavailable(format!("The local plugin {path} cannot be read"));
    let mut files = BTreeMap::new();
    let (mut count, mut total) = (0usize, 0u64);
    let mut pending: Vec<PathBuf> = vec![dir.clone()];
    while let Some(current) = pending.pop() {
        for entry in fs::read_dir(&current).map_err(unreadable)? {
            let entry = entry.map_err(unreadable)?;
            let kind = entry.file_type().map_err(unreadable)?;
            if kind.is_symlink() {
                continue;
            }
            if kind.is_dir()
                && SKIPPED_FOLDERS.contains(&entry.file_name().to_string_lossy().as_ref())
            {
                continue;
            }
            count += 1;
            if count > limits.max_files {
                return Err(too_many_files(limits));
            }
            if kind.is_dir() {
                pending.push(entry.path());
                continue;
            }
            if !kind.is_file() {
                continue;
            }
            let (read, contents) =
                read_file(&entry.path(), limits.max_file_bytes).map_err(unreadable)?;
            total = total.saturating_add(read);
            if total > limits.max_unpacked_bytes {
                return Err(invalid(format!(
                    "The local plugin is larger than {} bytes",
                    limits.max_unpacked_bytes
                )));
            }
            let Some(text) = contents.and_then(source_text) else {
                continue;
            };
            if let Ok(relative) = entry.path().strip_prefix(&dir) {
                files.insert(relative.to_string_lossy().replace('\\', "/"), text);
            }
        }
    }
    Ok(files)
}

/// A file's size, and its bytes when at most `max_file_bytes` (larger files are not read).
fn read_file(path: &Path, max_file_bytes: u64) -> io::Result<(u64, Option<Vec<u8>>)> {
    let file = File::open(path)?;
    let size = file.metadata()?.len();
    if size > max_file_bytes {
        return Ok((size, None));
    }
    let mut contents = Vec::new();
    file.take(max_file_bytes + 1).read_to_end(&mut contents)?;
    let read = contents.len() as u64;
    Ok((read, (read <= max_file_bytes).then_some(contents)))
}

//! Reading a plugin out of its files (an archive or a local directory): the manifest, the files
//! Burrow keeps as source, and what the main file exports.

use super::{Manifest, PluginFiles, SourceChanges};
use crate::error::{DomainError, ValidationError};

/// The source files an install keeps, under these names whatever the archive called them.
pub(crate) const MAIN_FILE: &str = "index.ts";
pub(crate) const MANIFEST_FILE: &str = "plugin.json";
const FRONTEND_FILE: &str = "frontend.tsx";
const SITE_FILE: &str = "site.ts";

/// A plugin read from its files.
#[derive(Debug, Clone)]
pub(crate) struct Extracted {
    pub manifest: Manifest,
    /// `plugin.json`, `index.ts`, `frontend.tsx`, `site.ts`: set when present, deleted when not.
    pub source: SourceChanges,
    /// The main file's original name and source, for reading its capabilities.
    pub main: Option<(String, String)>,
}

/// Reads the manifest and the kept files.
///
/// # Errors
/// `Invalid` for a missing or invalid `plugin.json`, a `posthogVersion` this server does not
/// satisfy, or no main file.
pub(crate) fn extract(
    files: &PluginFiles,
    running: &semver::Version,
) -> Result<Extracted, DomainError> {
    let text = files.get(MANIFEST_FILE).ok_or_else(|| {
        ValidationError::invalid_input("Could not find plugin.json in the plugin")
    })?;
    let manifest = Manifest::parse(text, None)?;
    manifest.check_posthog_version(running)?;
    let main = manifest
        .main_file_candidates()
        .into_iter()
        .find_map(|name| {
            files
                .get(name)
                .map(|source| (name.to_owned(), source.clone()))
        });
    let frontend = files.get(FRONTEND_FILE).cloned();
    let site = files.get(SITE_FILE).cloned();
    if main.is_none() && frontend.is_none() && site.is_none() {
        let names = manifest.main_file_candidates().join(" or ");
        return Err(ValidationError::invalid_input(format!(
            "Could not find main file {names} in plugin {}",
            manifest.name
        ))
        .into());
    }
    let source = SourceChanges::from([
        (MANIFEST_FILE.to_owned(), Some(text.clone())),
        (
            MAIN_FILE.to_owned(),
            main.as_ref().map(|(_, source)| source.clone()),
        ),
        (FRONTEND_FILE.to_owned(), frontend),
        (SITE_FILE.to_owned(), site),
    ]);
    Ok(Extracted {
        manifest,
        source,
        main,
    })
}

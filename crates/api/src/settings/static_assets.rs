//! Where posthog-js's own `dist/` files are (`BURROW_STATIC_DIR`), served at `/static/…` by
//! `sdk/static_assets.rs`. The directory may hold either layout, told apart once at startup
//! ([`StaticAssets::open`]):
//! - what `npm install posthog-js` leaves: the package root (`node_modules/posthog-js`, holding
//!   `package.json`, files in its `dist/`) or its `dist/` itself (holding `array.js`, the
//!   version read from `../package.json`) — one version, the one `package.json` names;
//! - anything else: one directory per posthog-js version, named by its semver
//!   (`<dir>/1.449.2/surveys.js`; `cargo xtask dev` fills it from the npm registry), so several
//!   versions can be served side by side.

use std::io;
use std::path::{Path, PathBuf};

/// Where each posthog-js version's files are.
#[derive(Debug, Clone)]
pub enum StaticAssets {
    /// One directory per version, named by its semver; versions may be added while running.
    Versions(PathBuf),
    /// One npm-installed version: its `dist/` directory and the version its `package.json` names.
    Package { dist: PathBuf, version: String },
}

impl StaticAssets {
    /// Tells the layout of `dir` apart (see the module's documentation). A directory that does
    /// not exist yet is taken as the per-version layout, to be filled later.
    ///
    /// # Errors
    /// An npm layout whose `package.json` cannot be read or names no semver `version`: it would
    /// otherwise answer 404 for every file without saying why.
    pub fn open(dir: &Path) -> io::Result<Self> {
        let (dist, package_json) = if dir.join("package.json").is_file() {
            (dir.join("dist"), dir.join("package.json"))
        } else if dir.join("array.js").is_file() {
            (dir.to_path_buf(), dir.join("..").join("package.json"))
        } else {
            return Ok(Self::Versions(dir.to_path_buf()));
        };
        let unreadable = |reason: &str| {
            io::Error::new(
                io::ErrorKind::InvalidData,
                format!("{}: {reason}", package_json.display()),
            )
        };
        let package: serde_json::Value = serde_json::from_slice(&std::fs::read(&package_json)?)
            .map_err(|_| unreadable("not JSON"))?;
        let version = package
            .get("version")
            .and_then(serde_json::Value::as_str)
            .filter(|version| semver::Version::parse(version).is_ok())
            .ok_or_else(|| unreadable("no semver `version`"))?;
        Ok(Self::Package {
            dist,
            version: version.to_owned(),
        })
    }

    /// The directory of `version`'s files, when `version` is one Burrow may have.
    pub(crate) fn version_dir(&self, version: &str) -> Option<PathBuf> {
        match self {
            Self::Versions(root) => semver::Version::parse(version)
                .is_ok()
                .then(|| root.join(version)),
            Self::Package {
                dist,
                version: installed,
            } => (version == installed).then(|| dist.clone()),
        }
    }

    /// The directory of the version served when none is asked for: the newest one.
    pub(crate) async fn newest_dir(&self) -> Option<PathBuf> {
        match self {
            Self::Versions(root) => newest_version(root).await.map(|version| root.join(version)),
            Self::Package { dist, .. } => Some(dist.clone()),
        }
    }
}

/// The highest semver-named directory in `dir`.
async fn newest_version(dir: &Path) -> Option<String> {
    let mut entries = tokio::fs::read_dir(dir).await.ok()?;
    let mut newest: Option<semver::Version> = None;
    while let Ok(Some(entry)) = entries.next_entry().await {
        let Some(version) = entry
            .file_name()
            .to_str()
            .and_then(|name| semver::Version::parse(name).ok())
        else {
            continue;
        };
        if newest.as_ref().is_none_or(|known| &version > known) {
            newest = Some(version);
        }
    }
    newest.map(|version| version.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_npm_layout_without_a_semver_version_is_refused_at_startup_with_the_file_named() {
        let package = std::env::temp_dir().join(format!("burrow-npm-{}", uuid::Uuid::new_v4()));
        std::fs::create_dir_all(package.join("dist")).unwrap();
        std::fs::write(package.join("dist").join("array.js"), "").unwrap();
        std::fs::write(package.join("package.json"), r#"{"version": "latest"}"#).unwrap();

        for dir in [package.clone(), package.join("dist")] {
            let error = StaticAssets::open(&dir).unwrap_err().to_string();
            assert!(
                error.contains("package.json: no semver `version`"),
                "{error}"
            );
        }
        let _ = std::fs::remove_dir_all(&package);
    }

    #[test]
    fn a_directory_without_package_json_or_array_js_holds_one_directory_per_version() {
        let root = std::env::temp_dir().join(format!("burrow-none-{}", uuid::Uuid::new_v4()));
        let assets = StaticAssets::open(&root).unwrap();
        assert!(matches!(&assets, StaticAssets::Versions(dir) if dir == &root));
        assert_eq!(assets.version_dir("1.2.3"), Some(root.join("1.2.3")));
        assert_eq!(assets.version_dir("../etc"), None);
    }
}

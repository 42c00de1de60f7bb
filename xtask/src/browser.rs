//! posthog-js and playwright-core from the npm registry, for the browser tests and `dev`:
//! `target/browser/node_modules` holds both packages, and `target/browser/static` holds
//! posthog-js's `dist/` in `BURROW_STATIC_DIR`'s per-version layout (one directory per version).

use std::path::{Path, PathBuf};

use anyhow::Context as _;

use crate::{npm, target_dir};

/// The web SDK the browser tests load, and whose bundles `burrow serve` hands out in `dev`.
const POSTHOG_JS: &str = "posthog-js@1.449.2";
/// Drives the system's Chromium (`chromium`, or `BURROW_CHROMIUM`); no browser download.
const PLAYWRIGHT_CORE: &str = "playwright-core@1.65.1";

/// Installs posthog-js and playwright-core into `target/browser` unless those versions are
/// there already, and fills its `static/` directory; returns `target/browser`.
pub(crate) fn ensure() -> anyhow::Result<PathBuf> {
    let dir = target_dir().join("browser");
    npm::ensure_installed(
        &dir,
        &[POSTHOG_JS, PLAYWRIGHT_CORE],
        "posthog-js and playwright-core",
    )?;
    fill_static(&dir)?;
    Ok(dir)
}

/// The directory for `BURROW_STATIC_DIR`: `target/browser/static`, holding
/// `<version>/array.js`, `<version>/surveys.js`, … copied from the installed posthog-js.
pub(crate) fn static_dir() -> anyhow::Result<PathBuf> {
    Ok(ensure()?.join("static"))
}

/// Copies posthog-js's `dist/` to `static/<version>/` unless that copy is complete already.
fn fill_static(dir: &Path) -> anyhow::Result<()> {
    let version = POSTHOG_JS
        .rsplit_once('@')
        .map_or("", |(_, version)| version);
    let dist = dir.join("node_modules/posthog-js/dist");
    let target = dir.join("static").join(version);
    let complete = ["array.js", "array.full.js", "surveys.js"]
        .iter()
        .all(|file| target.join(file).is_file());
    if complete {
        return Ok(());
    }
    std::fs::create_dir_all(&target)?;
    for entry in std::fs::read_dir(&dist).with_context(|| format!("reading {}", dist.display()))? {
        let entry = entry?;
        if entry.file_type()?.is_file() {
            std::fs::copy(entry.path(), target.join(entry.file_name()))
                .with_context(|| format!("copying {}", entry.path().display()))?;
        }
    }
    Ok(())
}

//! posthog-js and playwright-core from the npm registry, for the browser tests and `dev`:
//! `target/browser/node_modules` holds both packages, and `target/browser/static` holds
//! posthog-js's `dist/` in `BURROW_STATIC_DIR`'s per-version layout (one directory per version).

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context as _, bail};

use crate::{npm, target_dir};

/// The web SDK the browser tests load, and whose bundles `burrow serve` hands out in `dev`.
const POSTHOG_JS: &str = "posthog-js@1.449.2";
/// Drives the system's Chromium (`chromium`, or `BURROW_CHROMIUM`); no browser download. 1.61 is
/// the last release that runs on Node.js 18, Debian bookworm's (1.62 on require Node.js 20).
const PLAYWRIGHT_CORE: &str = "playwright-core@1.61.1";

/// Installs posthog-js and playwright-core into `target/browser` unless those versions are
/// there already, and fills its `static/` directory; returns `target/browser`.
pub(crate) fn ensure() -> anyhow::Result<PathBuf> {
    let dir = target_dir().join("browser");
    say_which_node()?;
    npm::ensure_installed(
        &dir,
        &[POSTHOG_JS, PLAYWRIGHT_CORE],
        "posthog-js and playwright-core",
    )?;
    fill_static(&dir)?;
    Ok(dir)
}

/// Says which Node.js will run the browser driver, and stops with advice when it is older than
/// playwright-core needs (a machine's own Node.js may predate Debian bookworm's).
fn say_which_node() -> anyhow::Result<()> {
    let output = Command::new("node")
        .arg("--version")
        .output()
        .context("running node --version")?;
    let version = String::from_utf8_lossy(&output.stdout).trim().to_owned();
    let major = version
        .trim_start_matches('v')
        .split('.')
        .next()
        .and_then(|major| major.parse::<u32>().ok());
    match major {
        Some(major) if major >= OLDEST_NODE => {
            eprintln!("xtask: the browser tests run on Node.js {version}");
            Ok(())
        }
        _ => bail!(
            "Node.js {version} is too old for {PLAYWRIGHT_CORE} (it needs {OLDEST_NODE} or later, \
             as Debian bookworm's nodejs package is)"
        ),
    }
}

/// The oldest Node.js major version [`PLAYWRIGHT_CORE`] runs on.
const OLDEST_NODE: u32 = 18;

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

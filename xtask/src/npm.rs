//! Packages from the npm registry, installed under `target/` for the tests that drive them.

use std::path::Path;
use std::process::Command;

use anyhow::Context as _;

use crate::{json_string, run};

/// Installs into `dir` (`npm install --prefix`) those of `packages` (`name@version`) that are not
/// there at that version; `what` names them in the error.
pub(crate) fn ensure_installed(dir: &Path, packages: &[&str], what: &str) -> anyhow::Result<()> {
    let missing: Vec<&str> = packages
        .iter()
        .copied()
        .filter(|package| !installed(dir, package))
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    std::fs::create_dir_all(dir)?;
    run(Command::new("npm")
        .args([
            "install",
            "--no-audit",
            "--no-fund",
            "--legacy-peer-deps",
            "--loglevel=error",
            "--prefix",
        ])
        .arg(dir)
        .args(&missing))
    .with_context(|| format!("installing {what} (needs node and npm)"))
}

/// Whether `package` (`name@version`, the name possibly scoped) is installed under `dir` at that
/// version.
fn installed(dir: &Path, package: &str) -> bool {
    let (name, version) = package.rsplit_once('@').unwrap_or((package, ""));
    let manifest = dir.join("node_modules").join(name).join("package.json");
    std::fs::read(manifest)
        .is_ok_and(|text| json_string(&text, "version").as_deref() == Some(version))
}

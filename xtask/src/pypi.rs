//! Packages from PyPI, each in its own venv under `target/` (the system's python is left alone),
//! for the tests and the fuzz run that drive them.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::Context as _;

use crate::run;

/// Installs `requirement` (`name==version`) into the venv at `venv` unless that version is there
/// already, creating the venv first when needed; returns the venv's python.
pub(crate) fn ensure_venv(venv: &Path, requirement: &str) -> anyhow::Result<PathBuf> {
    let python = venv.join("bin").join("python");
    let (name, version) = requirement.split_once("==").unwrap_or((requirement, ""));
    let installed = Command::new(&python)
        .args([
            "-c",
            &format!("import importlib.metadata as m; print(m.version('{name}'))"),
        ])
        .output()
        .is_ok_and(|output| String::from_utf8_lossy(&output.stdout).trim() == version);
    if !installed {
        if !python.is_file() {
            run(Command::new("python3").args(["-m", "venv"]).arg(venv))
                .with_context(|| format!("creating a venv for {name} (needs python3 with venv)"))?;
        }
        run(Command::new(&python).args([
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            requirement,
        ]))
        .with_context(|| format!("installing {name} (needs pip)"))?;
    }
    Ok(python)
}

//! The outside programs the bench drives (`wrk`, `pgbench`, `psql`), installed from Debian's
//! packages with apt-get when they are not on PATH.

use std::env;
use std::process::Command;

use anyhow::Context as _;

use crate::run;

/// Makes sure `program` is on PATH, installing Debian's `package` if it is not.
pub(super) fn ensure(program: &str, package: &str) -> anyhow::Result<()> {
    if on_path(program) {
        return Ok(());
    }
    eprintln!("xtask: {program} not found; installing Debian's {package}");
    run(&mut apt_get(&["update", "-qq"]))?;
    run(&mut apt_get(&["install", "-y", "-qq", package]))
        .with_context(|| format!("installing {package} (for {program})"))?;
    if !on_path(program) {
        anyhow::bail!("installed {package}, but {program} is still not on PATH");
    }
    Ok(())
}

fn on_path(program: &str) -> bool {
    env::var_os("PATH")
        .is_some_and(|paths| env::split_paths(&paths).any(|dir| dir.join(program).is_file()))
}

/// `apt-get …`, through `sudo` unless already root.
fn apt_get(args: &[&str]) -> Command {
    let root = Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|output| String::from_utf8_lossy(&output.stdout).trim() == "0");
    let mut command = if root {
        Command::new("apt-get")
    } else {
        let mut sudo = Command::new("sudo");
        sudo.arg("apt-get");
        sudo
    };
    command.args(args).env("DEBIAN_FRONTEND", "noninteractive");
    command
}

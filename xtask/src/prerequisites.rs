//! What `dev`, `test` and `bench` need from the machine, and installing what is missing through
//! Debian's package manager.
//!
//! Looking ([`Machine::probe`]) and deciding ([`plan`]) are kept apart from doing
//! ([`Plan::carry_out`]), so the decisions — what is missing, what gets installed, and how — are
//! unit-tested without installing anything. A machine that cannot install (not root, no usable
//! sudo, no apt-get) gets the exact command to run instead.

use std::env;
use std::io::IsTerminal as _;
use std::process::{Command, Stdio};

use anyhow::{Context as _, bail};

use crate::postgres::{answers, pg_binary};
use crate::run;

/// What a command of xtask is about to do, which decides what it needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Task {
    /// `cargo xtask dev`: a PostgreSQL, and npm for posthog-js (the demo page loads it).
    Dev,
    /// `cargo xtask test`: every tool some test drives.
    Test,
}

impl Task {
    fn command(self) -> &'static str {
        match self {
            Self::Dev => "cargo xtask dev",
            Self::Test => "cargo xtask test",
        }
    }

    fn requirements(self) -> &'static [Requirement] {
        match self {
            Self::Dev => DEV,
            Self::Test => TEST,
        }
    }
}

/// How this process may run the package manager.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Privilege {
    Root,
    /// `sudo` works without asking, or may ask on this terminal.
    Sudo,
    /// Neither: the user is told what to run.
    None,
}

/// What the machine has, as far as the tasks care.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Machine {
    /// A PostgreSQL answers at 127.0.0.1:5432, or `DATABASE_URL` names one.
    pub(crate) postgres_answers: bool,
    /// `initdb` and `pg_ctl`: a throwaway cluster can be started.
    pub(crate) postgres_server: bool,
    pub(crate) psql: bool,
    /// A Redis answers at 127.0.0.1:6379, or `BURROW_TEST_REDIS_URL` names one.
    pub(crate) redis_answers: bool,
    pub(crate) redis_server: bool,
    pub(crate) node_and_npm: bool,
    /// `python3 -m venv` makes a venv with pip (Debian ships that part in python3-venv).
    pub(crate) python_venv: bool,
    /// `chromium`, or the browser `BURROW_CHROMIUM` names.
    pub(crate) chromium: bool,
    /// `pg_autoctl`, pg_auto_failover's command.
    pub(crate) pg_auto_failover: bool,
    pub(crate) apt_get: bool,
    pub(crate) privilege: Privilege,
}

/// One thing a task needs: whether the machine has it, the Debian packages that provide it, and
/// why the task needs it (printed before installing).
struct Requirement {
    met: fn(&Machine) -> bool,
    packages: &'static [&'static str],
    why: &'static str,
}

const POSTGRES_SERVICE: Requirement = Requirement {
    met: |machine| machine.postgres_answers || machine.postgres_server,
    packages: &["postgresql"],
    why: "PostgreSQL keeps Burrow's data (none answers at 127.0.0.1:5432)",
};

const NODE: Requirement = Requirement {
    met: |machine| machine.node_and_npm,
    packages: &["nodejs", "npm"],
    why: "npm fetches posthog-js (which pages load from Burrow), PostHog's agent toolkit and \
          playwright-core from the npm registry",
};

const DEV: &[Requirement] = &[POSTGRES_SERVICE, NODE];

const TEST: &[Requirement] = &[
    Requirement {
        met: |machine| machine.postgres_server,
        packages: &["postgresql"],
        why: "the tests need PostgreSQL's server programs (initdb, pg_ctl): the outage test runs \
              a PostgreSQL of its own",
    },
    Requirement {
        met: |machine| machine.psql,
        packages: &["postgresql-client"],
        why: "psql drops databases left by earlier test runs and seeds the fuzz run",
    },
    Requirement {
        met: |machine| machine.redis_answers || machine.redis_server,
        packages: &["redis-server"],
        why: "the rate-limit tests share counters between two nodes through Redis",
    },
    NODE,
    Requirement {
        met: |machine| machine.python_venv,
        packages: &["python3", "python3-venv"],
        why: "posthog-python, standardwebhooks and schemathesis are installed from PyPI into venvs",
    },
    Requirement {
        met: |machine| machine.chromium,
        // Fonts are only recommended by Chromium, which we install without recommends.
        packages: &["chromium", "fonts-liberation"],
        why: "the browser tests drive Debian's Chromium",
    },
    Requirement {
        met: |machine| machine.pg_auto_failover,
        // Built for bookworm's PostgreSQL 15, which `postgresql` installs there.
        packages: &["postgresql-15-auto-failover"],
        why: "the failover test runs a highly available PostgreSQL with pg_auto_failover",
    },
];

/// What to do about a task's needs.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Plan {
    /// Everything is there.
    Ready,
    /// Install `packages` with apt-get (through sudo when `sudo`); `reasons` say why, one line
    /// each.
    Install {
        packages: Vec<&'static str>,
        reasons: Vec<&'static str>,
        sudo: bool,
        /// PostgreSQL gets installed where none answered: Debian starts a cluster with password
        /// auth, which must be stopped so xtask starts its own trust-auth one.
        stop_debian_cluster: bool,
    },
    /// This process cannot install: the message says what is missing and the command to run.
    Stop(String),
}

/// Decides what `task` needs to install on `machine`.
pub(crate) fn plan(task: Task, machine: &Machine) -> Plan {
    let missing: Vec<&Requirement> = task
        .requirements()
        .iter()
        .filter(|requirement| !(requirement.met)(machine))
        .collect();
    if missing.is_empty() {
        return Plan::Ready;
    }
    let mut packages: Vec<&'static str> = Vec::new();
    for package in missing.iter().flat_map(|requirement| requirement.packages) {
        if !packages.contains(package) {
            packages.push(package);
        }
    }
    let reasons: Vec<&'static str> = missing.iter().map(|requirement| requirement.why).collect();
    if !machine.apt_get {
        return Plan::Stop(format!(
            "{} needs what this machine lacks:\n{}\nInstall them with your system's package \
             manager (Debian's packages: {}), then run `{}` again.",
            task.command(),
            bullets(&reasons),
            packages.join(" "),
            task.command()
        ));
    }
    match machine.privilege {
        Privilege::None => Plan::Stop(format!(
            "{} needs what this machine lacks:\n{}\nInstall them (as root, or with sudo):\n\n    \
             sudo apt-get update && sudo apt-get install -y {}\n\nthen run `{}` again.",
            task.command(),
            bullets(&reasons),
            packages.join(" "),
            task.command()
        )),
        privilege => Plan::Install {
            stop_debian_cluster: packages.contains(&"postgresql") && !machine.postgres_answers,
            packages,
            reasons,
            sudo: privilege == Privilege::Sudo,
        },
    }
}

fn bullets(lines: &[&str]) -> String {
    lines
        .iter()
        .map(|line| format!("  - {line}"))
        .collect::<Vec<_>>()
        .join("\n")
}

impl Plan {
    /// Installs what the plan names (saying what and why first), or fails with its message.
    pub(crate) fn carry_out(self) -> anyhow::Result<()> {
        match self {
            Self::Ready => Ok(()),
            Self::Stop(message) => bail!(message),
            Self::Install {
                packages,
                reasons,
                sudo,
                stop_debian_cluster,
            } => {
                eprintln!(
                    "xtask: installing {} from Debian's packages:",
                    packages.join(" ")
                );
                eprintln!("{}", bullets(&reasons));
                apt_install(&packages, sudo)?;
                if stop_debian_cluster {
                    stop_debian_clusters(sudo);
                }
                Ok(())
            }
        }
    }
}

/// Makes sure the machine has what `task` needs, installing it when this process may.
pub(crate) fn ensure(task: Task) -> anyhow::Result<()> {
    let plan = plan(task, &Machine::probe());
    if plan == Plan::Ready {
        return Ok(());
    }
    plan.carry_out()?;
    // Say plainly if something is still missing after installing.
    match self::plan(task, &Machine::probe()) {
        Plan::Ready => Ok(()),
        _ => bail!(
            "{} still lacks what it needs after installing; see the messages above",
            task.command()
        ),
    }
}

/// Makes sure `program` is on PATH, installing Debian's `package` (for `why`) if it is not.
pub(crate) fn ensure_program(program: &str, package: &str, why: &str) -> anyhow::Result<()> {
    if on_path(program) {
        return Ok(());
    }
    let privilege = Privilege::probe();
    if privilege == Privilege::None || !on_path("apt-get") {
        bail!(
            "{program} is missing ({why}); install it (Debian: sudo apt-get install -y {package})"
        );
    }
    eprintln!("xtask: installing Debian's {package}: {why}");
    apt_install(&[package], privilege == Privilege::Sudo)?;
    if !on_path(program) {
        bail!("installed {package}, but {program} is still not on PATH");
    }
    Ok(())
}

/// `apt-get install` of `packages` and what they depend on, without the packages they only
/// recommend (daemons, mail servers and the like Burrow never uses); a line before each step,
/// dpkg's own progress left out, its errors not.
fn apt_install(packages: &[&str], sudo: bool) -> anyhow::Result<()> {
    eprintln!("xtask: apt-get update (reading Debian's package lists)");
    run(apt_get(sudo, &["update", "-qq"]).stdout(Stdio::null()))?;
    eprintln!(
        "xtask: apt-get install {} (with dependencies, without recommends; a minute or two)",
        packages.join(" ")
    );
    run(
        apt_get(sudo, &["install", "-y", "-qq", "--no-install-recommends"])
            .args(packages)
            .stdout(Stdio::null()),
    )
    .with_context(|| format!("installing {}", packages.join(" ")))
}

/// `apt-get …`, through `sudo` when asked, without questions.
fn apt_get(sudo: bool, args: &[&str]) -> Command {
    let mut command = if sudo {
        let mut command = Command::new("sudo");
        command.args(["env", "DEBIAN_FRONTEND=noninteractive", "apt-get"]);
        command
    } else {
        let mut command = Command::new("apt-get");
        command.env("DEBIAN_FRONTEND", "noninteractive");
        command
    };
    command.args(args);
    command
}

/// Stops the clusters Debian's postgresql package started (with password auth), so that
/// `postgres::ensure` starts its own trust-auth cluster. Best effort: nothing to stop is fine.
fn stop_debian_clusters(sudo: bool) {
    let Ok(list) = Command::new("pg_lsclusters").arg("--no-header").output() else {
        return;
    };
    for line in String::from_utf8_lossy(&list.stdout).lines() {
        let mut fields = line.split_whitespace();
        let (Some(version), Some(cluster)) = (fields.next(), fields.next()) else {
            continue;
        };
        eprintln!(
            "xtask: stopping Debian's PostgreSQL cluster {version}/{cluster} (password auth)"
        );
        let mut stop = if sudo {
            let mut command = Command::new("sudo");
            command.arg("pg_ctlcluster");
            command
        } else {
            Command::new("pg_ctlcluster")
        };
        let _ = stop
            .args(["--skip-systemctl-redirect", version, cluster, "stop"])
            .status();
    }
}

impl Machine {
    /// Looks at this machine.
    pub(crate) fn probe() -> Self {
        Self {
            postgres_answers: env::var_os("DATABASE_URL").is_some() || answers("127.0.0.1", 5432),
            postgres_server: pg_binary("initdb").is_some() && pg_binary("pg_ctl").is_some(),
            psql: pg_binary("psql").is_some(),
            redis_answers: env::var_os("BURROW_TEST_REDIS_URL").is_some()
                || answers("127.0.0.1", 6379),
            redis_server: on_path("redis-server"),
            node_and_npm: on_path("node") && on_path("npm"),
            python_venv: venv_works(),
            chromium: env::var_os("BURROW_CHROMIUM").is_some() || on_path("chromium"),
            pg_auto_failover: pg_binary("pg_autoctl").is_some(),
            apt_get: on_path("apt-get"),
            privilege: Privilege::probe(),
        }
    }
}

impl Privilege {
    fn probe() -> Self {
        if crate::postgres::is_root() {
            Self::Root
        } else if !on_path("sudo") {
            Self::None
        } else if succeeds(Command::new("sudo").args(["-n", "true"]))
            || std::io::stdin().is_terminal()
        {
            Self::Sudo
        } else {
            Self::None
        }
    }
}

fn succeeds(command: &mut Command) -> bool {
    command.output().is_ok_and(|output| output.status.success())
}

fn on_path(program: &str) -> bool {
    env::var_os("PATH")
        .is_some_and(|paths| env::split_paths(&paths).any(|dir| dir.join(program).is_file()))
}

/// Whether `python3 -m venv` makes a venv (with pip): Debian's python3 needs python3-venv.
fn venv_works() -> bool {
    let dir = env::temp_dir().join(format!("xtask-venv-probe-{}", std::process::id()));
    let works = succeeds(Command::new("python3").args(["-m", "venv"]).arg(&dir))
        && dir.join("bin").join("pip").is_file();
    let _ = std::fs::remove_dir_all(&dir);
    works
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A machine with everything: PostgreSQL and Redis answering, every program installed.
    fn complete() -> Machine {
        Machine {
            postgres_answers: true,
            postgres_server: true,
            psql: true,
            redis_answers: true,
            redis_server: true,
            node_and_npm: true,
            python_venv: true,
            chromium: true,
            pg_auto_failover: true,
            apt_get: true,
            privilege: Privilege::Root,
        }
    }

    /// A fresh Debian machine: only apt-get.
    fn fresh(privilege: Privilege) -> Machine {
        Machine {
            postgres_answers: false,
            postgres_server: false,
            psql: false,
            redis_answers: false,
            redis_server: false,
            node_and_npm: false,
            python_venv: false,
            chromium: false,
            pg_auto_failover: false,
            apt_get: true,
            privilege,
        }
    }

    fn installs(plan: &Plan) -> (Vec<&'static str>, bool, bool) {
        match plan {
            Plan::Install {
                packages,
                sudo,
                stop_debian_cluster,
                reasons,
            } => {
                assert!(!reasons.is_empty());
                (packages.clone(), *sudo, *stop_debian_cluster)
            }
            other => panic!("expected an install, got {other:?}"),
        }
    }

    #[test]
    fn a_complete_machine_installs_nothing() {
        assert_eq!(plan(Task::Dev, &complete()), Plan::Ready);
        assert_eq!(plan(Task::Test, &complete()), Plan::Ready);
    }

    #[test]
    fn a_fresh_machine_as_root_installs_everything_each_task_needs_once() {
        let (dev, sudo, stop) = installs(&plan(Task::Dev, &fresh(Privilege::Root)));
        assert_eq!(dev, ["postgresql", "nodejs", "npm"]);
        assert!(!sudo);
        assert!(
            stop,
            "Debian's password-auth cluster must give way to xtask's own"
        );

        let (test, _, _) = installs(&plan(Task::Test, &fresh(Privilege::Root)));
        assert_eq!(
            test,
            [
                "postgresql",
                "postgresql-client",
                "redis-server",
                "nodejs",
                "npm",
                "python3",
                "python3-venv",
                "chromium",
                "fonts-liberation",
                "postgresql-15-auto-failover"
            ]
        );
    }

    #[test]
    fn sudo_is_used_when_not_root() {
        let (_, sudo, _) = installs(&plan(Task::Test, &fresh(Privilege::Sudo)));
        assert!(sudo);
    }

    #[test]
    fn running_services_are_used_rather_than_installed() {
        let machine = Machine {
            postgres_server: false,
            redis_server: false,
            ..complete()
        };
        assert_eq!(plan(Task::Dev, &machine), Plan::Ready);
        // Redis answers, so only the PostgreSQL server programs (for the outage test) are
        // missing; the answering PostgreSQL is left alone.
        let (packages, _, stop) = installs(&plan(Task::Test, &machine));
        assert_eq!(packages, ["postgresql"]);
        assert!(!stop, "a PostgreSQL that answered is never stopped");
    }

    #[test]
    fn installed_but_stopped_services_are_started_rather_than_installed() {
        let machine = Machine {
            postgres_answers: false,
            redis_answers: false,
            ..complete()
        };
        assert_eq!(plan(Task::Dev, &machine), Plan::Ready);
        assert_eq!(plan(Task::Test, &machine), Plan::Ready);
    }

    #[test]
    fn only_what_is_missing_is_installed() {
        let machine = Machine {
            chromium: false,
            python_venv: false,
            ..complete()
        };
        assert_eq!(plan(Task::Dev, &machine), Plan::Ready);
        let (packages, _, _) = installs(&plan(Task::Test, &machine));
        assert_eq!(
            packages,
            ["python3", "python3-venv", "chromium", "fonts-liberation"]
        );
    }

    #[test]
    fn without_privilege_the_exact_command_is_given() {
        let Plan::Stop(message) = plan(Task::Dev, &fresh(Privilege::None)) else {
            panic!("expected a stop");
        };
        assert!(
            message
                .contains("sudo apt-get update && sudo apt-get install -y postgresql nodejs npm"),
            "{message}"
        );
        assert!(
            message.contains("PostgreSQL keeps Burrow's data"),
            "{message}"
        );
        assert!(message.contains("run `cargo xtask dev` again"), "{message}");
    }

    #[test]
    fn without_apt_get_the_packages_are_named() {
        let machine = Machine {
            chromium: false,
            apt_get: false,
            ..complete()
        };
        let Plan::Stop(message) = plan(Task::Test, &machine) else {
            panic!("expected a stop");
        };
        assert!(
            message.contains("Debian's packages: chromium fonts-liberation"),
            "{message}"
        );
        assert!(message.contains("Chromium"), "{message}");
    }
}

//! A highly available PostgreSQL from Debian's `postgresql-15-auto-failover`: a pg_auto_failover
//! monitor and two data nodes on free loopback ports under one directory, with pg_autoctl's
//! defaults (synchronous replication with a quorum of one standby, automatic failover). Each
//! step is the command `docs/operations.md` gives an operator, run as the `postgres` user when
//! xtask runs as root. Every process it started is stopped when it is dropped.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use anyhow::{Context as _, bail};
use serde::Deserialize;

use crate::postgres::{is_root, pg_binary};
use crate::run;
use crate::server::free_address;

/// The database the data nodes create and Burrow uses.
pub(super) const DATABASE: &str = "burrow";
/// Where every server of the formation listens, and how it lets its peers in: loopback, trust,
/// no TLS (a test's; `docs/operations.md` says what production uses instead).
const LOOPBACK: &[&str] = &["--auth", "trust", "--no-ssl", "--hostname", "127.0.0.1"];
/// How long the formation may take to have a primary and a synchronous standby again.
const SETTLE_DEADLINE: Duration = Duration::from_secs(180);

/// One PostgreSQL that pg_autoctl keeps: its data directory and port.
struct Node {
    name: &'static str,
    pgdata: PathBuf,
    port: u16,
}

/// A monitor and two data nodes, each kept by its own `pg_autoctl run`.
pub(super) struct Formation {
    dir: PathBuf,
    pg_autoctl: PathBuf,
    /// The programs of the PostgreSQL that has pg_auto_failover's extension, first on
    /// pg_autoctl's `PATH` (which finds `pg_ctl` there, and `pg_controldata` beside it).
    bin_dir: PathBuf,
    as_root: bool,
    monitor: Node,
    nodes: [Node; 2],
    /// The `pg_autoctl run` processes, stopped in reverse order on drop.
    keepers: Vec<Child>,
}

/// A node as the monitor reports it (`pg_autoctl show state --json`).
#[derive(Deserialize)]
struct NodeState {
    nodename: String,
    nodeport: u16,
    current_group_state: String,
    assigned_group_state: String,
}

impl Formation {
    /// Creates the monitor and the two nodes in a fresh `dir` and waits until the second is a
    /// synchronous standby of the first.
    pub(super) fn create(dir: &Path) -> anyhow::Result<Self> {
        let pg_autoctl = pg_binary("pg_autoctl").context(
            "pg_autoctl not found; install Debian's postgresql-15-auto-failover (cargo xtask test \
             installs it)",
        )?;
        let bin_dir = server_with_pg_auto_failover()?;
        if dir.exists() {
            stop_leftovers(dir);
            fs::remove_dir_all(dir).with_context(|| format!("removing {}", dir.display()))?;
        }
        fs::create_dir_all(dir.join("run"))?;
        let as_root = is_root();
        if as_root {
            run(Command::new("chown")
                .args(["-R", "postgres:postgres"])
                .arg(dir))?;
        }
        let node = |name: &'static str| -> anyhow::Result<Node> {
            Ok(Node {
                name,
                pgdata: dir.join(name),
                port: free_port()?,
            })
        };
        let mut formation = Self {
            dir: dir.to_owned(),
            pg_autoctl,
            bin_dir,
            as_root,
            monitor: node("monitor")?,
            nodes: [node("node1")?, node("node2")?],
            keepers: Vec::new(),
        };
        formation.create_monitor()?;
        for index in 0..formation.nodes.len() {
            formation.create_node(index)?;
        }
        formation.wait_settled(None)?;
        Ok(formation)
    }

    fn create_monitor(&mut self) -> anyhow::Result<()> {
        eprintln!(
            "xtask: creating a pg_auto_failover monitor on port {}",
            self.monitor.port
        );
        let port = self.monitor.port.to_string();
        self.autoctl_logged(
            "monitor-create",
            &[
                &["create", "monitor", "--pgport", &port],
                LOOPBACK,
                &["--pgdata"],
            ]
            .concat(),
            &self.monitor.pgdata,
        )?;
        let monitor = &self.monitor;
        let keeper = self.keep(monitor.name, &monitor.pgdata)?;
        self.keepers.push(keeper);
        Ok(())
    }

    fn create_node(&mut self, index: usize) -> anyhow::Result<()> {
        let node = &self.nodes[index];
        eprintln!(
            "xtask: creating PostgreSQL {} on port {}",
            node.name, node.port
        );
        let port = node.port.to_string();
        let monitor = self.monitor_uri();
        self.autoctl_logged(
            &format!("{}-create", node.name),
            &[
                &["create", "postgres", "--pgport", &port],
                LOOPBACK,
                &[
                    "--dbname",
                    DATABASE,
                    "--name",
                    node.name,
                    "--monitor",
                    &monitor,
                    "--pgdata",
                ],
            ]
            .concat(),
            &node.pgdata,
        )?;
        let keeper = self.keep(node.name, &node.pgdata)?;
        self.keepers.push(keeper);
        Ok(())
    }

    /// `postgres://…@P1,P2/burrow?target_session_attrs=read-write`: what Burrow is given.
    pub(super) fn database_url(&self) -> String {
        format!(
            "postgres://postgres@127.0.0.1:{},127.0.0.1:{}/{DATABASE}?target_session_attrs=read-write",
            self.nodes[0].port, self.nodes[1].port
        )
    }

    fn monitor_uri(&self) -> String {
        format!(
            "postgres://autoctl_node@127.0.0.1:{}/pg_auto_failover",
            self.monitor.port
        )
    }

    /// `kill -9` of the primary's postmaster, then waits until pg_autoctl has promoted the
    /// standby and brought the killed node back as the new standby.
    pub(super) fn kill_primary(&self) -> anyhow::Result<()> {
        let primary = self.primary()?;
        let pid_file = primary.pgdata.join("postmaster.pid");
        let pid = fs::read_to_string(&pid_file)
            .with_context(|| format!("reading {}", pid_file.display()))?
            .lines()
            .next()
            .map(str::trim)
            .map(str::to_owned)
            .context("an empty postmaster.pid")?;
        eprintln!("xtask: kill -9 of {}'s postmaster ({pid})", primary.name);
        run(Command::new("kill").args(["-9", &pid]))?;
        self.wait_settled(Some(primary.port))
    }

    /// `pg_autoctl perform switchover`: the primary is demoted and the standby promoted, in
    /// order; waits until the old primary follows the new one.
    pub(super) fn switchover(&self) -> anyhow::Result<()> {
        let primary = self.primary()?;
        eprintln!("xtask: pg_autoctl perform switchover");
        self.autoctl_logged(
            "switchover",
            &["perform", "switchover", "--wait", "120", "--pgdata"],
            &self.monitor.pgdata,
        )?;
        self.wait_settled(Some(primary.port))
    }

    /// Waits until one node is primary and the other its secondary, as assigned, and the primary
    /// is not the node on port `not_primary` (the one a fault just took out).
    fn wait_settled(&self, not_primary: Option<u16>) -> anyhow::Result<()> {
        let started = Instant::now();
        loop {
            let states = self.states();
            if let Ok(states) = &states
                && settled(states)
                && primary_port(states) != not_primary
            {
                eprintln!(
                    "xtask: {} ({:.1} s)",
                    describe(states),
                    started.elapsed().as_secs_f64()
                );
                return Ok(());
            }
            if started.elapsed() > SETTLE_DEADLINE {
                bail!(
                    "pg_auto_failover did not settle within {SETTLE_DEADLINE:?}: {}; see the logs \
                     in {}",
                    states.map_or_else(|error| format!("{error:#}"), |states| describe(&states)),
                    self.dir.display()
                );
            }
            thread::sleep(Duration::from_millis(250));
        }
    }

    fn primary(&self) -> anyhow::Result<&Node> {
        let states = self.states()?;
        let port =
            primary_port(&states).with_context(|| format!("no primary: {}", describe(&states)))?;
        self.nodes
            .iter()
            .find(|node| node.port == port)
            .context("the monitor reports a node xtask did not create")
    }

    fn states(&self) -> anyhow::Result<Vec<NodeState>> {
        let output = self
            .autoctl()
            .args(["show", "state", "--json", "--pgdata"])
            .arg(&self.monitor.pgdata)
            .stderr(Stdio::null())
            .output()
            .context("running pg_autoctl show state")?;
        if !output.status.success() {
            bail!("pg_autoctl show state failed ({})", output.status);
        }
        serde_json::from_slice(&output.stdout).context("reading pg_autoctl show state --json")
    }

    /// Starts `pg_autoctl run` for `pgdata`, its output going to `<name>.log`.
    fn keep(&self, name: &str, pgdata: &Path) -> anyhow::Result<Child> {
        let log = fs::File::create(self.dir.join(format!("{name}.log")))?;
        self.autoctl()
            .args(["run", "--pgdata"])
            .arg(pgdata)
            .stdin(Stdio::null())
            .stdout(log.try_clone()?)
            .stderr(log)
            .spawn()
            .context("starting pg_autoctl run")
    }

    /// Runs `pg_autoctl <args> <path>` to completion, its output going to `<log>.log`.
    fn autoctl_logged(&self, log: &str, args: &[&str], path: &Path) -> anyhow::Result<()> {
        let log_path = self.dir.join(format!("{log}.log"));
        let output = fs::File::create(&log_path)?;
        let status = self
            .autoctl()
            .args(args)
            .arg(path)
            .stdin(Stdio::null())
            .stdout(output.try_clone()?)
            .stderr(output)
            .status()
            .context("starting pg_autoctl")?;
        if !status.success() {
            bail!(
                "pg_autoctl {} failed ({status}); see {}",
                args[..2].join(" "),
                log_path.display()
            );
        }
        Ok(())
    }

    /// pg_autoctl with its configuration and state kept under the formation's directory (not
    /// in the user's home), as the `postgres` user when xtask is root.
    fn autoctl(&self) -> Command {
        // Only system directories besides: the `postgres` user may not read the caller's.
        let path = format!("{}:/usr/bin:/bin", self.bin_dir.display());
        let mut command = if self.as_root {
            let mut command = Command::new("runuser");
            command.args(["-u", "postgres", "--"]);
            command
        } else {
            Command::new("env")
        };
        command
            .arg("env")
            .arg(format!("PATH={path}"))
            .arg(format!(
                "XDG_CONFIG_HOME={}",
                self.dir.join("config").display()
            ))
            .arg(format!("XDG_DATA_HOME={}", self.dir.join("data").display()))
            .arg(format!(
                "XDG_RUNTIME_DIR={}",
                self.dir.join("run").display()
            ))
            .arg(&self.pg_autoctl);
        command
    }
}

impl Drop for Formation {
    /// Stops the data nodes, then the monitor (`pg_autoctl stop` ends a keeper and its
    /// PostgreSQL), and reaps the keepers.
    fn drop(&mut self) {
        for pgdata in self
            .nodes
            .iter()
            .chain([&self.monitor])
            .map(|node| node.pgdata.clone())
            .collect::<Vec<_>>()
        {
            let _ = self
                .autoctl()
                .args(["stop", "--pgdata"])
                .arg(&pgdata)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status();
        }
        for keeper in self.keepers.iter_mut().rev() {
            let deadline = Instant::now() + Duration::from_secs(30);
            while matches!(keeper.try_wait(), Ok(None)) && Instant::now() < deadline {
                thread::sleep(Duration::from_millis(50));
            }
            let _ = keeper.kill();
            let _ = keeper.wait();
        }
    }
}

/// Whether one node is primary, the other secondary, and both are where the monitor wants them.
fn settled(states: &[NodeState]) -> bool {
    let is = |wanted: &str| {
        states
            .iter()
            .filter(|state| {
                state.current_group_state == wanted && state.assigned_group_state == wanted
            })
            .count()
            == 1
    };
    states.len() == 2 && is("primary") && is("secondary")
}

fn primary_port(states: &[NodeState]) -> Option<u16> {
    states
        .iter()
        .find(|state| state.current_group_state == "primary")
        .map(|state| state.nodeport)
}

fn describe(states: &[NodeState]) -> String {
    states
        .iter()
        .map(|state| {
            format!(
                "{} {}/{}",
                state.nodename, state.current_group_state, state.assigned_group_state
            )
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// `/usr/lib/postgresql/<major>/bin` of the major version pg_auto_failover was installed for
/// (Debian's package is per version: `postgresql-15-auto-failover`).
fn server_with_pg_auto_failover() -> anyhow::Result<PathBuf> {
    let versions = fs::read_dir("/usr/lib/postgresql").context(
        "no /usr/lib/postgresql; install Debian's postgresql-15-auto-failover (cargo xtask test \
         installs it)",
    )?;
    versions
        .filter_map(Result::ok)
        .map(|version| version.path())
        .find(|version| version.join("lib/pgautofailover.so").is_file())
        .map(|version| version.join("bin"))
        .context(
            "no PostgreSQL has pg_auto_failover's extension; install Debian's \
             postgresql-15-auto-failover",
        )
}

fn free_port() -> anyhow::Result<u16> {
    let address = free_address()?;
    address
        .rsplit(':')
        .next()
        .and_then(|port| port.parse().ok())
        .context("a free address without a port")
}

/// Ends the PostgreSQL servers an interrupted earlier run left under `dir` (their keepers are
/// gone with that run's xtask, or are stopped by this).
fn stop_leftovers(dir: &Path) {
    for name in ["node1", "node2", "monitor"] {
        let pid_file = dir.join(name).join("postmaster.pid");
        if let Some(pid) = fs::read_to_string(pid_file)
            .ok()
            .and_then(|text| text.lines().next().map(str::trim).map(str::to_owned))
        {
            let _ = Command::new("kill").args(["-9", &pid]).status();
        }
    }
    let _ = Command::new("pkill")
        .args(["-f", &format!("pg_autoctl run --pgdata {}", dir.display())])
        .status();
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(name: &str, current: &str, assigned: &str) -> NodeState {
        NodeState {
            nodename: name.to_owned(),
            nodeport: 1,
            current_group_state: current.to_owned(),
            assigned_group_state: assigned.to_owned(),
        }
    }

    #[test]
    fn a_formation_is_settled_with_a_primary_and_its_secondary_as_assigned() {
        assert!(settled(&[
            state("node1", "primary", "primary"),
            state("node2", "secondary", "secondary"),
        ]));
        assert!(!settled(&[
            state("node1", "wait_primary", "wait_primary"),
            state("node2", "catchingup", "catchingup"),
        ]));
        assert!(!settled(&[
            state("node1", "primary", "prepare_maintenance"),
            state("node2", "secondary", "prepare_promotion"),
        ]));
        assert!(!settled(&[state("node1", "single", "single")]));
    }
}

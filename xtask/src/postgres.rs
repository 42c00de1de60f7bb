//! Finding or starting the PostgreSQL that `dev` and `test` use.
//!
//! Order: `DATABASE_URL`'s server if set; else whatever answers on 127.0.0.1:5432 (trust auth,
//! user `postgres`); else a throwaway trust-auth cluster under `target/postgres`, started with
//! the installed `initdb`/`pg_ctl` (as the `postgres` user when running as root, since initdb
//! refuses root).

use std::net::{SocketAddr, TcpStream, ToSocketAddrs as _};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;
use std::{env, fs};

use anyhow::{Context as _, bail};

use crate::{run, target_dir};

const LOCAL_HOST: &str = "127.0.0.1";
const LOCAL_PORT: u16 = 5432;

/// A reachable PostgreSQL server.
pub(crate) struct Server {
    /// `postgres://user[:password]@host:port` without a database.
    base: String,
}

impl Server {
    pub(crate) fn database_url(&self, database: &str) -> String {
        format!("{}/{database}", self.base)
    }

    /// Fails early, with advice, when the server answers but refuses `postgres` without a
    /// password (checked with `psql` when it is installed).
    fn check_login(&self) -> anyhow::Result<()> {
        let url = self.database_url("postgres");
        let Ok(output) = Command::new(psql())
            .args([url.as_str(), "-XAtc", "SELECT 1"])
            .output()
        else {
            return Ok(());
        };
        if !output.status.success() {
            bail!(
                "PostgreSQL at {LOCAL_HOST}:{LOCAL_PORT} refused user postgres without a password ({}); \
                 set DATABASE_URL to a database you can use, or enable trust auth for local connections",
                String::from_utf8_lossy(&output.stderr).trim()
            );
        }
        Ok(())
    }

    /// Drops what earlier test runs left: the test databases of processes that are gone (a
    /// killed run's; a test drops its own when it ends) and the migrated templates (a run
    /// rebuilds the one it needs). Best effort: needs `psql`.
    pub(crate) fn drop_test_databases(&self) {
        let list = "SELECT datname FROM pg_database \
                    WHERE datname LIKE 'burrow\\_test\\_%' OR datname LIKE 'burrow\\_template\\_%'";
        let url = self.database_url("postgres");
        let Ok(output) = Command::new(psql())
            .args([url.as_str(), "-XAtc", list])
            .output()
        else {
            eprintln!("xtask: psql not found; leaving old test databases in place");
            return;
        };
        let names = String::from_utf8_lossy(&output.stdout);
        let mut dropped = 0;
        for name in names.lines().map(str::trim) {
            if !name.starts_with("burrow_template_") && !left_by_a_gone_process(name) {
                continue;
            }
            let drop = format!("DROP DATABASE IF EXISTS \"{name}\" WITH (FORCE)");
            if Command::new(psql())
                .args([url.as_str(), "-XAtqc", &drop])
                .status()
                .is_ok_and(|status| status.success())
            {
                dropped += 1;
            }
        }
        if dropped > 0 {
            eprintln!("xtask: dropped {dropped} test database(s) and template(s) of test runs");
        }
    }
}

/// Whether a `burrow_test_<pid>_<id>` database belongs to a process that is no longer running
/// (names of another form are an older run's, and gone too).
fn left_by_a_gone_process(name: &str) -> bool {
    let pid = name
        .strip_prefix("burrow_test_")
        .and_then(|rest| rest.split_once('_'))
        .and_then(|(pid, _)| pid.parse::<u32>().ok());
    pid.is_none_or(|pid| !Path::new(&format!("/proc/{pid}")).exists())
}

/// Returns a server to use, starting one if nothing answers.
pub(crate) fn ensure() -> anyhow::Result<Server> {
    if let Ok(url) = env::var("DATABASE_URL") {
        let parsed = split_database(&url)
            .context("DATABASE_URL must look like postgres://user@host:port/database")?;
        eprintln!("xtask: using the PostgreSQL server of DATABASE_URL");
        return Ok(Server { base: parsed });
    }
    let base = format!("postgres://postgres@{LOCAL_HOST}:{LOCAL_PORT}");
    if answers(LOCAL_HOST, LOCAL_PORT) {
        eprintln!("xtask: using the PostgreSQL already running at {LOCAL_HOST}:{LOCAL_PORT}");
        let server = Server { base };
        server.check_login()?;
        return Ok(server);
    }
    start_throwaway_cluster()?;
    Ok(Server { base })
}

/// `postgres://u@h:p/db?x` → `postgres://u@h:p`.
fn split_database(url: &str) -> Option<String> {
    let after_scheme = url.find("://")? + 3;
    let slash = url[after_scheme..].find('/')? + after_scheme;
    Some(url[..slash].to_owned())
}

/// Whether something accepts TCP connections at `host:port`.
pub(crate) fn answers(host: &str, port: u16) -> bool {
    let Ok(mut addresses) = (host, port).to_socket_addrs() else {
        return false;
    };
    addresses.any(|address: SocketAddr| {
        TcpStream::connect_timeout(&address, Duration::from_secs(1)).is_ok()
    })
}

fn start_throwaway_cluster() -> anyhow::Result<()> {
    let initdb = pg_binary("initdb").context(
        "no PostgreSQL answers at 127.0.0.1:5432 and initdb was not found; install PostgreSQL (Debian: apt-get install postgresql)",
    )?;
    let pg_ctl = pg_binary("pg_ctl").context("pg_ctl not found next to initdb")?;
    let cluster = target_dir().join("postgres");
    let data = cluster.join("data");
    fs::create_dir_all(&cluster)?;
    let as_root = is_root();
    if as_root {
        run(Command::new("chown")
            .args(["-R", "postgres:postgres"])
            .arg(&cluster))?;
    }
    if !data.join("PG_VERSION").exists() {
        eprintln!(
            "xtask: creating a throwaway PostgreSQL cluster in {}",
            data.display()
        );
        run(as_postgres(&initdb, as_root)
            .args([
                "--auth=trust",
                "--username=postgres",
                "--encoding=UTF8",
                "--no-sync",
                "-D",
            ])
            .arg(&data))?;
    }
    eprintln!(
        "xtask: starting PostgreSQL from {} on {LOCAL_HOST}:{LOCAL_PORT}",
        data.display()
    );
    let options =
        format!("-c listen_addresses={LOCAL_HOST} -p {LOCAL_PORT} -c unix_socket_directories=''");
    run(as_postgres(&pg_ctl, as_root)
        .args(["start", "-w", "-t", "60", "-D"])
        .arg(&data)
        .args(["-l"])
        .arg(cluster.join("postgres.log"))
        .args(["-o", &options]))?;
    if !answers(LOCAL_HOST, LOCAL_PORT) {
        bail!(
            "PostgreSQL started but does not answer on {LOCAL_HOST}:{LOCAL_PORT}; see {}",
            cluster.join("postgres.log").display()
        );
    }
    Ok(())
}

/// A PostgreSQL server binary: on PATH, or in Debian's versioned directory (newest first).
pub(crate) fn pg_binary(name: &str) -> Option<PathBuf> {
    let on_path = env::var_os("PATH")
        .map(|paths| {
            env::split_paths(&paths)
                .map(|dir| dir.join(name))
                .collect::<Vec<_>>()
        })
        .unwrap_or_default();
    let mut debian: Vec<PathBuf> = fs::read_dir("/usr/lib/postgresql")
        .map(|dirs| {
            dirs.filter_map(Result::ok)
                .map(|d| d.path().join("bin").join(name))
                .collect()
        })
        .unwrap_or_default();
    debian.sort_by_key(|path| std::cmp::Reverse(version_of(path)));
    on_path
        .into_iter()
        .chain(debian)
        .find(|path| path.is_file())
}

fn version_of(path: &Path) -> u32 {
    path.components()
        .filter_map(|c| c.as_os_str().to_str()?.parse().ok())
        .next()
        .unwrap_or(0)
}

fn psql() -> PathBuf {
    pg_binary("psql").unwrap_or_else(|| PathBuf::from("psql"))
}

/// Whether xtask runs as root, where PostgreSQL's tools must run as the `postgres` user.
pub(crate) fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|output| String::from_utf8_lossy(&output.stdout).trim() == "0")
}

/// `binary` run as the `postgres` user when `as_root` (initdb and postgres refuse root).
pub(crate) fn as_postgres(binary: &Path, as_root: bool) -> Command {
    if as_root {
        let mut command = Command::new("runuser");
        command.args(["-u", "postgres", "--"]).arg(binary);
        command
    } else {
        Command::new(binary)
    }
}

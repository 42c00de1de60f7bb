//! A PostgreSQL server a test owns, so it can stop and start it: a throwaway trust-auth cluster
//! made with the installed `initdb`/`pg_ctl` (as the `postgres` user when the tests run as root,
//! since PostgreSQL refuses to run as root).

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Command;

pub struct OwnPostgres {
    dir: PathBuf,
    port: u16,
    pg_ctl: PathBuf,
}

impl OwnPostgres {
    /// Creates and starts a cluster on a free port.
    pub fn start() -> Self {
        let initdb = pg_binary("initdb");
        let pg_ctl = pg_binary("pg_ctl");
        let dir = new_dir();
        run(as_postgres(&initdb)
            .args(["--auth=trust", "--username=postgres", "--no-sync", "-D"])
            .arg(dir.join("data")));
        let server = Self {
            dir,
            port: free_port(),
            pg_ctl,
        };
        server.resume();
        server
    }

    /// A streaming standby of `primary` (a base backup with its replication settings, `-R`),
    /// started on a free port: a read replica.
    pub fn standby_of(primary: &Self) -> Self {
        let dir = new_dir();
        run(as_postgres(&pg_binary("pg_basebackup"))
            .args([
                "-h",
                "127.0.0.1",
                "-U",
                "postgres",
                "-R",
                "-X",
                "stream",
                "-p",
            ])
            .arg(primary.port.to_string())
            .arg("-D")
            .arg(dir.join("data")));
        let server = Self {
            dir,
            port: free_port(),
            pg_ctl: primary.pg_ctl.clone(),
        };
        server.resume();
        server
    }

    pub fn url(&self, database: &str) -> String {
        format!("postgres://postgres@127.0.0.1:{}/{database}", self.port)
    }

    /// Stops the server (`fast`: connections are cut, as in a crash or failover).
    pub fn stop(&self) {
        run(as_postgres(&self.pg_ctl)
            .args(["stop", "-m", "fast", "-w", "-D"])
            .arg(self.dir.join("data")));
    }

    /// Starts the stopped server again, on the same port.
    pub fn resume(&self) {
        let options = format!(
            "-c listen_addresses=127.0.0.1 -p {} -c unix_socket_directories='' -c fsync=off",
            self.port
        );
        run(as_postgres(&self.pg_ctl)
            .args(["start", "-w", "-t", "60", "-D"])
            .arg(self.dir.join("data"))
            .arg("-l")
            .arg(self.dir.join("postgres.log"))
            .args(["-o", &options]));
    }
}

impl Drop for OwnPostgres {
    fn drop(&mut self) {
        let _ = as_postgres(&self.pg_ctl)
            .args(["stop", "-m", "immediate", "-D"])
            .arg(self.dir.join("data"))
            .output();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A new directory for a cluster, owned by the user PostgreSQL runs as.
fn new_dir() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("burrow-own-pg-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir).expect("creating the cluster's directory");
    if is_root() {
        run(Command::new("chown").arg("postgres:postgres").arg(&dir));
    }
    dir
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("a free port")
        .port()
}

/// A server binary: on PATH, or in Debian's versioned directory (newest first).
fn pg_binary(name: &str) -> PathBuf {
    let on_path: Vec<PathBuf> = std::env::var_os("PATH")
        .map(|paths| {
            std::env::split_paths(&paths)
                .map(|dir| dir.join(name))
                .collect()
        })
        .unwrap_or_default();
    let mut debian: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .map(|dirs| {
            dirs.filter_map(Result::ok)
                .map(|dir| dir.path().join("bin").join(name))
                .collect()
        })
        .unwrap_or_default();
    debian.sort();
    debian.reverse();
    on_path
        .into_iter()
        .chain(debian)
        .find(|path| path.is_file())
        .unwrap_or_else(|| panic!("{name} is not installed (Debian: apt-get install postgresql)"))
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|output| String::from_utf8_lossy(&output.stdout).trim() == "0")
}

fn as_postgres(binary: &Path) -> Command {
    if is_root() {
        let mut command = Command::new("runuser");
        command.args(["-u", "postgres", "--"]).arg(binary);
        command
    } else {
        Command::new(binary)
    }
}

fn run(command: &mut Command) {
    let output = command.output().expect("running a PostgreSQL tool");
    assert!(
        output.status.success(),
        "{command:?} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
}

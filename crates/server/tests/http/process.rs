//! `burrow` as operators run it: the real binary in a child process, for what only a process
//! shows (its log, signals, being killed).

use std::net::TcpListener;
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

/// `burrow serve` in a child process, killed (if still running) when dropped.
pub struct ServerProcess {
    child: Child,
    pub address: String,
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `burrow admin bootstrap` against `database_url`: its JSON (key, token, ids).
pub fn bootstrap(database_url: &str) -> Value {
    bootstrap_tenant(database_url, "ada@example.com", "Process")
}

/// `burrow admin bootstrap` of another tenant: `email`'s key to an organization and a project
/// both named `name`.
pub fn bootstrap_tenant(database_url: &str, email: &str, name: &str) -> Value {
    let output = Command::new(env!("CARGO_BIN_EXE_burrow"))
        .args(["admin", "bootstrap", "--email", email])
        .args(["--organization", name, "--project", name])
        .env("DATABASE_URL", database_url)
        .env("RUST_LOG", "off")
        .output()
        .expect("running burrow admin bootstrap");
    assert!(output.status.success(), "{output:?}");
    serde_json::from_slice(&output.stdout).expect("bootstrap prints JSON")
}

/// Starts `burrow serve` on a free port with `configure`'s environment, logging to `log` (or
/// nowhere), and waits until it answers `/_health`.
pub async fn serve(
    database_url: &str,
    log: Option<&Path>,
    configure: impl FnOnce(&mut Command),
) -> ServerProcess {
    let port = TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("a free port")
        .port();
    let mut command = Command::new(env!("CARGO_BIN_EXE_burrow"));
    command
        .arg("serve")
        .env("DATABASE_URL", database_url)
        .env("BURROW_BIND", format!("127.0.0.1:{port}"))
        .env("RUST_LOG", "info")
        .stdout(Stdio::null())
        .stderr(match log {
            Some(log) => Stdio::from(std::fs::File::create(log).expect("creating the log file")),
            None => Stdio::null(),
        });
    configure(&mut command);
    let child = command.spawn().expect("starting burrow serve");
    let server = ServerProcess {
        child,
        address: format!("http://127.0.0.1:{port}"),
    };
    let deadline = Instant::now() + Duration::from_secs(30);
    let client = reqwest::Client::new();
    loop {
        let health = client.get(server.url("/_health")).send();
        if health.await.is_ok_and(|r| r.status() == 200) {
            return server;
        }
        assert!(Instant::now() < deadline, "burrow serve did not start");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

impl ServerProcess {
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.address)
    }

    /// The process's peak resident memory so far (`VmHWM`), in KiB.
    pub fn peak_memory_kib(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .expect("reading the server's /proc status");
        status
            .lines()
            .find_map(|line| line.strip_prefix("VmHWM:"))
            .and_then(|value| value.trim().trim_end_matches("kB").trim().parse().ok())
            .expect("VmHWM in /proc/<pid>/status")
    }

    /// Sends `signal` (`TERM`, `KILL`, …) as `kill -s` does.
    pub fn signal(&self, signal: &str) {
        let status = Command::new("kill")
            .args(["-s", signal, &self.child.id().to_string()])
            .status()
            .expect("running kill");
        assert!(status.success(), "kill -s {signal} failed");
    }

    /// Waits up to `bound` for the process to exit; `None` if it is still running.
    pub async fn exited_within(&mut self, bound: Duration) -> Option<ExitStatus> {
        let deadline = Instant::now() + bound;
        loop {
            if let Some(status) = self.child.try_wait().expect("polling the server process") {
                return Some(status);
            }
            if Instant::now() >= deadline {
                return None;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

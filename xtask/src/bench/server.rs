//! The `burrow serve` under test: started on a free loopback port, timed from spawn until
//! `/_health` answers 200, its peak memory read from /proc, and stopped with SIGTERM however the
//! bench ends (the stop is in `Drop`, so an error anywhere still stops it).

use std::fs::{self, File};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use anyhow::{Context as _, bail};

/// How long the server may take to answer `/_health` after it is spawned.
const STARTUP_DEADLINE: Duration = Duration::from_secs(60);
/// How often `/_health` is asked while starting: this bounds the start-up figure's error.
const HEALTH_POLL: Duration = Duration::from_millis(2);
/// How long a SIGTERM may take (graceful shutdown drains connections) before SIGKILL.
const STOP_DEADLINE: Duration = Duration::from_secs(30);

pub(crate) struct Server {
    child: Child,
    address: String,
    log: PathBuf,
    startup: Duration,
}

impl Server {
    /// Starts `burrow serve` against `database_url`, its output going to `log`, and waits until it
    /// is healthy.
    pub(crate) fn start(burrow: &Path, database_url: &str, log: &Path) -> anyhow::Result<Self> {
        let port = TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
        let address = format!("127.0.0.1:{port}");
        let output = File::create(log).with_context(|| format!("creating {}", log.display()))?;
        let spawned = Instant::now();
        let child = Command::new(burrow)
            .arg("serve")
            .env("DATABASE_URL", database_url)
            .env("BURROW_BIND", &address)
            .env("RUST_LOG", "warn")
            // The benchmark and the fuzz run send thousands of requests a minute with one key.
            .env("BURROW_RATE_LIMIT", "off")
            .stdin(Stdio::null())
            .stdout(output.try_clone()?)
            .stderr(output)
            .spawn()
            .with_context(|| format!("starting {} serve", burrow.display()))?;
        let mut server = Self {
            child,
            address,
            log: log.to_owned(),
            startup: Duration::ZERO,
        };
        server.startup = server.wait_until_healthy(spawned)?;
        Ok(server)
    }

    pub(crate) fn base_url(&self) -> String {
        format!("http://{}", self.address)
    }

    /// From spawn until `/_health` first answered 200.
    pub(super) fn startup(&self) -> Duration {
        self.startup
    }

    /// Where the server's warnings and errors go.
    pub(crate) fn log(&self) -> &Path {
        &self.log
    }

    /// Starts the server's peak resident memory afresh (Linux's `clear_refs` 5), so the next
    /// reading is the peak of what runs from now on.
    pub(super) fn reset_peak_memory(&self) -> anyhow::Result<()> {
        let path = format!("/proc/{}/clear_refs", self.child.id());
        fs::write(&path, "5").with_context(|| format!("writing {path}"))
    }

    /// The server's peak resident memory (`VmHWM`) since start or the last reset, in KiB.
    pub(super) fn peak_memory_kib(&self) -> anyhow::Result<u64> {
        let path = format!("/proc/{}/status", self.child.id());
        let status = fs::read_to_string(&path).with_context(|| format!("reading {path}"))?;
        status
            .lines()
            .find_map(|line| line.strip_prefix("VmHWM:"))
            .and_then(|value| value.trim().strip_suffix("kB"))
            .and_then(|kib| kib.trim().parse().ok())
            .with_context(|| format!("no VmHWM in {path}"))
    }

    fn wait_until_healthy(&mut self, spawned: Instant) -> anyhow::Result<Duration> {
        let config = ureq::Agent::config_builder()
            .timeout_global(Some(Duration::from_secs(1)))
            .build();
        let agent = ureq::Agent::new_with_config(config);
        let url = format!("{}/_health", self.base_url());
        while spawned.elapsed() < STARTUP_DEADLINE {
            if let Some(status) = self.child.try_wait()? {
                bail!(
                    "burrow serve exited ({status}) before answering /_health; see {}",
                    self.log.display()
                );
            }
            if agent
                .get(&url)
                .call()
                .is_ok_and(|response| response.status() == 200)
            {
                return Ok(spawned.elapsed());
            }
            thread::sleep(HEALTH_POLL);
        }
        bail!(
            "burrow serve did not answer /_health within {STARTUP_DEADLINE:?}; see {}",
            self.log.display()
        )
    }

    /// SIGTERM, then SIGKILL if the graceful shutdown takes too long.
    fn stop(&mut self) {
        if !matches!(self.child.try_wait(), Ok(None)) {
            return;
        }
        let pid = self.child.id().to_string();
        // std offers only SIGKILL; `kill` sends the SIGTERM a real deployment would get.
        let _ = Command::new("kill").args(["-TERM", &pid]).status();
        let asked = Instant::now();
        while asked.elapsed() < STOP_DEADLINE {
            if !matches!(self.child.try_wait(), Ok(None)) {
                return;
            }
            thread::sleep(Duration::from_millis(20));
        }
        eprintln!("xtask: burrow serve ignored SIGTERM for {STOP_DEADLINE:?}; killing it");
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop();
    }
}

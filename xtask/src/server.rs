//! A `burrow serve` child process, for `dev`, the fuzz run and the bench: started (on a free
//! loopback port unless told one), timed from spawn until `/_health` answers 200, its peak memory
//! read from /proc, the requests it answered read from its `/metrics`, and stopped with SIGTERM
//! however xtask ends (the stop is in `Drop`, so an error anywhere still stops it).

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
/// How long the requests a load generator left in flight may take to be answered.
const SETTLE_DEADLINE: Duration = Duration::from_secs(30);
/// The shortest quiet spell that counts as settled.
const SETTLE_QUIET: Duration = Duration::from_millis(100);

pub(crate) struct Server {
    child: Child,
    address: String,
    /// Where its output goes; `None`: to xtask's own terminal.
    log: Option<PathBuf>,
    startup: Duration,
}

impl Server {
    /// Starts `burrow serve` against `database_url` on a free port, quiet but for warnings and
    /// without rate limits (the bench and the fuzz run send thousands of requests a minute with
    /// one key), its output going to `log`, and waits until it is healthy.
    pub(crate) fn start(burrow: &Path, database_url: &str, log: &Path) -> anyhow::Result<Self> {
        let address = free_address()?;
        Self::start_with(burrow, database_url, &address, Some(log), |command| {
            command
                .env("RUST_LOG", "warn")
                .env("BURROW_RATE_LIMIT", "off");
        })
    }

    /// Starts `burrow serve` against `database_url` at `address` with `configure`'s settings, its
    /// output going to `log` (or the terminal), and waits until it is healthy.
    pub(crate) fn start_with(
        burrow: &Path,
        database_url: &str,
        address: &str,
        log: Option<&Path>,
        configure: impl FnOnce(&mut Command),
    ) -> anyhow::Result<Self> {
        let mut command = Command::new(burrow);
        command
            .arg("serve")
            .env("DATABASE_URL", database_url)
            .env("BURROW_BIND", address)
            .stdin(Stdio::null());
        if let Some(log) = log {
            let output =
                File::create(log).with_context(|| format!("creating {}", log.display()))?;
            command.stdout(output.try_clone()?).stderr(output);
        }
        configure(&mut command);
        let spawned = Instant::now();
        let child = command
            .spawn()
            .with_context(|| format!("starting {} serve", burrow.display()))?;
        let mut server = Self {
            child,
            address: address.to_owned(),
            log: log.map(Path::to_owned),
            startup: Duration::ZERO,
        };
        server.startup = server.wait_until_healthy(spawned)?;
        Ok(server)
    }

    /// Waits until the server exits by itself (Ctrl-C in `dev`), failing if it failed.
    pub(crate) fn wait(mut self) -> anyhow::Result<()> {
        let status = self.child.wait()?;
        if !status.success() {
            bail!("burrow serve exited ({status}){}", self.see_log());
        }
        Ok(())
    }

    pub(crate) fn base_url(&self) -> String {
        format!("http://{}", self.address)
    }

    /// From spawn until `/_health` first answered 200.
    pub(super) fn startup(&self) -> Duration {
        self.startup
    }

    /// Where the server's warnings and errors go, if not to the terminal.
    pub(crate) fn log(&self) -> Option<&Path> {
        self.log.as_deref()
    }

    /// "; see <log>", for error messages.
    fn see_log(&self) -> String {
        self.log
            .as_ref()
            .map_or_else(String::new, |log| format!("; see {}", log.display()))
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

    /// Requests answered since start, by every route but `/metrics` (which this reads).
    pub(super) fn requests_answered(&self) -> anyhow::Result<u64> {
        let url = format!("{}/metrics", self.base_url());
        let text = ureq::get(&url)
            .call()
            .and_then(|mut response| response.body_mut().read_to_string())
            .with_context(|| format!("reading {url}"))?;
        Ok(answered(&text))
    }

    /// Waits until the requests a load generator left in flight when it stopped are answered:
    /// until no request is answered for twice `slow` (a run's p99), at least [`SETTLE_QUIET`].
    /// Counting a run's SQL between two settled moments counts every statement of its requests
    /// and of no other's.
    pub(super) fn settle(&self, slow: Duration) -> anyhow::Result<()> {
        let quiet = (slow * 2).max(SETTLE_QUIET);
        let started = Instant::now();
        let mut answered = self.requests_answered()?;
        loop {
            thread::sleep(quiet);
            let now = self.requests_answered()?;
            if now == answered {
                return Ok(());
            }
            if started.elapsed() > SETTLE_DEADLINE {
                bail!(
                    "burrow serve still answered requests {SETTLE_DEADLINE:?} after the load \
                     stopped{}",
                    self.see_log()
                );
            }
            answered = now;
        }
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
                    "burrow serve exited ({status}) before answering /_health{}",
                    self.see_log()
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
            "burrow serve did not answer /_health within {STARTUP_DEADLINE:?}{}",
            self.see_log()
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

/// A loopback address with a port nobody listens on (as far as the kernel knows now).
pub(crate) fn free_address() -> anyhow::Result<String> {
    let port = TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
    Ok(format!("127.0.0.1:{port}"))
}

/// The sum of `burrow_http_requests_total` in a Prometheus text page, less `/metrics`' own.
fn answered(metrics: &str) -> u64 {
    metrics
        .lines()
        .filter(|line| line.starts_with("burrow_http_requests_total{"))
        .filter(|line| !line.contains("route=\"/metrics\""))
        .filter_map(|line| line.rsplit(' ').next()?.parse::<u64>().ok())
        .sum()
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answered_requests_add_up_every_route_but_metrics() {
        let page = "# TYPE burrow_http_requests_total counter\n\
            burrow_http_requests_total{method=\"GET\",route=\"/metrics\",status=\"200\"} 7\n\
            burrow_http_requests_total{method=\"POST\",route=\"/batch\",status=\"200\"} 96\n\
            burrow_http_requests_total{method=\"GET\",route=\"/_health\",status=\"200\"} 4\n\
            burrow_http_request_duration_seconds_count{method=\"POST\",route=\"/batch\"} 96\n";
        assert_eq!(answered(page), 100);
    }
}

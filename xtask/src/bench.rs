//! `cargo xtask bench [requests]`: starts a release `burrow` against its own database and
//! drives it over loopback with keep-alive connections, printing throughput and latency per
//! scenario. The load loop is bounded by a request count and stops by itself.

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use anyhow::{Context as _, bail};

use crate::{build_burrow, json_string_field, postgres};

const CONNECTIONS: usize = 8;
const DEFAULT_REQUESTS: usize = 4000;

/// One kind of request to measure.
struct Scenario {
    name: &'static str,
    method: &'static str,
    path: String,
    /// JSON body; `{n}` is replaced by a number unique to each request.
    body: Option<&'static str>,
}

const SURVEY_BODY: &str = r#"{"name": "Bench survey {n}", "type": "popover", "questions": [{"type": "open", "question": "How was it?"}], "targeting_flag_filters": {"groups": [{"properties": [{"key": "email", "value": "@example.com", "operator": "icontains", "type": "person"}], "rollout_percentage": 50}]}}"#;

pub(crate) fn run(args: &[String]) -> anyhow::Result<()> {
    let requests: usize = match args.first() {
        Some(count) => count
            .parse()
            .context("the request count must be a number")?,
        None => DEFAULT_REQUESTS,
    };
    let server = postgres::ensure()?;
    let database_url = server.database_url("burrow_bench");
    let burrow = build_burrow(true)?;
    crate::run(
        Command::new(&burrow)
            .args(["migrate", "--create-database"])
            .env("DATABASE_URL", &database_url),
    )?;
    let boot = Command::new(&burrow)
        .args([
            "admin",
            "bootstrap",
            "--email",
            "bench@burrow.local",
            "--organization",
            "Bench",
            "--project",
            "Bench",
        ])
        .env("DATABASE_URL", &database_url)
        .output()?;
    if !boot.status.success() {
        bail!(
            "bootstrap failed: {}",
            String::from_utf8_lossy(&boot.stderr)
        );
    }
    let boot = String::from_utf8(boot.stdout)?;
    let key = json_string_field(&boot, "personal_api_key").context("no key in bootstrap output")?;
    let project = boot
        .split("\"project_id\":")
        .nth(1)
        .and_then(|rest| rest.split([',', '}']).next())
        .context("no project id in bootstrap output")?
        .to_owned();

    let port = TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
    let address = format!("127.0.0.1:{port}");
    let mut child = Command::new(&burrow)
        .arg("serve")
        .env("DATABASE_URL", &database_url)
        .env("BURROW_BIND", &address)
        .env("RUST_LOG", "warn")
        .stdout(Stdio::null())
        .spawn()?;
    let result = wait_until_healthy(&address).and_then(|()| {
        let surveys = format!("/api/projects/{project}/surveys/");
        let get = |name, path| Scenario {
            name,
            method: "GET",
            path,
            body: None,
        };
        let scenarios = [
            get("GET /_health", "/_health".into()),
            get("GET /api/projects/", "/api/projects/".into()),
            get(
                "GET /api/projects/{id}/",
                format!("/api/projects/{project}/"),
            ),
            Scenario {
                name: "POST surveys (+targeting flag)",
                method: "POST",
                path: surveys.clone(),
                body: Some(SURVEY_BODY),
            },
            get("GET surveys?limit=100", format!("{surveys}?limit=100")),
            get("GET surveys?search=9", format!("{surveys}?search=9")),
        ];
        println!("{requests} requests per scenario over {CONNECTIONS} keep-alive connections");
        for scenario in &scenarios {
            measure(&address, &key, scenario, requests)?;
        }
        Ok(())
    });
    stop(&mut child);
    result
}

fn wait_until_healthy(address: &str) -> anyhow::Result<()> {
    let deadline = Instant::now() + Duration::from_secs(30);
    while Instant::now() < deadline {
        if let Ok(mut stream) = TcpStream::connect(address)
            && send(&mut stream, "GET", "/_health", "", None).is_ok_and(|status| status == 200)
        {
            return Ok(());
        }
        thread::sleep(Duration::from_millis(100));
    }
    bail!("burrow did not become healthy at {address}")
}

fn measure(address: &str, key: &str, scenario: &Scenario, requests: usize) -> anyhow::Result<()> {
    let started = Instant::now();
    let per_connection = requests.div_ceil(CONNECTIONS);
    let workers: Vec<_> = (0..CONNECTIONS)
        .map(|connection| {
            let (address, key, method, path, body) = (
                address.to_owned(),
                key.to_owned(),
                scenario.method,
                scenario.path.clone(),
                scenario.body,
            );
            thread::spawn(move || -> anyhow::Result<Vec<Duration>> {
                let mut stream = TcpStream::connect(&address)?;
                // Requests are small writes; without this, Nagle's algorithm measures itself.
                stream.set_nodelay(true)?;
                let mut latencies = Vec::with_capacity(per_connection);
                for request in 0..per_connection {
                    let body = body.map(|b| {
                        b.replace(
                            "{n}",
                            &format!("{}-{connection}-{request}", std::process::id()),
                        )
                    });
                    let sent = Instant::now();
                    let status = send(&mut stream, method, &path, &key, body.as_deref())?;
                    if status >= 400 {
                        bail!("{method} {path} answered {status}");
                    }
                    latencies.push(sent.elapsed());
                }
                Ok(latencies)
            })
        })
        .collect();
    let mut latencies = Vec::with_capacity(requests);
    for worker in workers {
        latencies.extend(
            worker
                .join()
                .map_err(|_| anyhow::anyhow!("load thread panicked"))??,
        );
    }
    let elapsed = started.elapsed();
    latencies.sort();
    let percentile =
        |p: f64| latencies[((latencies.len() as f64 * p) as usize).min(latencies.len() - 1)];
    println!(
        "{:<28} {:>9.0} req/s   p50 {:>7.2} ms   p99 {:>7.2} ms",
        scenario.name,
        latencies.len() as f64 / elapsed.as_secs_f64(),
        percentile(0.50).as_secs_f64() * 1000.0,
        percentile(0.99).as_secs_f64() * 1000.0,
    );
    Ok(())
}

/// Sends one HTTP/1.1 request on a kept-alive connection and reads the whole response.
fn send(
    stream: &mut TcpStream,
    method: &str,
    path: &str,
    key: &str,
    body: Option<&str>,
) -> anyhow::Result<u16> {
    let auth = if key.is_empty() {
        String::new()
    } else {
        format!("Authorization: Bearer {key}\r\n")
    };
    let body = body.unwrap_or("");
    let request = format!(
        "{method} {path} HTTP/1.1\r\nHost: bench\r\n{auth}Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes())?;
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut status_line = String::new();
    reader.read_line(&mut status_line)?;
    let status: u16 = status_line
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .with_context(|| format!("bad status line {status_line:?}"))?;
    let mut length = 0usize;
    loop {
        let mut line = String::new();
        reader.read_line(&mut line)?;
        if line == "\r\n" || line.is_empty() {
            break;
        }
        if let Some((name, value)) = line.split_once(':')
            && name.eq_ignore_ascii_case("content-length")
        {
            length = value.trim().parse()?;
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body)?;
    Ok(status)
}

fn stop(child: &mut Child) {
    let _ = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status();
    let _ = child.wait();
}

//! Load from `wrk`, driven by a Lua script generated per scenario: it sets the method and headers,
//! builds a unique body for each write in `request()`, and in `done()` writes one JSON line of
//! counts and latency percentiles, which is all the bench reads of wrk's output. There is no
//! `response()` callback: defining one makes wrk parse every answer in Lua.

use std::fmt::Write as _;
use std::fs;
use std::path::Path;
use std::process::Command;

use anyhow::{Context as _, bail};
use serde::Deserialize;

use super::{CONCURRENCY, LOAD_THREADS};

/// Where a body takes the token that makes each request's body unique (a survey name).
pub(super) const UNIQUE: &str = "{unique}";
/// A request slower than this is a timeout, which fails the bench like any other error.
const TIMEOUT: &str = "5s";
/// The file `done()` writes its JSON line to (stdout when unset, for runs by hand).
const RESULT_VARIABLE: &str = "BENCH_WRK_RESULT";

/// What wrk sends for one scenario.
pub(super) struct Load {
    pub(super) method: &'static str,
    /// Request paths with their query, taken in turn; most scenarios have one.
    pub(super) paths: Vec<String>,
    /// A JSON body containing [`UNIQUE`].
    pub(super) body: Option<String>,
}

/// `done()`'s summary of one run. Latencies are in microseconds and, as everything wrk reports,
/// corrected for coordinated omission: a request that stalled for a second adds samples spread
/// over that second, so even a few stalls show in p99.
#[derive(Deserialize)]
pub(super) struct Outcome {
    pub(super) requests: u64,
    pub(super) duration_us: u64,
    pub(super) p50_us: u64,
    pub(super) p99_us: u64,
    /// Answers with a status over 399 (wrk counts no other status as an error).
    pub(super) status_errors: u64,
    pub(super) connect_errors: u64,
    pub(super) read_errors: u64,
    pub(super) write_errors: u64,
    pub(super) timeouts: u64,
}

impl Outcome {
    pub(super) fn errors(&self) -> u64 {
        self.status_errors
            + self.connect_errors
            + self.read_errors
            + self.write_errors
            + self.timeouts
    }

    pub(super) fn requests_per_second(&self) -> f64 {
        self.requests as f64 / (self.duration_us as f64 / 1e6)
    }

    /// The errors, in words: `3 of 1200 answers were 4xx/5xx, 1 read error`.
    pub(super) fn describe_errors(&self) -> String {
        let mut parts = Vec::new();
        if self.status_errors > 0 {
            parts.push(format!(
                "{} of {} answers were 4xx/5xx",
                self.status_errors, self.requests
            ));
        }
        for (count, what) in [
            (self.connect_errors, "connect error"),
            (self.read_errors, "read error"),
            (self.write_errors, "write error"),
            (self.timeouts, "timeout"),
        ] {
            if count > 0 {
                parts.push(format!(
                    "{count} {what}{}",
                    if count == 1 { "" } else { "s" }
                ));
            }
        }
        parts.join(", ")
    }
}

/// The Lua script for `load`, authenticated with `key`.
pub(super) fn script(name: &str, load: &Load, key: &str, url: &str) -> String {
    let mut lua = format!(
        "-- `cargo xtask bench`, scenario \"{name}\". Rerun by hand (prints a JSON line):\n\
         --   wrk {} -s <this file> {url} -- <unique tag>\n",
        arguments(10).join(" ")
    );
    let _ = writeln!(lua, "wrk.method = {}", lua_string(load.method));
    let _ = writeln!(
        lua,
        "wrk.headers[\"Authorization\"] = {}",
        lua_string(&format!("Bearer {key}"))
    );
    lua.push_str("wrk.headers[\"Content-Type\"] = \"application/json\"\n\n");
    if load.paths.len() > 1 || load.body.is_some() {
        lua.push_str("local paths = {\n");
        for path in &load.paths {
            let _ = writeln!(lua, "  {},", lua_string(path));
        }
        lua.push_str("}\n");
        match load
            .body
            .as_deref()
            .and_then(|body| body.split_once(UNIQUE))
        {
            Some((prefix, suffix)) => {
                let _ = writeln!(
                    lua,
                    "local body_prefix, body_suffix = {}, {}",
                    lua_string(prefix),
                    lua_string(suffix)
                );
            }
            None => lua.push_str("local body_prefix, body_suffix = nil, nil\n"),
        }
        lua.push_str(REQUEST);
    }
    lua.push_str(DONE);
    lua
}

/// Builds requests one by one: a path in turn and, for writes, a body with a unique token.
const REQUEST: &str = r#"
-- setup() runs in wrk's main state once per thread, before the thread's init().
local threads = 0
function setup(thread)
  threads = threads + 1
  thread:set("thread_number", threads)
end

local tag, sent = "run", 0
function init(args)
  tag = args[1] or tag
end

-- wrk's two threads start half the paths apart, so concurrent writes rarely wait on one row.
function request()
  sent = sent + 1
  local path = paths[(sent + thread_number * math.floor(#paths / 2)) % #paths + 1]
  local body = nil
  if body_prefix then
    body = body_prefix .. tag .. "-" .. thread_number .. "-" .. sent .. body_suffix
  end
  return wrk.format(nil, path, nil, body)
end
"#;

/// Reports the run as one JSON line (latencies in microseconds).
const DONE: &str = r#"
function done(summary, latency, requests)
  local errors = summary.errors
  local line = string.format(
    '{"requests":%d,"duration_us":%d,"p50_us":%d,"p99_us":%d,"status_errors":%d,'
      .. '"connect_errors":%d,"read_errors":%d,"write_errors":%d,"timeouts":%d}\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99),
    errors.status, errors.connect, errors.read, errors.write, errors.timeout)
  local path = os.getenv("BENCH_WRK_RESULT")
  if path then
    local file = assert(io.open(path, "w"))
    file:write(line)
    file:close()
  else
    io.write(line)
  end
end
"#;

/// Runs wrk for `seconds` with `script` against `url`; `tag` makes this run's bodies unique.
pub(super) fn run(
    script: &Path,
    url: &str,
    seconds: u32,
    tag: &str,
    result: &Path,
) -> anyhow::Result<Outcome> {
    let _ = fs::remove_file(result);
    let output = Command::new("wrk")
        .args(arguments(seconds))
        .arg("-s")
        .arg(script)
        .arg(url)
        .args(["--", tag])
        .env(RESULT_VARIABLE, result)
        .output()
        .context("starting wrk")?;
    if !output.status.success() {
        bail!(
            "wrk -s {} failed ({}): {}{}",
            script.display(),
            output.status,
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
    }
    let line = fs::read_to_string(result)
        .with_context(|| format!("wrk wrote no result to {}", result.display()))?;
    serde_json::from_str(&line).with_context(|| format!("reading wrk's result {line:?}"))
}

fn arguments(seconds: u32) -> Vec<String> {
    vec![
        format!("-t{LOAD_THREADS}"),
        format!("-c{CONCURRENCY}"),
        format!("-d{seconds}s"),
        "--latency".into(),
        "--timeout".into(),
        TIMEOUT.into(),
    ]
}

/// A Lua long string holding `text` verbatim, its level chosen so `text` cannot close it.
fn lua_string(text: &str) -> String {
    let level = (0..)
        .map(|n| "=".repeat(n))
        .find(|equals| !text.contains(&format!("]{equals}]")))
        .unwrap_or_default();
    format!("[{level}[{text}]{level}]")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lua_strings_hold_any_text_verbatim() {
        assert_eq!(lua_string("/api/x"), "[[/api/x]]");
        assert_eq!(lua_string(r#"{"a": [["b"]]}"#), r#"[=[{"a": [["b"]]}]=]"#);
    }

    #[test]
    fn writes_get_a_request_function_and_reads_do_not() {
        let load = |method, body: Option<&str>| Load {
            method,
            paths: vec!["/p/".into()],
            body: body.map(str::to_owned),
        };
        let read = script("read", &load("GET", None), "phx_k", "http://h/p/");
        assert!(!read.contains("function request"));
        assert!(read.contains("Bearer phx_k"));
        let write = script(
            "write",
            &load("POST", Some(r#"{"name": "x {unique}"}"#)),
            "k",
            "u",
        );
        assert!(write.contains(r#"local body_prefix, body_suffix = [[{"name": "x ]], [["}]]"#));
        assert!(write.contains("function request"));
    }

    #[test]
    fn done_writes_where_run_reads_and_in_the_shape_outcome_reads() {
        assert!(DONE.contains(&format!("os.getenv(\"{RESULT_VARIABLE}\")")));
        let line = r#"{"requests":10,"duration_us":2000000,"p50_us":1500,"p99_us":9000,"status_errors":1,"connect_errors":0,"read_errors":0,"write_errors":0,"timeouts":2}"#;
        let outcome: Outcome = serde_json::from_str(line).unwrap();
        assert_eq!(outcome.requests_per_second(), 5.0);
        assert_eq!(outcome.errors(), 3);
        assert_eq!(
            outcome.describe_errors(),
            "1 of 10 answers were 4xx/5xx, 2 timeouts"
        );
    }
}

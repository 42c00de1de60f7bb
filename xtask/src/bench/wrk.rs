//! Load from `wrk`, driven by a Lua script generated per scenario: it sets the method and headers,
//! builds each request's path and body in `request()` when they vary, and in `done()` writes one
//! JSON line of counts and latency percentiles, which is all the bench reads of wrk's output.
//! There is no `response()` callback: defining one makes wrk parse every answer in Lua.

use std::fmt::Write as _;
use std::fs;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use anyhow::{Context as _, bail};
use serde::Deserialize;
use uuid::Uuid;

use super::{CONCURRENCY, LOAD_THREADS};

/// Where a body takes a token no other item of the run has: a UUID, so it serves as an event's
/// `uuid` as well as in a survey's name.
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
    pub(super) body: Option<Body>,
    /// Whether requests carry the personal API key; SDK requests name their project by its
    /// public token instead, and send no `Authorization`.
    pub(super) personal_key: bool,
}

/// A JSON request body: `head`, then `items` copies of `item` joined by commas, then `tail` (a
/// capture batch is `{"batch": [` + 100 events + `]}`; most bodies are one item with neither).
///
/// In an item, [`UNIQUE`] becomes a UUID of its own, and each list's placeholder one of the list's
/// values, taken in turn item by item (the same value wherever it appears in one item).
pub(super) struct Body {
    head: String,
    item: String,
    items: usize,
    tail: String,
    lists: Vec<List>,
}

/// Values a placeholder takes in turn, such as the distinct ids of the seeded persons.
struct List {
    placeholder: &'static str,
    values: Vec<String>,
}

/// A piece of an item.
#[derive(Debug, PartialEq, Eq)]
enum Part<'a> {
    Text(&'a str),
    Unique,
    /// A value of the list at this index.
    Value(usize),
}

impl Body {
    /// A body of one item.
    pub(super) fn one(item: String) -> Self {
        Self::batch(String::new(), item, 1, String::new())
    }

    /// `head`, `items` copies of `item` joined by commas, `tail`.
    pub(super) fn batch(head: String, item: String, items: usize, tail: String) -> Self {
        Self {
            head,
            item,
            items,
            tail,
            lists: Vec::new(),
        }
    }

    /// Makes `placeholder` in the item take `values` in turn.
    pub(super) fn taking(mut self, placeholder: &'static str, values: Vec<String>) -> Self {
        self.lists.push(List {
            placeholder,
            values,
        });
        self
    }

    /// One body, as a probe sends it: fresh UUIDs, each list's first value.
    pub(super) fn sample(&self) -> String {
        let items: Vec<String> = (0..self.items)
            .map(|_| {
                self.parts()
                    .iter()
                    .map(|part| match part {
                        Part::Text(text) => (*text).to_owned(),
                        Part::Unique => Uuid::now_v7().to_string(),
                        Part::Value(list) => self.lists[*list].values[0].clone(),
                    })
                    .collect()
            })
            .collect();
        format!("{}{}{}", self.head, items.join(","), self.tail)
    }

    /// The item cut at its placeholders.
    fn parts(&self) -> Vec<Part<'_>> {
        let mut parts = Vec::new();
        let mut rest = self.item.as_str();
        loop {
            let next = self
                .lists
                .iter()
                .enumerate()
                .map(|(index, list)| (list.placeholder, Part::Value(index)))
                .chain([(UNIQUE, Part::Unique)])
                .filter_map(|(placeholder, part)| {
                    rest.find(placeholder)
                        .map(|at| (at, placeholder.len(), part))
                })
                .min_by_key(|(at, _, _)| *at);
            let Some((at, length, part)) = next else {
                break;
            };
            if at > 0 {
                parts.push(Part::Text(&rest[..at]));
            }
            parts.push(part);
            rest = &rest[at + length..];
        }
        if !rest.is_empty() {
            parts.push(Part::Text(rest));
        }
        parts
    }
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

    pub(super) fn p99(&self) -> Duration {
        Duration::from_micros(self.p99_us)
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

/// The Lua script for `load`, authenticated with `key` when the load sends one.
pub(super) fn script(name: &str, load: &Load, key: &str, url: &str) -> String {
    let mut lua = format!(
        "-- `cargo xtask bench`, scenario \"{name}\". Rerun by hand (prints a JSON line):\n\
         --   wrk {} -s <this file> {url}\n",
        arguments(10).join(" ")
    );
    let _ = writeln!(lua, "wrk.method = {}", lua_string(load.method));
    if load.personal_key {
        let _ = writeln!(
            lua,
            "wrk.headers[\"Authorization\"] = {}",
            lua_string(&format!("Bearer {key}"))
        );
    }
    lua.push_str("wrk.headers[\"Content-Type\"] = \"application/json\"\n\n");
    if load.paths.len() > 1 || load.body.is_some() {
        lua.push_str("local paths = {\n");
        for path in &load.paths {
            let _ = writeln!(lua, "  {},", lua_string(path));
        }
        lua.push_str("}\n");
        match &load.body {
            Some(body) => lua.push_str(&body_lua(body)),
            None => lua.push_str("local items = 0\n"),
        }
        lua.push_str(REQUEST);
    }
    lua.push_str(DONE);
    lua
}

/// The body's pieces as Lua tables: in `item_parts`, a string is text, 0 the unique token and
/// `n` a value of `lists[n]`.
fn body_lua(body: &Body) -> String {
    let mut lua = format!(
        "local head, tail, items = {}, {}, {}\nlocal item_parts = {{",
        lua_string(&body.head),
        lua_string(&body.tail),
        body.items
    );
    for part in body.parts() {
        let _ = match part {
            Part::Text(text) => write!(lua, "{}, ", lua_string(text)),
            Part::Unique => write!(lua, "0, "),
            Part::Value(list) => write!(lua, "{}, ", list + 1),
        };
    }
    lua.push_str("}\nlocal lists = {\n");
    for list in &body.lists {
        lua.push_str("  {");
        for value in &list.values {
            let _ = write!(lua, "{}, ", lua_string(value));
        }
        lua.push_str("},\n");
    }
    lua.push_str("}\n");
    lua
}

/// Builds requests one by one: a path in turn and, for bodies, each item with its own UUID and
/// the next values of the lists.
const REQUEST: &str = r#"
-- setup() runs in wrk's main state once per thread, before the thread's init().
local threads = 0
function setup(thread)
  threads = threads + 1
  thread:set("thread_number", threads)
end

-- Eight hex digits that set this run's UUIDs apart from other runs' (the bench passes random ones).
local run, sent = string.format("%08x", os.time() % 2147483648), 0
function init(args)
  run = args[1] or run
end

-- The k-th of `values` for this thread: wrk's two threads start half the values apart, so
-- concurrent writes rarely wait on one row.
local function nth(values, k)
  return values[(k + thread_number * math.floor(#values / 2)) % #values + 1]
end

-- Item k (from 0) of this thread's run: its UUID and its lists' values follow from k.
local function item(k)
  local out = {}
  for i, part in ipairs(item_parts) do
    if type(part) == "string" then
      out[i] = part
    elseif part == 0 then
      out[i] = string.format("%s-%04x-4000-8000-%012x", run, thread_number, k)
    else
      out[i] = nth(lists[part], k)
    end
  end
  return table.concat(out)
end

function request()
  sent = sent + 1
  local body = nil
  if items > 0 then
    local made = {}
    for i = 1, items do
      made[i] = item((sent - 1) * items + i - 1)
    end
    body = head .. table.concat(made, ",") .. tail
  end
  return wrk.format(nil, nth(paths, sent), nil, body)
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

/// Runs wrk for `seconds` with `script` against `url`, with UUIDs no earlier run made.
pub(super) fn run(
    script: &Path,
    url: &str,
    seconds: u32,
    result: &Path,
) -> anyhow::Result<Outcome> {
    let _ = fs::remove_file(result);
    let run_id = &Uuid::new_v4().simple().to_string()[..8];
    let output = Command::new("wrk")
        .args(arguments(seconds))
        .arg("-s")
        .arg(script)
        .arg(url)
        .args(["--", run_id])
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

/// A Lua long string holding `text` verbatim, its level chosen so nothing before the end closes
/// it (not even `text`'s last `]` with the closing bracket's first).
fn lua_string(text: &str) -> String {
    let level = (0..)
        .map(|n| "=".repeat(n))
        .find(|equals| {
            let closing = format!("]{equals}]");
            format!("{text}{closing}").find(&closing) == Some(text.len())
        })
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
        assert_eq!(lua_string("]"), "[=[]]=]");
        assert_eq!(lua_string("]="), "[[]=]]");
    }

    #[test]
    fn varying_requests_get_a_request_function_and_fixed_ones_do_not() {
        let load = |method, body: Option<Body>, personal_key| Load {
            method,
            paths: vec!["/p/".into()],
            body,
            personal_key,
        };
        let read = script("read", &load("GET", None, true), "phx_k", "http://h/p/");
        assert!(!read.contains("function request"));
        assert!(read.contains("Bearer phx_k"));
        let body = Body::one(r#"{"name": "x {unique}"}"#.into());
        let write = script("write", &load("POST", Some(body), false), "phx_k", "u");
        assert!(write.contains(r#"local item_parts = {[[{"name": "x ]], 0, [["}]], }"#));
        assert!(write.contains("function request"));
        assert!(!write.contains("Authorization"));
    }

    #[test]
    fn items_are_cut_at_every_placeholder_and_lists_are_written_out() {
        let body = Body::batch(
            "[".into(),
            r#"{"s": "{survey}", "p": "{person}", "u": "{unique}", "again": "{survey}"}"#.into(),
            3,
            "]".into(),
        )
        .taking("{person}", vec!["p0".into(), "p1".into()])
        .taking("{survey}", vec!["s0".into()]);
        assert_eq!(
            body.parts(),
            [
                Part::Text(r#"{"s": ""#),
                Part::Value(1),
                Part::Text(r#"", "p": ""#),
                Part::Value(0),
                Part::Text(r#"", "u": ""#),
                Part::Unique,
                Part::Text(r#"", "again": ""#),
                Part::Value(1),
                Part::Text(r#""}"#),
            ]
        );
        let lua = body_lua(&body);
        assert!(lua.starts_with("local head, tail, items = [[[]], [=[]]=], 3\n"));
        assert!(lua.contains("  {[[p0]], [[p1]], },\n  {[[s0]], },\n"));
        let sample: Vec<serde_json::Value> = serde_json::from_str(&body.sample()).unwrap();
        assert_eq!(sample.len(), 3);
        assert_eq!(sample[0]["again"], "s0");
        assert_ne!(sample[0]["u"], sample[1]["u"]);
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

//! Finding or starting the Redis the tests share rate-limit counters through.
//!
//! Order: `BURROW_TEST_REDIS_URL` if set; else whatever answers on 127.0.0.1:6379; else a
//! throwaway `redis-server` (no persistence) started in the background on that port.

use std::env;
use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::{Context as _, bail};

use crate::postgres::answers;
use crate::{run, target_dir};

const LOCAL_HOST: &str = "127.0.0.1";
const LOCAL_PORT: u16 = 6379;

/// The URL of a Redis that answers, starting one if nothing does.
pub(crate) fn ensure() -> anyhow::Result<String> {
    if let Ok(url) = env::var("BURROW_TEST_REDIS_URL") {
        return Ok(url);
    }
    let url = format!("redis://{LOCAL_HOST}:{LOCAL_PORT}");
    if answers(LOCAL_HOST, LOCAL_PORT) {
        eprintln!("xtask: using the Redis already running at {LOCAL_HOST}:{LOCAL_PORT}");
        return Ok(url);
    }
    let dir = target_dir().join("redis");
    std::fs::create_dir_all(&dir)?;
    eprintln!("xtask: starting redis-server on {LOCAL_HOST}:{LOCAL_PORT}");
    run(Command::new("redis-server")
        .args(["--bind", LOCAL_HOST, "--port", &LOCAL_PORT.to_string()])
        .args(["--save", "", "--appendonly", "no", "--daemonize", "yes"])
        .arg("--dir")
        .arg(&dir)
        .arg("--logfile")
        .arg(dir.join("redis.log")))
    .context("no Redis answers at 127.0.0.1:6379 and redis-server could not be started; install it (Debian: apt-get install redis-server) or set BURROW_TEST_REDIS_URL")?;
    let deadline = Instant::now() + Duration::from_secs(10);
    while !answers(LOCAL_HOST, LOCAL_PORT) {
        if Instant::now() > deadline {
            bail!(
                "redis-server started but does not answer; see {}",
                dir.join("redis.log").display()
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    Ok(url)
}

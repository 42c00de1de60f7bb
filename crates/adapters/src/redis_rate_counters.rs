//! Rate-limit counters in Redis, so every node behind a load balancer counts a key's requests
//! against one shared limit.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use anyhow::{Context as _, anyhow};
use async_trait::async_trait;
use domain::Unexpected;
use domain::rate_limit::{Admission, RateCounters, Window};
use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use redis::{Client, Script};

/// Checks every window of a key and, only when all have room, counts the request in each; one
/// script, so it is atomic across nodes. A window's counter expires when the window ends.
/// KEYS: one counter per window. ARGV: limit and period (ms) of each window, in turn.
/// Returns 0 when admitted, else the milliseconds until the fullest window ends.
const ADMIT: &str = r"
local wait = 0
for i, key in ipairs(KEYS) do
  local limit = tonumber(ARGV[2 * i - 1])
  local count = tonumber(redis.call('GET', key) or '0')
  if count >= limit then
    local ttl = redis.call('PTTL', key)
    if ttl < 0 then
      ttl = tonumber(ARGV[2 * i])
      redis.call('PEXPIRE', key, ttl)
    end
    if ttl > wait then wait = ttl end
  end
end
if wait > 0 then return wait end
for i, key in ipairs(KEYS) do
  if redis.call('INCR', key) == 1 then
    redis.call('PEXPIRE', key, ARGV[2 * i])
  end
end
return 0
";

/// How long one Redis call (or connection attempt) may take before the request goes on without
/// it; a limiter must never be why the API is slow.
const TIMEOUT: Duration = Duration::from_millis(250);

/// After a failed connection attempt, requests go on without Redis for this long before one of
/// them tries again, so an outage costs no request a timeout.
const RETRY_AFTER: Duration = Duration::from_secs(1);

/// Counters shared through Redis.
pub struct RedisRateCounters {
    client: Client,
    script: Script,
    connection: Mutex<Connection>,
}

enum Connection {
    Up(ConnectionManager),
    Down { retry_at: Instant },
}

impl RedisRateCounters {
    /// Counters at `url` (`redis://host:port/db`). Connects on first use, so a node starts
    /// whether or not Redis is up.
    ///
    /// # Errors
    /// When the URL is not a Redis URL.
    pub fn new(url: &str) -> anyhow::Result<Self> {
        Ok(Self {
            client: Client::open(url).context("parsing the Redis URL")?,
            script: Script::new(ADMIT),
            connection: Mutex::new(Connection::Down {
                retry_at: Instant::now(),
            }),
        })
    }

    /// A live connection, or an error at once while a recent attempt failed.
    async fn connection(&self) -> anyhow::Result<ConnectionManager> {
        {
            let mut state = self
                .connection
                .lock()
                .map_err(|_| anyhow!("the Redis connection lock is poisoned"))?;
            match &*state {
                Connection::Up(manager) => return Ok(manager.clone()),
                Connection::Down { retry_at } if Instant::now() < *retry_at => {
                    return Err(anyhow!("Redis was unreachable moments ago"));
                }
                Connection::Down { .. } => {
                    // This request tries; the others go on without waiting for it.
                    *state = Connection::Down {
                        retry_at: Instant::now() + RETRY_AFTER,
                    };
                }
            }
        }
        let config = ConnectionManagerConfig::new()
            .set_connection_timeout(TIMEOUT)
            .set_response_timeout(TIMEOUT)
            .set_number_of_retries(1);
        let manager = tokio::time::timeout(
            TIMEOUT * 2,
            ConnectionManager::new_with_config(self.client.clone(), config),
        )
        .await
        .context("connecting to Redis timed out")?
        .context("connecting to Redis")?;
        if let Ok(mut state) = self.connection.lock() {
            *state = Connection::Up(manager.clone());
        }
        Ok(manager)
    }

    async fn try_admit(&self, subject: &str, windows: &[Window]) -> anyhow::Result<Admission> {
        let mut connection = self.connection().await?;
        let mut invocation = self.script.prepare_invoke();
        for window in windows {
            let period_ms = u64::try_from(window.period.as_millis()).unwrap_or(u64::MAX);
            // A hash tag keeps a key's counters in one slot of a Redis Cluster.
            invocation
                .key(format!("burrow:rate:{{{subject}}}:{period_ms}"))
                .arg(window.limit)
                .arg(period_ms);
        }
        let counted = tokio::time::timeout(TIMEOUT, invocation.invoke_async(&mut connection))
            .await
            .context("counting in Redis timed out")
            .and_then(|answer| answer.context("counting in Redis"));
        let wait_ms: u64 = match counted {
            Ok(wait_ms) => wait_ms,
            Err(error) => {
                // Drop the connection and let requests go on without Redis for a while, rather
                // than each waiting out a timeout on a server that does not answer.
                if let Ok(mut state) = self.connection.lock() {
                    *state = Connection::Down {
                        retry_at: Instant::now() + RETRY_AFTER,
                    };
                }
                return Err(error);
            }
        };
        Ok(if wait_ms == 0 {
            Admission::Admitted
        } else {
            Admission::Throttled {
                retry_after: Duration::from_millis(wait_ms),
            }
        })
    }
}

#[async_trait]
impl RateCounters for RedisRateCounters {
    async fn admit(&self, subject: &str, windows: &[Window]) -> Result<Admission, Unexpected> {
        self.try_admit(subject, windows)
            .await
            .map_err(Unexpected::new)
    }
}

//! Hearing committed changes to what the SDK snapshots hold. Triggers announce each change to a
//! project's flags, surveys or settings on the channel `burrow_sdk` when it commits (migration
//! `sdk_change_notifications`); one connection per node, outside the pool, `LISTEN`s there and
//! tells the SDK service. NOTIFY reaches every node connected to the database, so nodes behind
//! a load balancer need nothing else to agree.

use std::pin::pin;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context as _, anyhow};
use diesel_async::{AsyncConnection as _, AsyncPgConnection, RunQueryDsl as _};
use domain::sdk::SnapshotInvalidation;
use domain::tenancy::ProjectId;
use futures_util::StreamExt as _;

use crate::postgres::database::Database;

/// The channel the triggers announce changes on.
const CHANNEL: &str = "burrow_sdk";
/// How long the connection may stay silent before it is asked whether it is still there: a
/// connection that died without closing (a lost network path) would otherwise look like one
/// with nothing to say, and the node would keep serving what it no longer hears about.
const HEARTBEAT: Duration = Duration::from_secs(5);
/// The first wait before reconnecting, doubled on each failure up to [`MAX_RETRY_DELAY`].
const FIRST_RETRY_DELAY: Duration = Duration::from_millis(100);
const MAX_RETRY_DELAY: Duration = Duration::from_secs(5);

/// Listens for changes for as long as the process runs, reconnecting when the connection is
/// lost; the service is told when it can hear changes and when it cannot. Spawn it once per
/// node.
pub async fn listen_for_sdk_changes(
    database: Database,
    invalidation: Arc<dyn SnapshotInvalidation>,
) {
    let mut delay = FIRST_RETRY_DELAY;
    loop {
        let error = listen(&database.url, &*invalidation, &mut delay).await;
        invalidation.deaf();
        tracing::warn!(
            error = format!("{error:#}"),
            retry_in_ms = delay.as_millis(),
            "SDK change listener disconnected; SDK requests read storage until it is back"
        );
        tokio::time::sleep(delay).await;
        delay = (delay * 2).min(MAX_RETRY_DELAY);
    }
}

/// One connection's life: connect, listen, pass on what is heard until the connection fails.
/// Resets `delay` once listening, so only repeated failures back off.
async fn listen(
    url: &str,
    invalidation: &dyn SnapshotInvalidation,
    delay: &mut Duration,
) -> anyhow::Error {
    let mut connection = match AsyncPgConnection::establish(url).await {
        Ok(connection) => connection,
        Err(error) => return anyhow!(error).context("connecting"),
    };
    if let Err(error) = diesel::sql_query(format!("LISTEN {CHANNEL}"))
        .execute(&mut connection)
        .await
    {
        return anyhow!(error).context("LISTEN");
    }
    invalidation.listening();
    *delay = FIRST_RETRY_DELAY;
    tracing::info!(channel = CHANNEL, "SDK change listener listening");
    loop {
        // Notifications queue on the connection, so none is lost between two streams.
        let next = {
            let mut notifications = pin!(connection.notifications_stream());
            tokio::time::timeout(HEARTBEAT, notifications.next()).await
        };
        match next {
            Ok(Some(Ok(notification))) => match notification.payload.parse() {
                Ok(project) => invalidation.changed(ProjectId(project)),
                // Not ours to read: something changed, but not saying what; forget it all.
                Err(_) => {
                    invalidation.deaf();
                    invalidation.listening();
                }
            },
            Ok(Some(Err(error))) => return anyhow!(error).context("reading notifications"),
            Ok(None) => return anyhow!("the connection closed"),
            Err(_silent) => {
                if let Err(error) = still_there(&mut connection).await {
                    return error;
                }
            }
        }
    }
}

async fn still_there(connection: &mut AsyncPgConnection) -> anyhow::Result<()> {
    tokio::time::timeout(HEARTBEAT, diesel::sql_query("SELECT 1").execute(connection))
        .await
        .context("no answer to the heartbeat")?
        .context("the heartbeat failed")?;
    Ok(())
}

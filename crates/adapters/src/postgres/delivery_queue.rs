//! `DeliveryQueue` over `webhook_outbox`, `webhook_deliveries`, `webhook_attempts` and
//! `webhook_graveyard`: captured answers fanned out into deliveries within the queue's bounds,
//! each webhook's head claimed (projects in turn) and settled, deleted webhooks' deliveries
//! purged and finished ones forgotten, each in bounded batches. The outbox is written by the
//! capture statement (`survey_responses/capture.rs`).

use std::time::Duration;

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use diesel::QueryableByName;
use diesel::sql_types::{
    Array, Bool, Bytea, Double, Int2, Int4, Int8, Jsonb, Nullable, Text, Timestamptz,
    Uuid as SqlUuid, Varchar,
};
use diesel_async::RunQueryDsl;
use domain::Unexpected;
use domain::ports::Transaction as _;
use domain::survey::Questions;
use domain::survey_response::{SurveyEvent, SurveyEventKind};
use domain::tenancy::ProjectId;
use domain::webhook::{
    DeliveryId, DeliveryKind, DeliveryQueue, DeliveryState, DisabledReason, Dropped, DueDelivery,
    FanOut, NextStep, PayloadSurvey, QueueBounds, ResponseEventSources, Settlement, SigningTarget,
    WebhookFormat, WebhookId, WebhookSecret,
};
use serde_json::Value;
use uuid::Uuid;

use crate::postgres::errors::StorageContext;
use crate::postgres::prepared::prepared;
use crate::postgres::transaction::PgTransaction;
use crate::postgres::webhooks::attempt_columns;

crate::postgres::over_the_pool! {
    /// The webhook delivery queue, in PostgreSQL.
    PgDeliveryQueue
}

impl PgDeliveryQueue {
    /// PostgreSQL's plan for a claim, so tests can show it reads each webhook's head through an
    /// index and scans no backlog, however large.
    #[cfg(feature = "testing")]
    pub async fn claim_plan(&self) -> Result<String, Unexpected> {
        let mut conn = self.database.connection().await?;
        let lines: Vec<crate::postgres::query_plan::PlanLine> =
            diesel::sql_query(format!("EXPLAIN {CLAIM_DUE}"))
                .bind::<Int8, _>(32)
                .bind::<Double, _>(60.0)
                .bind::<Int8, _>(8)
                .load(&mut conn)
                .await
                .during("explaining the claim")?;
        Ok(lines
            .into_iter()
            .map(|l| l.line)
            .collect::<Vec<_>>()
            .join("\n"))
    }
}

/// A claimed delivery with what its first attempt builds the body from.
#[derive(QueryableByName)]
struct ClaimedRow {
    #[diesel(sql_type = SqlUuid)]
    id: Uuid,
    #[diesel(sql_type = SqlUuid)]
    webhook_id: Uuid,
    #[diesel(sql_type = Int4)]
    project_id: i32,
    #[diesel(sql_type = Varchar)]
    kind: String,
    #[diesel(sql_type = Nullable<Bytea>)]
    body: Option<Vec<u8>>,
    #[diesel(sql_type = Int4)]
    attempts_made: i32,
    #[diesel(sql_type = Text)]
    url: String,
    #[diesel(sql_type = Varchar)]
    format: String,
    #[diesel(sql_type = Text)]
    secret: String,
    #[diesel(sql_type = Nullable<Text>)]
    previous_secret: Option<String>,
    #[diesel(sql_type = Nullable<SqlUuid>)]
    event_uuid: Option<Uuid>,
    #[diesel(sql_type = Nullable<Varchar>)]
    survey_id: Option<String>,
    #[diesel(sql_type = Nullable<Varchar>)]
    distinct_id: Option<String>,
    #[diesel(sql_type = Nullable<Timestamptz>)]
    timestamp: Option<DateTime<Utc>>,
    #[diesel(sql_type = Nullable<Varchar>)]
    submission_id: Option<String>,
    #[diesel(sql_type = Nullable<Jsonb>)]
    properties: Option<Value>,
    #[diesel(sql_type = Nullable<Varchar>)]
    survey_name: Option<String>,
    #[diesel(sql_type = Nullable<Jsonb>)]
    questions: Option<Value>,
    #[diesel(sql_type = Array<SqlUuid>)]
    submission_events: Vec<Uuid>,
}

impl ClaimedRow {
    fn into_due(self) -> DueDelivery {
        let mut secrets = vec![WebhookSecret::from_stored(self.secret)];
        secrets.extend(self.previous_secret.map(WebhookSecret::from_stored));
        let event = match (
            self.event_uuid,
            self.distinct_id,
            self.timestamp,
            self.properties,
        ) {
            (Some(uuid), Some(distinct_id), Some(timestamp), Some(Value::Object(properties))) => {
                Some(SurveyEvent {
                    uuid,
                    kind: SurveyEventKind::Sent,
                    survey_id: self.survey_id.clone().unwrap_or_default(),
                    distinct_id,
                    timestamp,
                    submission_id: self.submission_id,
                    properties,
                })
            }
            _ => None,
        };
        let sources = match (event, DeliveryKind::parse(&self.kind)) {
            (Some(event), Some(DeliveryKind::Response(event_type))) => Some(ResponseEventSources {
                event_type,
                project: ProjectId(self.project_id),
                event,
                survey: self.survey_name.map(|name| PayloadSurvey {
                    name,
                    questions: self.questions.as_ref().and_then(|questions| {
                        serde_json::from_value::<Questions>(questions.clone()).ok()
                    }),
                }),
                submission_events: self.submission_events,
            }),
            _ => None,
        };
        DueDelivery {
            id: DeliveryId(self.id),
            webhook: WebhookId(self.webhook_id),
            target: SigningTarget {
                url: self.url,
                format: WebhookFormat::parse(&self.format).unwrap_or_default(),
                secrets,
            },
            body: self.body,
            sources,
            attempts_made: self.attempts_made.unsigned_abs(),
        }
    }
}

/// Claims up to `$1` due deliveries, leasing them for `$2` seconds, at most `$3` of a project.
/// Each enabled webhook's head (its oldest pending delivery: one probe of
/// `webhook_deliveries_head_idx`, so the cost follows the number of webhooks, not their backlog)
/// is a candidate when it is due; a project's candidates take turns by due time, and every
/// project's first turn comes before any project's second, so one project's backlog delays only
/// itself. The heads are locked with `SKIP LOCKED` (every node claims) and checked again once
/// locked; a claimed delivery stays pending with a later `next_attempt_at`, which keeps its
/// webhook's later deliveries waiting behind it. Before a first attempt it brings what the body
/// is built from: the event, its survey, and the sends of its submission up to it.
const CLAIM_DUE: &str = "
WITH heads AS MATERIALIZED (
    SELECT h.id, h.seq, h.next_attempt_at,
           row_number() OVER (PARTITION BY w.project_id ORDER BY h.next_attempt_at, h.seq) AS turn
    FROM webhooks w
    CROSS JOIN LATERAL (
        SELECT d.id, d.seq, d.next_attempt_at FROM webhook_deliveries d
        WHERE d.webhook_id = w.id AND d.state = 'pending'
        ORDER BY d.seq
        LIMIT 1
    ) h
    WHERE w.enabled AND h.next_attempt_at <= now()
),
due AS (
    SELECT d.id FROM heads
    JOIN webhook_deliveries d ON d.id = heads.id
    WHERE heads.turn <= $3 AND d.state = 'pending' AND d.next_attempt_at <= now()
    ORDER BY heads.turn, heads.next_attempt_at, heads.seq
    LIMIT $1
    FOR UPDATE OF d SKIP LOCKED
),
claimed AS (
    UPDATE webhook_deliveries d SET next_attempt_at = now() + make_interval(secs => $2)
    FROM due WHERE d.id = due.id
    RETURNING d.id, d.webhook_id, d.project_id, d.kind, d.body, d.attempts_made, d.event_uuid,
              d.survey_id
)
SELECT c.id, c.webhook_id, c.project_id, c.kind, c.body, c.attempts_made, w.url, w.format,
       w.secret,
       CASE WHEN w.previous_secret_expires_at > now() THEN w.previous_secret END
           AS previous_secret,
       c.event_uuid, c.survey_id, e.distinct_id, e.timestamp, e.submission_id, e.properties,
       s.name AS survey_name, s.questions,
       CASE
           WHEN e.uuid IS NULL THEN '{}'::uuid[]
           WHEN e.submission_id IS NULL THEN ARRAY[e.uuid]
           ELSE ARRAY(
               SELECT x.uuid FROM survey_events x
               WHERE x.project_id = e.project_id AND x.survey_id = e.survey_id
                 AND x.event = 'survey sent' AND x.submission_id = e.submission_id
                 AND (x.timestamp, x.uuid) <= (e.timestamp, e.uuid)
               ORDER BY x.timestamp, x.uuid)
       END AS submission_events
FROM claimed c
JOIN webhooks w ON w.id = c.webhook_id
LEFT JOIN survey_events e
    ON c.body IS NULL AND e.project_id = c.project_id AND e.uuid = c.event_uuid
LEFT JOIN surveys s
    ON c.body IS NULL AND s.project_id = c.project_id
   AND s.id = CASE WHEN c.survey_id ~* '^[0-9a-f]{8}-?([0-9a-f]{4}-?){3}[0-9a-f]{12}$'
                   THEN c.survey_id::uuid END";

/// Stores one attempt (`$1` the delivery) and its consequences in one statement: the delivery's
/// state, due time (unchanged when `$7` is null), count and body (kept from the first attempt);
/// the webhook's failure count (reset by a delivered attempt) and, when `$10` names a reason,
/// the webhook switched off. A delivery deleted meanwhile (with its webhook) stores nothing.
const SETTLE: &str = "
WITH delivery AS (
    UPDATE webhook_deliveries
    SET state = $6, next_attempt_at = coalesce($7, next_attempt_at),
        attempts_made = attempts_made + 1, body = coalesce(body, $8)
    WHERE id = $1
    RETURNING webhook_id
),
attempt AS (
    INSERT INTO webhook_attempts (delivery_id, attempted_at, status_code, error, duration_ms)
    SELECT $1, $2, $3, $4, $5 FROM delivery
)
UPDATE webhooks w
SET consecutive_failures = CASE WHEN $9 THEN 0 ELSE w.consecutive_failures + 1 END,
    enabled = w.enabled AND $10::varchar IS NULL,
    disabled_reason = coalesce($10, w.disabled_reason)
FROM delivery WHERE w.id = delivery.webhook_id";

/// The key of the transaction-level advisory lock a fan-out holds, so one runs at a time across
/// nodes and each webhook's deliveries are made in order ("burrow.webhook.fan_out").
const FAN_OUT_LOCK: &str = "SELECT pg_try_advisory_xact_lock(7366102519488223001) AS taken";

/// Takes up to `$1` of each project's oldest outbox entries (the projects found by a loose
/// index scan of `webhook_outbox_project_idx`: one probe per project with entries, however many
/// it has) and makes their deliveries for the project's enabled webhooks subscribed to each kind
/// and survey, in each webhook's order (capture order, then created/updated before completed);
/// entries whose event was deleted make none. Answers how many entries each project gave (no
/// webhook) and which webhooks got deliveries, how many.
const FAN_OUT: &str = "
WITH RECURSIVE projects AS (
    (SELECT project_id FROM webhook_outbox ORDER BY project_id LIMIT 1)
    UNION ALL
    SELECT (SELECT o.project_id FROM webhook_outbox o WHERE o.project_id > p.project_id
            ORDER BY o.project_id LIMIT 1)
    FROM projects p WHERE p.project_id IS NOT NULL
),
taken AS (
    DELETE FROM webhook_outbox o
    USING (
        SELECT t.seq FROM projects p
        CROSS JOIN LATERAL (
            SELECT x.seq FROM webhook_outbox x WHERE x.project_id = p.project_id
            ORDER BY x.seq LIMIT $1
        ) t
        WHERE p.project_id IS NOT NULL
    ) picked
    WHERE o.seq = picked.seq
    RETURNING o.seq, o.project_id, o.event_uuid, o.survey_id, o.submission_key, o.created,
              o.completes
),
made AS (
    INSERT INTO webhook_deliveries
        (id, webhook_id, project_id, kind, event_uuid, survey_id, submission_key)
    SELECT gen_random_uuid(), w.id, t.project_id, k.kind, t.event_uuid, t.survey_id,
           t.submission_key
    FROM taken t
    CROSS JOIN LATERAL (VALUES
        (1, CASE WHEN t.created THEN 'survey_response.created' ELSE 'survey_response.updated' END),
        (2, CASE WHEN t.completes THEN 'survey_response.completed' END)
    ) AS k(rank, kind)
    JOIN webhooks w ON w.project_id = t.project_id AND w.enabled AND k.kind = ANY(w.events)
        AND (w.survey_ids IS NULL OR lower(t.survey_id) = ANY(w.survey_ids::text[]))
    WHERE k.kind IS NOT NULL
      AND EXISTS (
          SELECT 1 FROM survey_events e WHERE e.project_id = t.project_id AND e.uuid = t.event_uuid)
    ORDER BY w.id, t.seq, k.rank
    RETURNING webhook_id, project_id
)
SELECT project_id, NULL::uuid AS webhook_id, count(*) AS n FROM taken GROUP BY project_id
UNION ALL
SELECT project_id, webhook_id, count(*) AS n FROM made GROUP BY project_id, webhook_id";

/// Applies the bounds after a fan-out: each webhook of `$1` keeps its newest
/// `least($2, $3 / its project's enabled webhooks)` pending deliveries, each project of `$4`
/// its newest `$5` outbox entries; the rest is deleted (oldest first: everything at or before
/// the first one past the bound, found by walking the bound's length of the index backwards;
/// the cut-offs are materialized, so each is found once, not once per deleted row).
/// Answers what went, per webhook (and per project's outbox, with no webhook).
const BOUND: &str = "
WITH kept AS MATERIALIZED (
    SELECT w.id, least($2, $3 / greatest(1, (
        SELECT count(*) FROM webhooks v WHERE v.project_id = w.project_id AND v.enabled)))
        AS keep
    FROM webhooks w WHERE w.id = ANY($1)
),
cutoffs AS MATERIALIZED (
    SELECT k.id, c.seq FROM kept k
    CROSS JOIN LATERAL (
        SELECT d.seq FROM webhook_deliveries d
        WHERE d.webhook_id = k.id AND d.state = 'pending'
        ORDER BY d.seq DESC OFFSET k.keep LIMIT 1
    ) c
),
dropped AS (
    DELETE FROM webhook_deliveries d USING cutoffs c
    WHERE d.webhook_id = c.id AND d.state = 'pending' AND d.seq <= c.seq
    RETURNING d.project_id, d.webhook_id
),
outbox_cutoffs AS MATERIALIZED (
    SELECT p.id, c.seq FROM unnest($4::int4[]) AS p(id)
    CROSS JOIN LATERAL (
        SELECT o.seq FROM webhook_outbox o WHERE o.project_id = p.id
        ORDER BY o.seq DESC OFFSET $5 LIMIT 1
    ) c
),
outbox_dropped AS (
    DELETE FROM webhook_outbox o USING outbox_cutoffs c
    WHERE o.project_id = c.id AND o.seq <= c.seq
    RETURNING o.project_id
)
SELECT project_id, webhook_id, count(*) AS n FROM dropped GROUP BY project_id, webhook_id
UNION ALL
SELECT project_id, NULL::uuid, count(*) FROM outbox_dropped GROUP BY project_id
ORDER BY 1, 2 NULLS LAST";

/// Deletes up to `$1` deliveries (their attempts go by cascade) of the webhook deleted first
/// (`webhook_graveyard`, written by the trigger on `webhooks`), through
/// `webhook_deliveries_list_idx`; a webhook with fewer left leaves the graveyard. A graveyard
/// row another node is purging is skipped.
const PURGE_DELETED: &str = "
WITH grave AS (
    SELECT webhook_id FROM webhook_graveyard ORDER BY deleted_at LIMIT 1 FOR UPDATE SKIP LOCKED
),
purged AS (
    DELETE FROM webhook_deliveries
    WHERE id IN (
        SELECT d.id FROM grave g
        JOIN webhook_deliveries d ON d.webhook_id = g.webhook_id
        LIMIT $1
    )
    RETURNING 1
),
buried AS (
    DELETE FROM webhook_graveyard y USING grave g
    WHERE y.webhook_id = g.webhook_id AND (SELECT count(*) FROM purged) < $1
)
SELECT count(*) AS n FROM purged";

/// A count per project and webhook (none: the project's outbox), as [`FAN_OUT`] and [`BOUND`]
/// answer.
#[derive(QueryableByName)]
struct CountRow {
    #[diesel(sql_type = Int4)]
    project_id: i32,
    #[diesel(sql_type = Nullable<SqlUuid>)]
    webhook_id: Option<Uuid>,
    #[diesel(sql_type = Int8)]
    n: i64,
}

/// One number.
#[derive(QueryableByName)]
struct Purged {
    #[diesel(sql_type = Int8)]
    n: i64,
}

/// Whether this transaction took the fan-out lock.
#[derive(QueryableByName)]
struct Taken {
    #[diesel(sql_type = Bool)]
    taken: bool,
}

/// Deletes a batch of finished deliveries made before `$1` (their attempts go by cascade),
/// oldest first (the migration's `webhook_deliveries_finished_idx`).
const FORGET_FINISHED: &str = "
DELETE FROM webhook_deliveries
WHERE id IN (
    SELECT id FROM webhook_deliveries
    WHERE state <> 'pending' AND created_at < $1
    ORDER BY created_at
    LIMIT $2
)";

#[async_trait]
impl DeliveryQueue for PgDeliveryQueue {
    async fn fan_out(&self, bounds: &QueueBounds) -> Result<FanOut, Unexpected> {
        let mut transaction = PgTransaction::open(&self.database).await?;
        let outcome = fan_out_locked(&mut transaction, bounds).await;
        match outcome {
            Ok(fanned) => {
                Box::new(transaction).commit().await?;
                Ok(fanned)
            }
            Err(error) => {
                Box::new(transaction).rollback().await?;
                Err(error)
            }
        }
    }

    async fn claim_due(
        &self,
        limit: u32,
        per_project: u32,
        lease: Duration,
    ) -> Result<Vec<DueDelivery>, Unexpected> {
        let mut conn = self.database.connection().await?;
        let rows: Vec<ClaimedRow> = prepared(
            diesel::sql_query(CLAIM_DUE)
                .bind::<Int8, _>(i64::from(limit))
                .bind::<Double, _>(lease.as_secs_f64())
                .bind::<Int8, _>(i64::from(per_project)),
        )
        .load(&mut conn)
        .await
        .during("claiming due webhook deliveries")?;
        Ok(rows.into_iter().map(ClaimedRow::into_due).collect())
    }

    async fn settle(&self, id: DeliveryId, settlement: &Settlement) -> Result<(), Unexpected> {
        let (state, next_attempt_at) = match settlement.next {
            NextStep::Delivered => (DeliveryState::Delivered, None),
            NextStep::RetryAt(at) => (DeliveryState::Pending, Some(at)),
            NextStep::Failed => (DeliveryState::Failed, None),
        };
        let (status_code, duration_ms) = attempt_columns(&settlement.attempt);
        let mut conn = self.database.connection().await?;
        prepared(
            diesel::sql_query(SETTLE)
                .bind::<SqlUuid, _>(id.0)
                .bind::<Timestamptz, _>(settlement.attempt.at)
                .bind::<Nullable<Int2>, _>(status_code)
                .bind::<Nullable<Text>, _>(settlement.attempt.error.as_deref())
                .bind::<Int4, _>(duration_ms)
                .bind::<Varchar, _>(state.as_str())
                .bind::<Nullable<Timestamptz>, _>(next_attempt_at)
                .bind::<Nullable<Bytea>, _>(settlement.body.as_deref())
                .bind::<Bool, _>(settlement.next == NextStep::Delivered)
                .bind::<Nullable<Varchar>, _>(settlement.disable.map(DisabledReason::as_str)),
        )
        .execute(&mut conn)
        .await
        .during("settling a webhook delivery")?;
        Ok(())
    }

    async fn purge_deleted(&self, limit: u32) -> Result<u64, Unexpected> {
        let mut conn = self.database.connection().await?;
        let purged: Purged =
            prepared(diesel::sql_query(PURGE_DELETED).bind::<Int8, _>(i64::from(limit)))
                .get_result(&mut conn)
                .await
                .during("purging deleted webhooks' deliveries")?;
        Ok(purged.n.unsigned_abs())
    }

    async fn forget_finished(&self, before: DateTime<Utc>, limit: u32) -> Result<u64, Unexpected> {
        let mut conn = self.database.connection().await?;
        let forgotten = diesel::sql_query(FORGET_FINISHED)
            .bind::<Timestamptz, _>(before)
            .bind::<Int8, _>(i64::from(limit))
            .execute(&mut conn)
            .await
            .during("forgetting finished webhook deliveries")?;
        Ok(u64::try_from(forgotten).unwrap_or_default())
    }
}

/// A fan-out inside `transaction`, once it holds the fan-out lock (without it, another node is
/// fanning out and this one has nothing to do).
async fn fan_out_locked(
    transaction: &mut PgTransaction,
    bounds: &QueueBounds,
) -> Result<FanOut, Unexpected> {
    let lock: Taken = transaction
        .read(async |conn| {
            let taken = diesel::sql_query(FAN_OUT_LOCK).get_result(conn).await;
            taken.during("taking the webhook fan-out lock")
        })
        .await?;
    if !lock.taken {
        return Ok(FanOut::default());
    }
    let conn = transaction.connection().await?;
    let counts: Vec<CountRow> =
        prepared(diesel::sql_query(FAN_OUT).bind::<Int8, _>(i64::from(bounds.fan_out_per_project)))
            .load(conn)
            .await
            .during("fanning webhook outbox entries out")?;
    let mut fanned = FanOut::default();
    let mut webhooks = Vec::new();
    let mut full_projects = Vec::new();
    for row in counts {
        let n = row.n.unsigned_abs();
        match row.webhook_id {
            Some(webhook) => {
                fanned.deliveries += n;
                webhooks.push(webhook);
            }
            None => {
                fanned.entries += n;
                if n >= u64::from(bounds.fan_out_per_project) {
                    full_projects.push(row.project_id);
                }
            }
        }
    }
    if webhooks.is_empty() && full_projects.is_empty() {
        return Ok(fanned);
    }
    let dropped: Vec<CountRow> = prepared(
        diesel::sql_query(BOUND)
            .bind::<Array<SqlUuid>, _>(webhooks)
            .bind::<Int8, _>(i64::from(bounds.pending_per_webhook))
            .bind::<Int8, _>(i64::from(bounds.pending_per_project))
            .bind::<Array<Int4>, _>(full_projects)
            .bind::<Int8, _>(i64::from(bounds.outbox_per_project)),
    )
    .load(conn)
    .await
    .during("bounding webhook backlogs")?;
    fanned.dropped = dropped
        .into_iter()
        .map(|row| Dropped {
            project: ProjectId(row.project_id),
            webhook: row.webhook_id.map(WebhookId),
            count: row.n.unsigned_abs(),
        })
        .collect();
    Ok(fanned)
}

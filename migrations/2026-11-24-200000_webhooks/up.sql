-- Webhooks on survey responses (issue 22): a project's subscriptions, the deliveries each
-- response event becomes (written by the capture statement itself: an outbox), and every
-- attempt at sending one.

CREATE TABLE webhooks (
    id uuid PRIMARY KEY,
    project_id integer NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    url text NOT NULL,
    -- `survey_response.created`, `.updated`, `.completed`; at least one.
    events text[] NOT NULL CHECK (cardinality(events) > 0),
    -- Only responses to these surveys; NULL: every survey of the project.
    survey_ids uuid[],
    format varchar(16) NOT NULL CHECK (format IN ('standard', 'slack')),
    enabled boolean NOT NULL,
    -- Why Burrow switched the webhook off itself: 'gone' (410) or 'failing'.
    disabled_reason varchar(16),
    description text NOT NULL DEFAULT '',
    -- `whsec_<base64>`: stored as is, since signing needs it.
    secret text NOT NULL,
    -- A rotated-out secret keeps signing beside the new one until it expires.
    previous_secret text,
    previous_secret_expires_at timestamptz,
    -- Failed attempts since the last delivered one.
    consecutive_failures integer NOT NULL DEFAULT 0,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now()
);
-- A project's list, newest first; and capture's lookup of the project's enabled webhooks.
CREATE INDEX webhooks_project_created_idx ON webhooks (project_id, created_at DESC, id DESC);

CREATE TABLE webhook_deliveries (
    -- `webhook-id` is `msg_` and this UUID's hex digits: the same on every attempt.
    id uuid PRIMARY KEY,
    -- The order of a webhook's deliveries: they are sent one at a time, in this order.
    seq bigserial NOT NULL,
    webhook_id uuid NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
    project_id integer NOT NULL,
    -- The payload's `type`: a `survey_response.*` event or `webhook.test`.
    kind varchar(40) NOT NULL,
    -- The `survey sent` event it is about (NULL for a test); no foreign key, events are kept.
    event_uuid uuid,
    survey_id varchar(200),
    submission_key varchar(200),
    -- 'pending', 'delivered' or 'failed'.
    state varchar(16) NOT NULL DEFAULT 'pending',
    -- Attempts since it was made or retried by hand.
    attempts_made integer NOT NULL DEFAULT 0,
    -- When it is due; a claim moves it past the claim's lease.
    next_attempt_at timestamptz NOT NULL DEFAULT now(),
    -- The bytes sent, fixed at the first attempt so every retry sends the same.
    body bytea,
    created_at timestamptz NOT NULL DEFAULT now()
);
-- What is due, for the dispatchers' claims.
CREATE INDEX webhook_deliveries_due_idx ON webhook_deliveries (next_attempt_at)
    WHERE state = 'pending';
-- Each webhook's oldest pending delivery (only that one may be sent).
CREATE INDEX webhook_deliveries_head_idx ON webhook_deliveries (webhook_id, seq)
    WHERE state = 'pending';
-- Finished deliveries by age, for forgetting them after the retention.
CREATE INDEX webhook_deliveries_finished_idx ON webhook_deliveries (created_at)
    WHERE state <> 'pending';
-- A webhook's deliveries, newest first (the order they were made, reversed).
CREATE INDEX webhook_deliveries_list_idx ON webhook_deliveries (webhook_id, seq DESC);

CREATE TABLE webhook_attempts (
    id bigserial PRIMARY KEY,
    delivery_id uuid NOT NULL REFERENCES webhook_deliveries (id) ON DELETE CASCADE,
    attempted_at timestamptz NOT NULL,
    -- The receiver's status, or why there was none.
    status_code smallint,
    error text,
    duration_ms integer NOT NULL
);
CREATE INDEX webhook_attempts_delivery_idx ON webhook_attempts (delivery_id, id);

-- The sends of one submission, for a payload's `event_uuids`.
CREATE INDEX survey_events_submission_idx ON survey_events (project_id, survey_id, submission_id)
    WHERE event = 'survey sent';

-- The webhook activity log (scope "Webhook"): one row per create, update, secret rotation or
-- delete, written in the transaction of the change it records, as survey_activity is.

CREATE TABLE webhook_activity (
    id uuid PRIMARY KEY,
    project_id integer NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    -- No foreign key: the log outlives a deleted webhook.
    webhook_id uuid NOT NULL,
    user_id integer REFERENCES users (id) ON DELETE SET NULL,
    activity varchar(40) NOT NULL,
    detail jsonb NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);
-- A project's log, newest first.
CREATE INDEX webhook_activity_project_created_idx
    ON webhook_activity (project_id, created_at DESC, id DESC);
-- One webhook's log, newest first.
CREATE INDEX webhook_activity_webhook_created_idx
    ON webhook_activity (project_id, webhook_id, created_at DESC, id DESC);

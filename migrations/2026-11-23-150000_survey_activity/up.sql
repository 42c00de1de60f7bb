-- The survey activity log (PostHog's ActivityLog, scope "Survey"): one row per create, update,
-- delete or copy, written in the transaction of the change it records.

CREATE TABLE survey_activity (
    -- A time-ordered UUID (v7), as PostHog's activity ids are UUIDs and plugin_activity's are.
    id uuid PRIMARY KEY,
    project_id integer NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    -- No foreign key: the log outlives a deleted survey.
    survey_id uuid NOT NULL,
    user_id integer REFERENCES users (id) ON DELETE SET NULL,
    activity varchar(40) NOT NULL,
    detail jsonb NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);
-- A project's log, newest first.
CREATE INDEX survey_activity_project_created_idx
    ON survey_activity (project_id, created_at DESC, id DESC);
-- One survey's log, newest first.
CREATE INDEX survey_activity_survey_created_idx
    ON survey_activity (project_id, survey_id, created_at DESC, id DESC);

-- Survey events captured from the SDKs, the responses they add up to, and per-survey counters
-- that keep responses_count independent of how many events there are.

CREATE TABLE survey_events (
    project_id integer NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    -- The SDK's event uuid: a retried batch stores each event once.
    uuid uuid NOT NULL,
    event varchar(20) NOT NULL
        CHECK (event IN ('survey shown', 'survey dismissed', 'survey sent')),
    -- `$survey_id` as sent, not checked against `surveys` (PostHog counts unknown ids too).
    survey_id varchar(200) NOT NULL,
    distinct_id varchar(200) NOT NULL,
    timestamp timestamptz NOT NULL,
    -- `$survey_submission_id`; NULL when the SDK sent none (each such event is its own response).
    submission_id varchar(200),
    -- The event's `$survey_*` properties (answers, questions, completion flags).
    properties jsonb NOT NULL,
    received_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (project_id, uuid)
);
-- Stats: one survey's events of one kind within a time window.
CREATE INDEX survey_events_stats_idx ON survey_events (project_id, survey_id, event, timestamp);

-- One row per submission (`$survey_submission_id`, or the event uuid when there is none); the
-- latest `survey sent` event of the submission wins.
CREATE TABLE survey_responses (
    project_id integer NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    survey_id varchar(200) NOT NULL,
    submission_key varchar(200) NOT NULL,
    submission_id varchar(200),
    event_uuid uuid NOT NULL,
    distinct_id varchar(200) NOT NULL,
    timestamp timestamptz NOT NULL,
    -- `$survey_response_<suffix>` values by suffix (a question id, or a legacy index).
    answers jsonb NOT NULL,
    completed boolean,
    archived boolean NOT NULL DEFAULT false,
    PRIMARY KEY (project_id, survey_id, submission_key)
);
-- The responses list: a survey's responses, newest first.
CREATE INDEX survey_responses_list_idx
    ON survey_responses (project_id, survey_id, timestamp DESC, event_uuid DESC);
-- responses_count leaves out responses older than the project's first launch: few, found here.
CREATE INDEX survey_responses_project_timestamp_idx ON survey_responses (project_id, timestamp);

-- How many responses (and archived responses) each survey id has, kept in the transaction that
-- adds or archives a response, so counting reads one row per survey.
CREATE TABLE survey_response_counts (
    project_id integer NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    survey_id varchar(200) NOT NULL,
    responses bigint NOT NULL DEFAULT 0 CHECK (responses >= 0),
    archived bigint NOT NULL DEFAULT 0 CHECK (archived >= 0 AND archived <= responses),
    PRIMARY KEY (project_id, survey_id)
);

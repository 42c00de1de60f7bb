-- PostHog's response sampling ("adaptive sampling"): a survey asks for `limit` responses over
-- `interval` days, weeks or months from `start_date` (`interval_type` defaults to `week`, as
-- PostHog's column does). Burrow keeps beside them what its daily round sets: the sampling
-- flag's rollout (100 until the round first sets it) and the UTC day it last looked.
ALTER TABLE surveys
    ADD COLUMN response_sampling_start_date timestamptz,
    ADD COLUMN response_sampling_interval_type varchar(6) DEFAULT 'week'
        CHECK (response_sampling_interval_type IN ('day', 'week', 'month')),
    ADD COLUMN response_sampling_interval integer CHECK (response_sampling_interval >= 0),
    ADD COLUMN response_sampling_limit integer CHECK (response_sampling_limit >= 0),
    ADD COLUMN response_sampling_rollout double precision NOT NULL DEFAULT 100,
    ADD COLUMN response_sampling_checked_on date,
    -- The form builder's layout (PostHog's `form_content`), kept as the client sent it.
    ADD COLUMN form_content jsonb;

-- The sampling surveys, which every node's round reads (`SurveyRepository::due_sampling`):
-- few, whatever the number of surveys.
CREATE INDEX surveys_sampling ON surveys (project_id, id)
    WHERE response_sampling_limit > 0 AND response_sampling_interval > 0
      AND response_sampling_interval_type IS NOT NULL
      AND response_sampling_start_date IS NOT NULL AND end_date IS NULL;

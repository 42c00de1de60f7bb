-- Responses as PostHog reads them: a submission's `survey sent` events and its `survey
-- dismissed` / `survey abandoned` events of a survey answered in part (`$survey_partially_
-- completed`), merged (each question's latest given answer, `SubmissionDraft` in
-- crates/domain/src/survey_response/merge.rs), with where, in which iteration and in which
-- language it was answered.

-- posthog-js sends `survey abandoned` when a page unloads with a survey in progress.
ALTER TABLE survey_events DROP CONSTRAINT survey_events_event_check;
ALTER TABLE survey_events ADD CONSTRAINT survey_events_event_check
    CHECK (event IN ('survey shown', 'survey dismissed', 'survey sent', 'survey abandoned'));

ALTER TABLE survey_responses
    -- The latest response event closed the survey answered in part instead of sending it.
    ADD COLUMN partially_completed boolean NOT NULL DEFAULT false,
    -- `ResponseContext` as stored: session, device, browser, OS, GeoIP, URL, iteration and
    -- language, each the latest one the submission's events gave (keys of those given only).
    ADD COLUMN context jsonb NOT NULL DEFAULT '{}';

-- Iteration and language were kept on the events already: the responses take their latest
-- event's.
UPDATE survey_responses r SET context = jsonb_strip_nulls(jsonb_build_object(
    'iteration', CASE jsonb_typeof(e.properties -> '$survey_iteration')
                     WHEN 'string' THEN nullif(e.properties ->> '$survey_iteration', '')
                     WHEN 'number' THEN e.properties ->> '$survey_iteration' END,
    'language', CASE jsonb_typeof(e.properties -> '$survey_language')
                    WHEN 'string' THEN nullif(e.properties ->> '$survey_language', '')
                    WHEN 'number' THEN e.properties ->> '$survey_language' END))
FROM survey_events e
WHERE e.project_id = r.project_id AND e.uuid = r.event_uuid;

-- A submission whose only response events so far were partially completed dismissals is a
-- response now, from its latest one, and is counted (slot 0, as deletions and archiving use).
WITH latest AS (
    SELECT DISTINCT ON (e.project_id, e.survey_id, coalesce(e.submission_id, e.uuid::text))
           e.project_id, e.survey_id, coalesce(e.submission_id, e.uuid::text) AS submission_key,
           e.submission_id, e.uuid, e.distinct_id, e.timestamp, e.properties
    FROM survey_events e
    WHERE e.event = 'survey dismissed'
      AND e.properties ->> '$survey_partially_completed' = 'true'
    ORDER BY e.project_id, e.survey_id, coalesce(e.submission_id, e.uuid::text),
             e.timestamp DESC, e.uuid DESC
),
added AS (
    INSERT INTO survey_responses
        (project_id, survey_id, submission_key, submission_id, event_uuid, distinct_id,
         timestamp, answers, completed, partially_completed)
    SELECT l.project_id, l.survey_id, l.submission_key, l.submission_id, l.uuid, l.distinct_id,
           l.timestamp,
           coalesce((
               SELECT jsonb_object_agg(
                          CASE WHEN p.k = '$survey_response' THEN '0'
                               ELSE substr(p.k, length('$survey_response_') + 1) END, p.v)
               FROM jsonb_each(l.properties) AS p(k, v)
               WHERE (p.k LIKE '$survey\_response\_%' OR p.k = '$survey_response')
                 AND p.v NOT IN ('null'::jsonb, '""'::jsonb, '[]'::jsonb)
                 AND NOT (p.k = '$survey_response' AND l.properties ? '$survey_response_0')),
               '{}'),
           NULL, true
    FROM latest l
    ORDER BY l.project_id, l.survey_id, l.submission_key
    ON CONFLICT (project_id, survey_id, submission_key) DO NOTHING
    RETURNING project_id, survey_id
)
INSERT INTO survey_response_counts AS c (project_id, survey_id, slot, responses)
SELECT project_id, survey_id, 0, count(*) FROM added GROUP BY project_id, survey_id
ON CONFLICT (project_id, survey_id, slot) DO UPDATE SET responses = c.responses + EXCLUDED.responses;

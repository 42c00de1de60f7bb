-- Issue 40: one project's webhook backlog must not slow capture or any other tenant.
--
-- Capture no longer fans an answer out to the project's webhooks: `burrow_record_capture`
-- writes one `webhook_outbox` entry per new `survey sent` (only when the project has an enabled
-- webhook), whatever the number of webhooks; the dispatcher turns entries into deliveries
-- (crates/adapters/src/postgres/delivery_queue.rs), a bounded number per project per round.
--
-- A webhook's deletion no longer cascades over its deliveries inside the owner's request: the
-- foreign key goes, a trigger notes the deleted webhook in `webhook_graveyard`, and dispatchers
-- delete its deliveries in batches. The claim reads each webhook's head through
-- `webhook_deliveries_head_idx`, so `webhook_deliveries_due_idx` has no reader left.

CREATE TABLE webhook_outbox (
    -- The order answers were captured in, which their deliveries keep.
    seq bigserial PRIMARY KEY,
    project_id integer NOT NULL,
    -- The `survey sent` event; no foreign key (a deleted event is skipped at fan-out).
    event_uuid uuid NOT NULL,
    survey_id varchar(200) NOT NULL,
    submission_key varchar(200) NOT NULL,
    -- The send created its submission's response (`survey_response.created`, else `.updated`).
    created boolean NOT NULL,
    -- The send finishes its submission (`survey_response.completed` as well).
    completes boolean NOT NULL
);
-- Each project's entries in order, and the projects that have any (a loose index scan).
CREATE INDEX webhook_outbox_project_idx ON webhook_outbox (project_id, seq);

CREATE TABLE webhook_graveyard (
    webhook_id uuid PRIMARY KEY,
    deleted_at timestamptz NOT NULL DEFAULT now()
);

CREATE FUNCTION burrow_bury_webhook() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO webhook_graveyard (webhook_id) VALUES (OLD.id) ON CONFLICT DO NOTHING;
    RETURN OLD;
END
$$;
-- Also when a project's deletion cascades to its webhooks.
CREATE TRIGGER webhooks_buried AFTER DELETE ON webhooks
    FOR EACH ROW EXECUTE FUNCTION burrow_bury_webhook();

ALTER TABLE webhook_deliveries DROP CONSTRAINT webhook_deliveries_webhook_id_fkey;
DROP INDEX webhook_deliveries_due_idx;

-- Everything but the `outbox` step is as in 2026-11-27-040000_record_capture_slot_per_writer.
CREATE OR REPLACE FUNCTION burrow_record_capture(
    p_project integer,
    p_uuids uuid[], p_events varchar[], p_survey_ids varchar[], p_distinct_ids varchar[],
    p_times timestamptz[], p_submission_ids varchar[], p_properties jsonb[],
    p_send_uuids uuid[], p_send_keys varchar[], p_send_answers jsonb[], p_send_completed bool[],
    p_slot integer,
    p_person_ids text[], p_person_sets jsonb[],
    p_hook_uuids uuid[], p_hook_keys varchar[], p_hook_earliest bool[], p_hook_completes bool[]
) RETURNS uuid[] LANGUAGE plpgsql AS $$
DECLARE
    v_stored uuid[];
    v_counted bigint;
    v_merged bigint;
    v_stopped bigint;
    v_outboxed bigint;
BEGIN
    WITH inserted AS (
        INSERT INTO survey_events
            (project_id, uuid, event, survey_id, distinct_id, timestamp, submission_id, properties)
        SELECT p_project, e.uuid, e.event, e.survey_id, e.distinct_id, e.at, e.submission_id, e.properties
        FROM unnest(p_uuids::uuid[], p_events::varchar[], p_survey_ids::varchar[], p_distinct_ids::varchar[], p_times::timestamptz[],
                    p_submission_ids::varchar[], p_properties::jsonb[])
            AS e(uuid, event, survey_id, distinct_id, at, submission_id, properties)
        ON CONFLICT DO NOTHING
        RETURNING uuid, survey_id, distinct_id, timestamp, submission_id
    ),
    responses AS (
        INSERT INTO survey_responses AS r
            (project_id, survey_id, submission_key, submission_id, event_uuid, distinct_id,
             timestamp, answers, completed)
        SELECT p_project, e.survey_id, s.submission_key, e.submission_id, e.uuid, e.distinct_id,
               e.timestamp, s.answers, s.completed
        FROM unnest(p_send_uuids::uuid[], p_send_keys::varchar[], p_send_answers::jsonb[], p_send_completed::bool[])
            AS s(event_uuid, submission_key, answers, completed)
        JOIN inserted e ON e.uuid = s.event_uuid
        ORDER BY e.survey_id, s.submission_key
        ON CONFLICT (project_id, survey_id, submission_key) DO UPDATE SET
            submission_id = EXCLUDED.submission_id,
            event_uuid = EXCLUDED.event_uuid,
            distinct_id = EXCLUDED.distinct_id,
            timestamp = EXCLUDED.timestamp,
            answers = EXCLUDED.answers,
            completed = EXCLUDED.completed
        WHERE (r.timestamp, r.event_uuid) < (EXCLUDED.timestamp, EXCLUDED.event_uuid)
        RETURNING r.survey_id, r.submission_key, (r.xmax = 0) AS added
    ),
    counted AS (
        INSERT INTO survey_response_counts AS c (project_id, survey_id, slot, responses)
        SELECT p_project, survey_id, p_slot::smallint, count(*)
        FROM responses
        WHERE added
        GROUP BY survey_id
        ORDER BY survey_id
        ON CONFLICT (project_id, survey_id, slot) DO UPDATE SET
            responses = c.responses + EXCLUDED.responses
        RETURNING survey_id
    ),
    merged AS (
        INSERT INTO person_properties AS p (project_id, distinct_id, properties)
        SELECT p_project, m.distinct_id, m.properties
        FROM unnest(p_person_ids::text[], p_person_sets::jsonb[]) AS m(distinct_id, properties)
        ON CONFLICT (project_id, distinct_id) DO UPDATE SET
            properties = p.properties || EXCLUDED.properties,
            updated_at = now()
        RETURNING distinct_id
    ),
    limited AS (
        UPDATE surveys s SET end_date = now(), responses_limit = NULL
        FROM (SELECT survey_id, count(*) AS added FROM responses WHERE added GROUP BY survey_id) a
        WHERE s.project_id = p_project AND s.id::text = a.survey_id
          AND s.responses_limit IS NOT NULL AND s.end_date IS NULL
          AND a.added + coalesce((
              SELECT sum(c.responses) FROM survey_response_counts c
              WHERE c.project_id = p_project AND c.survey_id = a.survey_id), 0) >= s.responses_limit
        RETURNING s.id
    ),
    sends AS (
        SELECT e.uuid, e.survey_id, e.timestamp, w.submission_key, w.earliest, w.completes
        FROM unnest(p_hook_uuids::uuid[], p_hook_keys::varchar[], p_hook_earliest::bool[], p_hook_completes::bool[])
            AS w(uuid, submission_key, earliest, completes)
        JOIN inserted e ON e.uuid = w.uuid
    ),
    outbox AS (
        INSERT INTO webhook_outbox
            (project_id, event_uuid, survey_id, submission_key, created, completes)
        SELECT p_project, s.uuid, s.survey_id, s.submission_key,
               s.earliest AND EXISTS (
                   SELECT 1 FROM responses r
                   WHERE r.survey_id = s.survey_id AND r.submission_key = s.submission_key
                     AND r.added),
               s.completes
        FROM sends s
        WHERE EXISTS (SELECT 1 FROM webhooks w WHERE w.project_id = p_project AND w.enabled)
        ORDER BY s.timestamp, s.uuid
        RETURNING 1
    )
    SELECT (SELECT coalesce(array_agg(uuid), '{}') FROM inserted), (SELECT count(*) FROM counted),
           (SELECT count(*) FROM merged), (SELECT count(*) FROM limited),
           (SELECT count(*) FROM outbox)
    INTO v_stored, v_counted, v_merged, v_stopped, v_outboxed;
    RETURN v_stored;
END
$$;

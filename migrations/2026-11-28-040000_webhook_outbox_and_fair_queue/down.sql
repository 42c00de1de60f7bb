-- Back to deliveries written by the capture statement, claimed with an anti-join, and deleted
-- with their webhook by cascade. Answers still in the outbox (not yet fanned out) are lost, and
-- so are the deliveries of webhooks deleted but not yet purged.

DROP TRIGGER webhooks_buried ON webhooks;
DROP FUNCTION burrow_bury_webhook();
DELETE FROM webhook_deliveries d WHERE NOT EXISTS (SELECT 1 FROM webhooks w WHERE w.id = d.webhook_id);
DROP TABLE webhook_graveyard;
DROP TABLE webhook_outbox;
ALTER TABLE webhook_deliveries ADD CONSTRAINT webhook_deliveries_webhook_id_fkey
    FOREIGN KEY (webhook_id) REFERENCES webhooks (id) ON DELETE CASCADE;
CREATE INDEX webhook_deliveries_due_idx ON webhook_deliveries (next_attempt_at)
    WHERE state = 'pending';

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
    v_deliveries bigint;
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
        INSERT INTO webhook_deliveries
            (id, webhook_id, project_id, kind, event_uuid, survey_id, submission_key)
        SELECT gen_random_uuid(), w.id, p_project, k.kind, s.uuid, s.survey_id, s.submission_key
        FROM sends s
        CROSS JOIN LATERAL (VALUES
            (1, CASE WHEN s.earliest AND EXISTS (
                    SELECT 1 FROM responses r
                    WHERE r.survey_id = s.survey_id AND r.submission_key = s.submission_key
                      AND r.added)
                THEN 'survey_response.created' ELSE 'survey_response.updated' END),
            (2, CASE WHEN s.completes THEN 'survey_response.completed' END)
        ) AS k(rank, kind)
        JOIN webhooks w ON w.project_id = p_project AND w.enabled AND k.kind = ANY(w.events)
            AND (w.survey_ids IS NULL OR lower(s.survey_id) = ANY(w.survey_ids::text[]))
        WHERE k.kind IS NOT NULL
        ORDER BY w.id, s.timestamp, s.uuid, k.rank
        RETURNING 1
    )
    SELECT (SELECT coalesce(array_agg(uuid), '{}') FROM inserted), (SELECT count(*) FROM counted),
           (SELECT count(*) FROM merged), (SELECT count(*) FROM limited),
           (SELECT count(*) FROM outbox)
    INTO v_stored, v_counted, v_merged, v_stopped, v_deliveries;
    RETURN v_stored;
END
$$;

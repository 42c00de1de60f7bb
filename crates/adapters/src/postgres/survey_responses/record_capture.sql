WITH inserted AS (
    INSERT INTO survey_events
        (project_id, uuid, event, survey_id, distinct_id, timestamp, submission_id, properties)
    SELECT $1, e.uuid, e.event, e.survey_id, e.distinct_id, e.at, e.submission_id, e.properties
    FROM unnest($2, $3, $4, $5, $6,
                $7, $8)
        AS e(uuid, event, survey_id, distinct_id, at, submission_id, properties)
    ON CONFLICT DO NOTHING
    RETURNING uuid, survey_id, distinct_id, timestamp, submission_id, event,
              properties ->> '$survey_partially_completed' AS partial
),
responses AS (
    INSERT INTO survey_responses AS r
        (project_id, survey_id, submission_key, submission_id, event_uuid, distinct_id,
         timestamp, answers, completed, partially_completed, context)
    SELECT $1, s.survey_id, s.submission_key, s.submission_id, s.event_uuid, s.distinct_id,
           s.at, s.answers, s.completed, s.partial, s.context
    FROM unnest($9::uuid[], $10::varchar[], $11::jsonb[], $12::bool[], $25::varchar[],
                $26::varchar[], $27::varchar[], $28::timestamptz[], $29::bool[], $30::jsonb[])
        AS s(event_uuid, submission_key, answers, completed, survey_id, submission_id,
             distinct_id, at, partial, context)
    -- Submissions some of whose response events are new (`SurveyEvent::is_response`).
    WHERE EXISTS (
        SELECT 1 FROM inserted e
        WHERE e.survey_id = s.survey_id
          AND coalesce(e.submission_id, e.uuid::text) = s.submission_key
          AND (e.event = 'survey sent'
               OR (e.event IN ('survey dismissed', 'survey abandoned') AND e.partial = 'true')))
    ORDER BY s.survey_id, s.submission_key
    -- As `SurveyResponseRepository::record` states: a later draft overrides, an earlier one fills in.
    ON CONFLICT (project_id, survey_id, submission_key) DO UPDATE SET
        event_uuid = CASE WHEN (r.timestamp, r.event_uuid) < (EXCLUDED.timestamp, EXCLUDED.event_uuid)
                          THEN EXCLUDED.event_uuid ELSE r.event_uuid END,
        distinct_id = CASE WHEN (r.timestamp, r.event_uuid) < (EXCLUDED.timestamp, EXCLUDED.event_uuid)
                           THEN EXCLUDED.distinct_id ELSE r.distinct_id END,
        timestamp = CASE WHEN (r.timestamp, r.event_uuid) < (EXCLUDED.timestamp, EXCLUDED.event_uuid)
                         THEN EXCLUDED.timestamp ELSE r.timestamp END,
        partially_completed =
            CASE WHEN (r.timestamp, r.event_uuid) < (EXCLUDED.timestamp, EXCLUDED.event_uuid)
                 THEN EXCLUDED.partially_completed ELSE r.partially_completed END,
        -- Merged answers and context past `MAX_RESPONSE_BYTES` ($31) stay as stored.
        answers = CASE WHEN pg_column_size(r.answers || EXCLUDED.answers)
                            + pg_column_size(r.context || EXCLUDED.context) > $31::int
                       THEN r.answers
                       WHEN (r.timestamp, r.event_uuid) < (EXCLUDED.timestamp, EXCLUDED.event_uuid)
                       THEN r.answers || EXCLUDED.answers ELSE EXCLUDED.answers || r.answers END,
        context = CASE WHEN pg_column_size(r.answers || EXCLUDED.answers)
                            + pg_column_size(r.context || EXCLUDED.context) > $31::int
                       THEN r.context
                       WHEN (r.timestamp, r.event_uuid) < (EXCLUDED.timestamp, EXCLUDED.event_uuid)
                       THEN r.context || EXCLUDED.context ELSE EXCLUDED.context || r.context END,
        completed = CASE WHEN (r.timestamp, r.event_uuid) < (EXCLUDED.timestamp, EXCLUDED.event_uuid)
                         THEN coalesce(EXCLUDED.completed, r.completed)
                         ELSE coalesce(r.completed, EXCLUDED.completed) END
    RETURNING r.survey_id, r.submission_key, (r.xmax = 0) AS added
),
counted AS (
    INSERT INTO survey_response_counts AS c (project_id, survey_id, slot, responses)
    SELECT $1, survey_id, $13::smallint, count(*)
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
    SELECT $1, m.distinct_id,
           CASE WHEN pg_column_size(m.properties) <= $24::int THEN m.properties ELSE '{}' END
    FROM unnest($14, $15) AS m(distinct_id, properties)
    ON CONFLICT (project_id, distinct_id) DO UPDATE SET
        -- `merge_set`: a stored last-seen date later than the set's stays (both in its shape).
        properties = CASE WHEN pg_column_size(p.properties || EXCLUDED.properties) <= $24::int
                          THEN p.properties || EXCLUDED.properties || CASE
                              WHEN (p.properties ->> '$last_seen_survey_date')
                                   ~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z$'
                               AND (EXCLUDED.properties ->> '$last_seen_survey_date')
                                   ~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z$'
                               AND (p.properties ->> '$last_seen_survey_date') COLLATE "C"
                                   > (EXCLUDED.properties ->> '$last_seen_survey_date') COLLATE "C"
                              THEN jsonb_build_object('$last_seen_survey_date',
                                                      p.properties -> '$last_seen_survey_date')
                              ELSE '{}' END
                          ELSE p.properties END,
        updated_at = now()
    RETURNING distinct_id
),
new_types AS (
    SELECT n.group_type, row_number() OVER (ORDER BY n.position) AS rank
    FROM unnest($20::text[]) WITH ORDINALITY AS n(group_type, position)
    WHERE NOT EXISTS (
        SELECT 1 FROM group_types t WHERE t.project_id = $1 AND t.group_type = n.group_type)
),
free_indices AS (
    SELECT i AS group_type_index, row_number() OVER (ORDER BY i) AS rank
    FROM generate_series(0, 4) AS i
    WHERE cardinality($20::text[]) > 0 AND NOT EXISTS (
        SELECT 1 FROM group_types t WHERE t.project_id = $1 AND t.group_type_index = i)
),
typed AS (
    INSERT INTO group_types (project_id, group_type_index, group_type)
    SELECT $1, f.group_type_index, n.group_type
    FROM new_types n JOIN free_indices f USING (rank)
    ORDER BY f.group_type_index
    ON CONFLICT DO NOTHING
    RETURNING group_type
),
grouped AS (
    INSERT INTO groups AS g (project_id, group_type, group_key, properties)
    SELECT $1, s.group_type, s.group_key,
           CASE WHEN pg_column_size(s.properties) <= $24::int THEN s.properties ELSE '{}' END
    FROM unnest($21::text[], $22::text[], $23::jsonb[]) AS s(group_type, group_key, properties)
    WHERE s.group_type IN (SELECT group_type FROM typed)
       OR EXISTS (
           SELECT 1 FROM group_types t WHERE t.project_id = $1 AND t.group_type = s.group_type)
    ORDER BY s.group_type, s.group_key
    ON CONFLICT (project_id, group_type, group_key) DO UPDATE SET
        properties = CASE WHEN pg_column_size(g.properties || EXCLUDED.properties) <= $24::int
                          THEN g.properties || EXCLUDED.properties ELSE g.properties END,
        updated_at = now()
    RETURNING 1
),
limited AS (
    UPDATE surveys s SET end_date = now(), responses_limit = NULL
    FROM (SELECT survey_id, count(*) AS added FROM responses WHERE added GROUP BY survey_id) a
    WHERE s.project_id = $1 AND s.id::text = a.survey_id
      AND s.responses_limit IS NOT NULL AND s.end_date IS NULL
      AND a.added + coalesce((
          SELECT sum(c.responses) FROM survey_response_counts c
          WHERE c.project_id = $1 AND c.survey_id = a.survey_id), 0) >= s.responses_limit
    RETURNING s.id
),
sends AS (
    SELECT e.uuid, e.survey_id, e.timestamp, w.submission_key, w.earliest, w.completes
    FROM unnest($16, $17, $18, $19)
        AS w(uuid, submission_key, earliest, completes)
    JOIN inserted e ON e.uuid = w.uuid
),
outbox AS (
    INSERT INTO webhook_outbox
        (project_id, event_uuid, survey_id, submission_key, created, completes)
    SELECT $1, s.uuid, s.survey_id, s.submission_key,
           s.earliest AND EXISTS (
               SELECT 1 FROM responses r
               WHERE r.survey_id = s.survey_id AND r.submission_key = s.submission_key
                 AND r.added),
           s.completes
    FROM sends s
    WHERE EXISTS (SELECT 1 FROM webhooks w WHERE w.project_id = $1 AND w.enabled)
    ORDER BY s.timestamp, s.uuid
    RETURNING 1
)
-- The transactional message (a WAL record, nothing decoded, no table) makes the statement write
-- even when every event was stored before (a retry), so its commit waits for the synchronous
-- standby like any other. A transaction that writes nothing commits without that wait (an
-- xid alone is not enough), so a retry of a commit kept only locally (its connection cut
-- during the wait) was acknowledged from a local copy that the failover then discarded.
SELECT (SELECT coalesce(array_agg(uuid), '{}') FROM inserted) AS stored, (SELECT count(*) FROM counted),
       (SELECT count(*) FROM merged), (SELECT count(*) FROM typed),
       (SELECT count(*) FROM grouped), (SELECT count(*) FROM limited),
       (SELECT count(*) FROM outbox), pg_logical_emit_message(true, 'burrow', '')

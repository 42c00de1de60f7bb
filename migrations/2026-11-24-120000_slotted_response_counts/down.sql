-- One counter row per survey again: every slot added into slot 0, then the slots dropped.
INSERT INTO survey_response_counts AS c (project_id, survey_id, slot, responses, archived)
SELECT project_id, survey_id, 0, sum(responses), sum(archived)
FROM survey_response_counts
WHERE slot <> 0
GROUP BY project_id, survey_id
ON CONFLICT (project_id, survey_id, slot) DO UPDATE SET
    responses = c.responses + EXCLUDED.responses,
    archived = c.archived + EXCLUDED.archived;
DELETE FROM survey_response_counts WHERE slot <> 0;
ALTER TABLE survey_response_counts
    DROP CONSTRAINT survey_response_counts_pkey,
    DROP CONSTRAINT survey_response_counts_archived_check,
    DROP COLUMN slot,
    ADD CONSTRAINT survey_response_counts_check CHECK (archived >= 0 AND archived <= responses),
    ADD PRIMARY KEY (project_id, survey_id);

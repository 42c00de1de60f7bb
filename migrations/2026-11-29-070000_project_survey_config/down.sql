-- The entries about no survey go with the column that allowed them.
DELETE FROM survey_activity WHERE survey_id IS NULL;
ALTER TABLE survey_activity ALTER COLUMN survey_id SET NOT NULL;

ALTER TABLE projects DROP COLUMN survey_config;

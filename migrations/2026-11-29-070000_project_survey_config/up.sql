-- A project's survey_config (PostHog's Team.survey_config): settings every survey of the project
-- shares, among them the project-wide wait between surveys. Each survey's internal targeting
-- flag is derived with it, so a change must reach every node's SDK snapshot: the projects
-- trigger (2026-11-24-100000) already announces every update of a project.
ALTER TABLE projects ADD COLUMN survey_config jsonb;

-- PostHog logs a change of it in the project's survey activity with no survey (item_id "").
ALTER TABLE survey_activity ALTER COLUMN survey_id DROP NOT NULL;

-- `responses_count` counts from a project's first launch: `min(start_date)` over the project's
-- surveys. With this index that is one index probe, not a read of every survey (and of every
-- dead row an update burst leaves behind).
CREATE INDEX surveys_project_start_date_idx ON surveys (project_id, start_date);

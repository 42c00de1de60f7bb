-- Response counters in slots, so concurrent answers to one survey add to different rows instead
-- of queueing on one row's lock: a capture adds to the slot of its connection
-- (`pg_backend_pid() % 16`, crates/adapters/src/postgres/survey_responses.rs) and counting sums
-- a survey's slots, at most 16 rows per survey however many events there are. Existing counts
-- become slot 0.
--
-- `archived` is kept in slot 0 only: archiving is rare, so it needs no spreading, and in one row
-- it stays a count that is never negative. `archived <= responses` holds of a survey's sums,
-- which no check on one row can state, so that check goes.
ALTER TABLE survey_response_counts
    ADD COLUMN slot smallint NOT NULL DEFAULT 0 CHECK (slot >= 0 AND slot < 16),
    DROP CONSTRAINT survey_response_counts_check,
    ADD CONSTRAINT survey_response_counts_archived_check
        CHECK (archived >= 0 AND (slot = 0 OR archived = 0)),
    DROP CONSTRAINT survey_response_counts_pkey,
    ADD PRIMARY KEY (project_id, survey_id, slot);
ALTER TABLE survey_response_counts ALTER COLUMN slot DROP DEFAULT;

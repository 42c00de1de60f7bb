-- The surveys a capture may have to end: those with a response limit that have not ended. Every
-- capture statement (`burrow_record_capture`, its `limited` step) looks for them among the
-- surveys it added responses to. Without this index that step is an index scan over all of a
-- project's surveys, and over the whole table in the plan PostgreSQL keeps for any project: so
-- PostgreSQL planned the capture statement afresh on every call, a fifth of its time during
-- captures (docs/benchmarks.md). With it, the kept plan is the cheaper one and is reused.
CREATE INDEX surveys_open_limit_idx ON surveys (project_id)
    WHERE responses_limit IS NOT NULL AND end_date IS NULL;

-- At most 20,000 surveys a project (`domain::survey::writes::MAX_PROJECT_SURVEYS`), archived ones
-- included. Each insert locks its project's count (a transaction-level advisory lock, "Surv"
-- and the project id) and then counts: the count is a statement of its own, so it sees every
-- create that held the lock before, and creates racing for the last places pass one at a time.
-- A trigger rather than statements of the create's own, which stays three statements.
CREATE FUNCTION burrow_surveys_per_project() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_advisory_xact_lock(1400205942, NEW.project_id);
    IF (SELECT count(*) FROM surveys WHERE project_id = NEW.project_id) >= 20000 THEN
        RAISE EXCEPTION 'a project holds at most 20000 surveys'
            USING ERRCODE = 'check_violation', CONSTRAINT = 'surveys_per_project';
    END IF;
    RETURN NEW;
END
$$;

CREATE TRIGGER surveys_per_project BEFORE INSERT ON surveys
    FOR EACH ROW EXECUTE FUNCTION burrow_surveys_per_project();

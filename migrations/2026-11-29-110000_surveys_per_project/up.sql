-- At most 100,000 surveys a project (`domain::survey::writes::MAX_PROJECT_SURVEYS`), archived ones
-- included. Each project's surveys are counted in a row of their own, kept by triggers as surveys
-- are inserted and deleted: an insert raises its project's count unless the count is at the bound,
-- and is refused then. The count's row is locked from the insert until its transaction ends, so
-- creates in one project pass it one at a time and the bound is exact; a count, not a scan of the
-- project's surveys, so a create costs the same in a project of ten surveys or of 100,000.
-- Triggers rather than statements of the create's own, which stays three statements.
CREATE TABLE project_survey_counts (
    project_id integer PRIMARY KEY REFERENCES projects (id) ON DELETE CASCADE,
    surveys integer NOT NULL
);

INSERT INTO project_survey_counts (project_id, surveys)
SELECT project_id, count(*) FROM surveys GROUP BY project_id;

CREATE FUNCTION burrow_count_inserted_survey() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO project_survey_counts AS c (project_id, surveys) VALUES (NEW.project_id, 1)
    ON CONFLICT (project_id) DO UPDATE SET surveys = c.surveys + 1 WHERE c.surveys < 100000;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'a project holds at most 100000 surveys'
            USING ERRCODE = 'check_violation', CONSTRAINT = 'surveys_per_project';
    END IF;
    RETURN NEW;
END
$$;

CREATE FUNCTION burrow_count_deleted_survey() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    UPDATE project_survey_counts SET surveys = surveys - 1 WHERE project_id = OLD.project_id;
    RETURN OLD;
END
$$;

CREATE TRIGGER surveys_per_project BEFORE INSERT ON surveys
    FOR EACH ROW EXECUTE FUNCTION burrow_count_inserted_survey();

CREATE TRIGGER surveys_per_project_deleted AFTER DELETE ON surveys
    FOR EACH ROW EXECUTE FUNCTION burrow_count_deleted_survey();

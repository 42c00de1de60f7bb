-- Every change to what the SDK endpoints serve of a project (its flags, its surveys, the project
-- itself) is announced on the channel `burrow_sdk`, the payload being the project's id. NOTIFY is
-- transactional: listeners hear it when the change commits, never before and never for a
-- rollback, and one transaction's repeats of a payload arrive once. Each `burrow serve` node
-- listens and forgets that project's in-memory SDK snapshot, so every node serves the change.
-- Being triggers, they announce writes from any path: the API, `burrow admin`, or plain SQL.

CREATE FUNCTION burrow_sdk_changed_by_row() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP <> 'INSERT' THEN
        PERFORM pg_notify('burrow_sdk', OLD.project_id::text);
    END IF;
    IF TG_OP <> 'DELETE' THEN
        PERFORM pg_notify('burrow_sdk', NEW.project_id::text);
    END IF;
    RETURN NULL;
END $$;

CREATE FUNCTION burrow_sdk_changed_project() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('burrow_sdk', (CASE WHEN TG_OP = 'DELETE' THEN OLD.id ELSE NEW.id END)::text);
    RETURN NULL;
END $$;

CREATE TRIGGER feature_flags_sdk_changed AFTER INSERT OR UPDATE OR DELETE ON feature_flags
    FOR EACH ROW EXECUTE FUNCTION burrow_sdk_changed_by_row();
CREATE TRIGGER surveys_sdk_changed AFTER INSERT OR UPDATE OR DELETE ON surveys
    FOR EACH ROW EXECUTE FUNCTION burrow_sdk_changed_by_row();
CREATE TRIGGER projects_sdk_changed AFTER UPDATE OR DELETE ON projects
    FOR EACH ROW EXECUTE FUNCTION burrow_sdk_changed_project();

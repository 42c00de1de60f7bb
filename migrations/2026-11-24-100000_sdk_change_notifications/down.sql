DROP TRIGGER projects_sdk_changed ON projects;
DROP TRIGGER surveys_sdk_changed ON surveys;
DROP TRIGGER feature_flags_sdk_changed ON feature_flags;
DROP FUNCTION burrow_sdk_changed_project();
DROP FUNCTION burrow_sdk_changed_by_row();

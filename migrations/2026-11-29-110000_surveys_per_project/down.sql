DROP TRIGGER surveys_per_project_deleted ON surveys;
DROP TRIGGER surveys_per_project ON surveys;
DROP FUNCTION burrow_count_deleted_survey();
DROP FUNCTION burrow_count_inserted_survey();
DROP TABLE project_survey_counts;

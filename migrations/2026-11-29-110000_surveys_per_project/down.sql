DROP TRIGGER surveys_per_project ON surveys;
DROP FUNCTION burrow_surveys_per_project();

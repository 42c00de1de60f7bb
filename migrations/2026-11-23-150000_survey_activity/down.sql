DROP TABLE survey_activity;

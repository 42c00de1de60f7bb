DROP TABLE survey_response_counts;
DROP TABLE survey_responses;
DROP TABLE survey_events;

ALTER TABLE survey_response_counts
    ADD CONSTRAINT survey_response_counts_responses_check CHECK (responses >= 0);

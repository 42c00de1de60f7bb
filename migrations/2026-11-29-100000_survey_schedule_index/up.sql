-- The running recurring surveys, which every node's schedule round reads
-- (`SurveyRepository::due_schedules`): few, whatever the number of surveys.
CREATE INDEX surveys_running_schedules ON surveys (project_id, id)
    WHERE start_date IS NOT NULL AND end_date IS NULL AND iteration_frequency_days > 0;

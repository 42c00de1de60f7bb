DROP INDEX surveys_running_schedules;

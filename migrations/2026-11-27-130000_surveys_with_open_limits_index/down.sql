DROP INDEX surveys_open_limit_idx;

ALTER TABLE feature_flags DROP COLUMN is_remote_configuration;

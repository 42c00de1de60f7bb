-- A flag whose payload servers fetch as configuration (GET …/feature_flags/{id or key}/remote_config),
-- as PostHog's is_remote_configuration.
ALTER TABLE feature_flags ADD COLUMN is_remote_configuration boolean NOT NULL DEFAULT false;

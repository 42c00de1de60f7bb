-- Early access features: a feature in a release stage that persons may opt into from the site.
-- Each has a flag, whose `super_groups` serve the persons enrolled while the feature is in a
-- release stage. Deleted features are gone, as PostHog deletes them.
CREATE TABLE early_access_features (
    id uuid PRIMARY KEY,
    project_id integer NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    name varchar(200) NOT NULL,
    description text NOT NULL DEFAULT '',
    stage text NOT NULL CONSTRAINT early_access_features_stage_check
        CHECK (stage IN ('draft', 'concept', 'alpha', 'beta', 'general-availability', 'archived')),
    documentation_url varchar(800) NOT NULL DEFAULT '',
    -- RESTRICT, as PostHog protects the flag a feature uses (flags are only soft-deleted, so no
    -- write of Burrow's meets it).
    feature_flag_id integer NOT NULL REFERENCES feature_flags (id) ON DELETE RESTRICT,
    created_at timestamptz NOT NULL DEFAULT now()
);
-- One feature per flag: the feature's enrollment is what the flag's `super_groups` serve. It is
-- also the foreign key's index, and what finds the feature linked to a flag.
CREATE UNIQUE INDEX early_access_features_flag_key ON early_access_features (feature_flag_id);
-- The list order: a project's features, newest first (and, by project, the features in given
-- stages that posthog-js lists).
CREATE INDEX early_access_features_project_created_idx
    ON early_access_features (project_id, created_at DESC, id DESC);

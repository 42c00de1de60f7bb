-- What flags aggregate and remember beyond a person's properties: group types and groups
-- (PostHog's group type mapping and groups, written by `$groupidentify` captures), the hash keys
-- that keep a person's variant across identify (experience continuity), and static cohorts'
-- members.

-- A project's group types, at most five (PostHog's indices 0–4), each index given once, in
-- the order captures name them.
CREATE TABLE group_types (
    project_id integer NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    group_type_index smallint NOT NULL CHECK (group_type_index BETWEEN 0 AND 4),
    group_type varchar(400) NOT NULL,
    name_singular varchar(400),
    name_plural varchar(400),
    -- A list of strings (the console's columns), or null.
    default_columns jsonb CHECK (default_columns IS NULL OR jsonb_typeof(default_columns) = 'array'),
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (project_id, group_type_index),
    UNIQUE (project_id, group_type)
);

-- A group's properties, merged with jsonb `||` by each `$groupidentify` (`$group_set`). Keyed by
-- the type's name, as events name it, so a capture stores them whatever index the type gets;
-- deleting a group type deletes its groups.
CREATE TABLE groups (
    project_id integer NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    group_type varchar(400) NOT NULL,
    group_key varchar(400) NOT NULL,
    properties jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(properties) = 'object'),
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (project_id, group_type, group_key)
);

-- Experience continuity: the id a person's `ensure_experience_continuity` flags hash instead of
-- their distinct id (the anonymous id they had before identify), written once per flag and
-- never replaced, as PostHog's `posthog_featureflaghashkeyoverride`.
CREATE TABLE hash_key_overrides (
    project_id integer NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    distinct_id text NOT NULL,
    feature_flag_key varchar(400) NOT NULL,
    hash_key text NOT NULL,
    PRIMARY KEY (project_id, distinct_id, feature_flag_key)
);

-- Static cohorts: a list of persons rather than filters.
ALTER TABLE cohorts ADD COLUMN is_static boolean NOT NULL DEFAULT false;

-- Persons get PostHog's `uuid`, which static cohorts' `add_persons_to_static_cohort` and
-- `remove_person_from_static_cohort` name them by.
ALTER TABLE person_properties ADD COLUMN uuid uuid NOT NULL DEFAULT gen_random_uuid();
CREATE UNIQUE INDEX person_properties_uuid_idx ON person_properties (project_id, uuid);

-- A static cohort's members, by distinct id (a person not captured yet may be listed, and is
-- a member once seen). Keyed for `/flags`, which asks which of a project's static cohorts one
-- distinct id belongs to.
CREATE TABLE cohort_members (
    project_id integer NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    distinct_id text NOT NULL,
    cohort_id integer NOT NULL REFERENCES cohorts (id) ON DELETE CASCADE,
    PRIMARY KEY (project_id, distinct_id, cohort_id)
);
CREATE INDEX cohort_members_cohort_idx ON cohort_members (cohort_id, distinct_id);

-- The SDK snapshot holds the cohorts flags name and the group type mapping the definitions
-- serve: their changes are announced as flags' are (2026-11-24-100000).
CREATE TRIGGER cohorts_sdk_changed AFTER INSERT OR UPDATE OR DELETE ON cohorts
    FOR EACH ROW EXECUTE FUNCTION burrow_sdk_changed_by_row();
CREATE TRIGGER group_types_sdk_changed AFTER INSERT OR UPDATE OR DELETE ON group_types
    FOR EACH ROW EXECUTE FUNCTION burrow_sdk_changed_by_row();

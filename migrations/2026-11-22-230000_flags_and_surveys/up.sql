-- Feature flags and surveys: a survey may link to a flag and be targeted by a flag it owns
-- (created for it) or adopted.

CREATE TABLE feature_flags (
    id serial PRIMARY KEY,
    project_id integer NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    name text NOT NULL DEFAULT '',
    key varchar(400) NOT NULL,
    -- Always an object: groups, optional multivariate, optional payloads.
    filters jsonb NOT NULL DEFAULT '{}',
    -- Soft delete: a deleted flag frees its key but stays visible through a survey's link.
    deleted boolean NOT NULL DEFAULT false,
    active boolean NOT NULL DEFAULT true,
    ensure_experience_continuity boolean NOT NULL DEFAULT false,
    created_by_id integer REFERENCES users (id) ON DELETE SET NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);
-- Keys are unique among a project's live flags only: deleting a flag frees its key.
CREATE UNIQUE INDEX feature_flags_project_key_live ON feature_flags (project_id, key) WHERE NOT deleted;
-- The list order: a project's live flags, newest first.
CREATE INDEX feature_flags_project_created_idx
    ON feature_flags (project_id, created_at DESC, id DESC) WHERE NOT deleted;
CREATE INDEX feature_flags_created_by_id_idx ON feature_flags (created_by_id);

CREATE TABLE surveys (
    id uuid PRIMARY KEY,
    project_id integer NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    name varchar(400) NOT NULL,
    description text NOT NULL DEFAULT '',
    -- popover, widget, button, email, full_screen, api, external_survey
    type varchar(40) NOT NULL,
    linked_flag_id integer REFERENCES feature_flags (id) ON DELETE SET NULL,
    targeting_flag_id integer REFERENCES feature_flags (id) ON DELETE SET NULL,
    -- Whether the targeting flag was created for this survey (and is deleted with it).
    owns_targeting_flag boolean NOT NULL DEFAULT false,
    questions jsonb,
    conditions jsonb,
    appearance jsonb,
    created_at timestamptz NOT NULL DEFAULT now(),
    created_by_id integer REFERENCES users (id) ON DELETE SET NULL,
    updated_at timestamptz NOT NULL DEFAULT now(),
    start_date timestamptz,
    end_date timestamptz,
    archived boolean NOT NULL DEFAULT false,
    responses_limit integer,
    -- once, recurring, always
    schedule varchar(40) NOT NULL DEFAULT 'once',
    iteration_count integer,
    iteration_frequency_days integer,
    iteration_start_dates timestamptz[],
    current_iteration integer,
    current_iteration_start_date timestamptz,
    enable_partial_responses boolean NOT NULL DEFAULT false,
    CONSTRAINT surveys_project_name_key UNIQUE (project_id, name)
);
-- The list order: a project's surveys, newest first.
CREATE INDEX surveys_project_created_idx ON surveys (project_id, created_at DESC, id DESC);
-- Foreign keys PostgreSQL does not index by itself (for ON DELETE SET NULL).
CREATE INDEX surveys_linked_flag_id_idx ON surveys (linked_flag_id);
CREATE INDEX surveys_targeting_flag_id_idx ON surveys (targeting_flag_id);
CREATE INDEX surveys_created_by_id_idx ON surveys (created_by_id);

-- Cohorts: named groups of persons, defined by person-property filters and other cohorts, that
-- flags (and so surveys' targeting) filter by. Only dynamic cohorts: Burrow keeps no events, so
-- behavioral cohorts are refused, and no member list is stored.
CREATE TABLE cohorts (
    id serial PRIMARY KEY,
    project_id integer NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    name text NOT NULL,
    description text NOT NULL DEFAULT '',
    -- `{"properties": {"type": "AND"|"OR", "values": [...]}}`, checked before it is written;
    -- the ids of the cohorts it names are not foreign keys (a cohort is only ever soft-deleted,
    -- and the writes check that each named one is live).
    filters jsonb NOT NULL CHECK (jsonb_typeof(filters) = 'object'),
    -- Soft delete, as PostHog's: a deleted cohort is hidden, and matches no one a flag asks about.
    deleted boolean NOT NULL DEFAULT false,
    created_by_id integer REFERENCES users (id) ON DELETE SET NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);
-- The list order: a project's live cohorts, newest first (and, by project, what a flag's
-- evaluation loads).
CREATE INDEX cohorts_project_created_idx
    ON cohorts (project_id, created_at DESC, id DESC) WHERE NOT deleted;
-- A foreign key PostgreSQL does not index by itself (for ON DELETE SET NULL).
CREATE INDEX cohorts_created_by_id_idx ON cohorts (created_by_id);

-- What SDK events `$set` on a person (e.g. `$survey_responded/<id>`), so feature flags can target
-- it later without the SDK sending it again. One row per project and distinct id; a `$set` is
-- merged into `properties` with jsonb `||` (keys given replace, others stay).
CREATE TABLE person_properties (
    project_id integer NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    distinct_id text NOT NULL,
    properties jsonb NOT NULL DEFAULT '{}',
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (project_id, distinct_id)
);

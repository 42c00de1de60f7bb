-- Tenancy: organizations own projects; users join organizations; users own personal API keys.

CREATE TABLE organizations (
    id uuid PRIMARY KEY,
    name varchar(64) NOT NULL,
    -- none=0, config=3, install=6, root=9 (PostHog's levels)
    plugins_access_level smallint NOT NULL DEFAULT 9 CHECK (plugins_access_level IN (0, 3, 6, 9)),
    created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE projects (
    id serial PRIMARY KEY,
    organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    name varchar(200) NOT NULL,
    api_token varchar(200) NOT NULL UNIQUE,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX projects_organization_id_idx ON projects (organization_id);

CREATE TABLE users (
    id serial PRIMARY KEY,
    uuid uuid NOT NULL UNIQUE,
    email varchar(254) NOT NULL,
    first_name varchar(150) NOT NULL DEFAULT '',
    last_name varchar(150) NOT NULL DEFAULT '',
    distinct_id varchar(200) NOT NULL UNIQUE,
    is_active boolean NOT NULL DEFAULT true,
    is_email_verified boolean NOT NULL DEFAULT false,
    current_organization_id uuid REFERENCES organizations (id) ON DELETE SET NULL,
    current_project_id integer REFERENCES projects (id) ON DELETE SET NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX users_email_lower_key ON users (lower(email));

CREATE TABLE organization_memberships (
    organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    user_id integer NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    -- member=1, admin=8, owner=15 (PostHog's levels)
    level smallint NOT NULL CHECK (level IN (1, 8, 15)),
    joined_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (organization_id, user_id)
);
CREATE INDEX organization_memberships_user_id_idx ON organization_memberships (user_id);

CREATE TABLE personal_api_keys (
    id uuid PRIMARY KEY,
    user_id integer NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    label varchar(40) NOT NULL,
    -- "sha256$" || hex(sha256(key)); the key itself is never stored.
    secure_value varchar(300) NOT NULL UNIQUE,
    mask varchar(20) NOT NULL,
    scopes text[] NOT NULL,
    scoped_teams integer[],
    scoped_organizations text[],
    created_at timestamptz NOT NULL DEFAULT now(),
    last_used_at timestamptz
);
CREATE INDEX personal_api_keys_user_id_idx ON personal_api_keys (user_id);

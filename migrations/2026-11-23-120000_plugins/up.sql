-- Organization plugins, their source files, the per-project configs that use them, and the
-- activity log of their installs and changes.

CREATE TABLE plugins (
    id serial PRIMARY KEY,
    organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    plugin_type varchar(20) NOT NULL
        CHECK (plugin_type IN ('local', 'custom', 'repository', 'source')),
    name varchar(200),
    description text,
    -- As the client sent it, `?private_token=` included; never shown with its query string.
    url varchar(800),
    -- `url` without its query string: one install of a URL per organization. NULL for source
    -- plugins, which have no URL (NULLs never collide).
    url_key varchar(800),
    icon varchar(800),
    config_schema jsonb NOT NULL DEFAULT '{}',
    tag varchar(200),
    latest_tag varchar(800),
    latest_tag_checked_at timestamptz,
    is_global boolean NOT NULL DEFAULT false,
    is_stateless boolean NOT NULL DEFAULT false,
    capabilities jsonb NOT NULL DEFAULT '{}',
    metrics jsonb NOT NULL DEFAULT '{}',
    public_jobs jsonb NOT NULL DEFAULT '{}',
    -- The zip or tgz as downloaded, for upgrades and audits; never serialized.
    archive bytea,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX plugins_organization_url_key ON plugins (organization_id, url_key);
CREATE INDEX plugins_global_idx ON plugins (id) WHERE is_global;

CREATE TABLE plugin_source_files (
    plugin_id integer NOT NULL REFERENCES plugins (id) ON DELETE CASCADE,
    filename varchar(200) NOT NULL,
    source text NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (plugin_id, filename)
);

CREATE TABLE plugin_configs (
    id serial PRIMARY KEY,
    project_id integer NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    plugin_id integer NOT NULL REFERENCES plugins (id) ON DELETE CASCADE,
    enabled boolean NOT NULL DEFAULT false,
    "order" integer NOT NULL DEFAULT 0,
    config jsonb NOT NULL DEFAULT '{}',
    name varchar(400),
    description varchar(1000),
    deleted boolean NOT NULL DEFAULT false,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX plugin_configs_plugin_id_idx ON plugin_configs (plugin_id);
CREATE INDEX plugin_configs_project_id_idx ON plugin_configs (project_id);

CREATE TABLE plugin_activity (
    id uuid PRIMARY KEY,
    organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    -- No foreign key: the log outlives an uninstalled plugin.
    plugin_id integer NOT NULL,
    user_id integer REFERENCES users (id) ON DELETE SET NULL,
    scope varchar(40) NOT NULL,
    activity varchar(40) NOT NULL,
    detail jsonb NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX plugin_activity_organization_created_idx
    ON plugin_activity (organization_id, created_at DESC, id DESC);

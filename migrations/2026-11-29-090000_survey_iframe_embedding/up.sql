-- PostHog's Survey.enable_iframe_embedding: whether other sites may frame the survey's hosted page.
ALTER TABLE surveys ADD COLUMN enable_iframe_embedding boolean NOT NULL DEFAULT false;

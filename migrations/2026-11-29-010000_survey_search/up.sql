-- The survey list's search (`?search=`) tiers and ranks surveys with pg_trgm's `similarity` and
-- `word_similarity`, as PostHog does. pg_trgm is a trusted extension (PostgreSQL 13 and later):
-- a user with CREATE on the database may create it, and Debian's postgresql package ships it.
CREATE EXTENSION IF NOT EXISTS pg_trgm;

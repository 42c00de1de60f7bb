-- A survey's languages (PostHog's Survey.base_language and Survey.translations): the language
-- its own texts are in, and its survey-level texts in other languages, keyed by language.
-- Questions carry their own translations inside `questions`.
ALTER TABLE surveys
    ADD COLUMN base_language varchar(20) NOT NULL DEFAULT 'en',
    ADD COLUMN translations jsonb;

ALTER TABLE surveys DROP COLUMN enable_iframe_embedding;

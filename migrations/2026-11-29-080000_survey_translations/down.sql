ALTER TABLE surveys
    DROP COLUMN translations,
    DROP COLUMN base_language;

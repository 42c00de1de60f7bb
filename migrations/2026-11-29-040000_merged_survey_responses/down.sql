-- Abandons go (the older check refuses them); responses made from partially completed
-- dismissals stay, with their counts, as responses of the older release.
DELETE FROM survey_events WHERE event = 'survey abandoned';
ALTER TABLE survey_events DROP CONSTRAINT survey_events_event_check;
ALTER TABLE survey_events ADD CONSTRAINT survey_events_event_check
    CHECK (event IN ('survey shown', 'survey dismissed', 'survey sent'));

ALTER TABLE survey_responses DROP COLUMN partially_completed, DROP COLUMN context;

-- Deleting responses (one, a survey's, or a person's) takes them off the counts by adding a
-- negative amount to slot 0, without waiting on the slots concurrent captures add to: a slot may
-- then hold less than zero while the survey's sum stays exact, so the per-row check goes, as the
-- slotted counts' migration let `archived <= responses` go for the same reason.
ALTER TABLE survey_response_counts DROP CONSTRAINT survey_response_counts_responses_check;

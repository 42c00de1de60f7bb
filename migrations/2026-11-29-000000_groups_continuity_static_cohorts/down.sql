DROP TRIGGER group_types_sdk_changed ON group_types;
DROP TRIGGER cohorts_sdk_changed ON cohorts;
DROP TABLE cohort_members;
DROP INDEX person_properties_uuid_idx;
ALTER TABLE person_properties DROP COLUMN uuid;
ALTER TABLE cohorts DROP COLUMN is_static;
DROP TABLE hash_key_overrides;
DROP TABLE groups;
DROP TABLE group_types;

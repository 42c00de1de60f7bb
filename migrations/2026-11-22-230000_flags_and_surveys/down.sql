DROP TABLE surveys;
DROP TABLE feature_flags;

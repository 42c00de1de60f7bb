DROP TABLE person_properties;

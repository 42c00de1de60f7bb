DROP TABLE early_access_features;

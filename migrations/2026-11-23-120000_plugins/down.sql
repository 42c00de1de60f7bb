DROP TABLE plugin_activity;
DROP TABLE plugin_configs;
DROP TABLE plugin_source_files;
DROP TABLE plugins;

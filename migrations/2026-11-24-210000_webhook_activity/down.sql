DROP TABLE webhook_activity;

DROP TABLE personal_api_keys;
DROP TABLE organization_memberships;
DROP TABLE users;
DROP TABLE projects;
DROP TABLE organizations;

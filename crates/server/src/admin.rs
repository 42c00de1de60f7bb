//! Runs `burrow admin …` commands against the database and renders their JSON output.

use std::sync::Arc;

use adapters::{Database, PgApiKeyRepository, PgTenancyRepository, PoolSettings};
use domain::admin::{AdminService, BootstrapRequest, KeyRequest};
use domain::tenancy::{OrganizationId, ProjectId};
use serde_json::{Value, json};

use crate::cli::{AdminArgs, AdminCommand};

/// Executes one admin command; returns what to print on stdout.
///
/// # Errors
/// When the input is refused or the database fails; nothing has been written then.
pub async fn run(args: AdminArgs) -> anyhow::Result<Value> {
    let database = Database::connect(
        &args.database.database_url,
        PoolSettings {
            max_size: 2,
            ..PoolSettings::default()
        },
    )?;
    let admin = AdminService::new(
        Arc::new(PgApiKeyRepository::new(database.clone())),
        Arc::new(PgTenancyRepository::new(database)),
    );
    let output = match args.command {
        AdminCommand::Bootstrap {
            email,
            organization,
            project,
            first_name,
            scopes,
            plugins_access_level,
        } => {
            let made = admin
                .bootstrap(BootstrapRequest {
                    email,
                    first_name,
                    organization_name: organization,
                    project_name: project,
                    scopes,
                    plugins_access_level,
                })
                .await?;
            let user = made.record.user;
            json!({
                "user": {"id": user.id.0, "uuid": user.uuid, "email": user.email, "distinct_id": user.distinct_id},
                "organization_id": made.record.organization.id.0,
                "project_id": made.record.project.id.0,
                "project_api_token": made.record.project.api_token,
                "personal_api_key": made.key.expose(),
            })
        }
        AdminCommand::CreateKey {
            email,
            scopes,
            scoped_teams,
            scoped_organizations,
            label,
        } => {
            let key = admin
                .create_key(KeyRequest {
                    email,
                    label,
                    scopes,
                    scoped_teams: scoped_teams.map(|ids| ids.into_iter().map(ProjectId).collect()),
                    scoped_organizations: scoped_organizations
                        .map(|ids| ids.into_iter().map(OrganizationId).collect()),
                })
                .await?;
            json!({"personal_api_key": key.expose()})
        }
        AdminCommand::CreateProject { organization, name } => {
            let project = admin
                .create_project(OrganizationId(organization), &name)
                .await?;
            json!({"project_id": project.id.0, "project_api_token": project.api_token})
        }
        AdminCommand::AddMember {
            email,
            organization,
            level,
        } => {
            admin
                .add_member(&email, OrganizationId(organization), level)
                .await?;
            json!({"ok": true})
        }
        AdminCommand::SetPluginsAccessLevel {
            organization,
            level,
        } => {
            admin
                .set_plugins_access_level(OrganizationId(organization), level)
                .await?;
            json!({"ok": true})
        }
        AdminCommand::DeactivateUser { email } => {
            admin.deactivate_user(&email).await?;
            json!({"ok": true})
        }
    };
    Ok(output)
}

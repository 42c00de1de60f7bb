//! `TenancyRepository` over organizations, projects, users and memberships.

use async_trait::async_trait;
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use domain::Unexpected;
use domain::activity::NewActivity;
use domain::ports::{Page, PageRequest};
use domain::tenancy::{AsSeenBy, TenancyRepository, TenancyTransaction, VisibleProjects};
use domain::tenancy::{
    Email, MembershipLevel, Organization, OrganizationId, OrganizationMembership,
    PluginsAccessLevel, Project, ProjectId, SurveyConfig, User, UserId,
};
use serde_json::Value;
use uuid::Uuid;

use crate::postgres::confirmed::confirmed;
use crate::postgres::errors::StorageContext;
use crate::postgres::paging::{page, window};
use crate::postgres::rows::{OrganizationRow, ProjectRow, UserRow, membership_level};
use crate::postgres::schema::{
    organization_memberships, organizations, projects, survey_activity, users,
};
use crate::postgres::transaction::PgTransaction;

diesel::define_sql_function!(fn lower(value: diesel::sql_types::Text) -> diesel::sql_types::Text);

crate::postgres::over_the_pool! {
    /// Organizations, projects, users and memberships in PostgreSQL.
    PgTenancyRepository
}

type Pg = diesel::pg::Pg;

async fn insert_project(
    conn: &mut impl diesel_async::AsyncConnection<Backend = Pg>,
    organization: OrganizationId,
    name: &str,
    api_token: &str,
) -> QueryResult<ProjectRow> {
    confirmed(
        diesel::insert_into(projects::table)
            .values((
                projects::organization_id.eq(organization.0),
                projects::name.eq(name),
                projects::api_token.eq(api_token),
            ))
            .returning(ProjectRow::as_returning()),
        conn,
    )
    .await
}

/// The user whose email is `email` up to case, lowered by PostgreSQL on both sides as the unique
/// index on `lower(email)` is, so a lookup agrees with that index whatever the database's locale.
async fn find_user_by_email(
    conn: &mut impl diesel_async::AsyncConnection<Backend = Pg>,
    email: &str,
) -> QueryResult<Option<UserRow>> {
    users::table
        .filter(lower(users::email).eq(lower(email)))
        .select(UserRow::as_select())
        .first(conn)
        .await
        .optional()
}

#[async_trait]
impl TenancyRepository for PgTenancyRepository {
    async fn project(&self, id: ProjectId) -> Result<Option<Project>, Unexpected> {
        let mut conn = self.database.connection().await?;
        let row = projects::table
            .find(id.0)
            .select(ProjectRow::as_select())
            .first(&mut conn)
            .await
            .optional_during("loading a project")?;
        Ok(row.map(Into::into))
    }

    async fn project_by_token(&self, token: &str) -> Result<Option<Project>, Unexpected> {
        let mut conn = self.database.connection().await?;
        let row = projects::table
            .filter(projects::api_token.eq(token))
            .select(ProjectRow::as_select())
            .first(&mut conn)
            .await
            .optional_during("loading a project by its token")?;
        Ok(row.map(Into::into))
    }

    async fn organization(&self, id: OrganizationId) -> Result<Option<Organization>, Unexpected> {
        let mut conn = self.database.connection().await?;
        let row = organizations::table
            .find(id.0)
            .select(OrganizationRow::as_select())
            .first(&mut conn)
            .await
            .optional_during("loading an organization")?;
        row.map(TryInto::try_into).transpose()
    }

    async fn project_for(
        &self,
        user: UserId,
        id: ProjectId,
    ) -> Result<Option<AsSeenBy<Project>>, Unexpected> {
        let mut conn = self.database.connection().await?;
        let row = projects::table
            .left_join(
                organization_memberships::table.on(organization_memberships::organization_id
                    .eq(projects::organization_id)
                    .and(organization_memberships::user_id.eq(user.0))),
            )
            .filter(projects::id.eq(id.0))
            .select((
                ProjectRow::as_select(),
                organization_memberships::level.nullable(),
            ))
            .first::<(ProjectRow, Option<i16>)>(&mut conn)
            .await
            .optional_during("loading a project with the caller's membership")?;
        row.map(|(project, level)| {
            Ok(AsSeenBy {
                tenant: project.into(),
                level: level.map(membership_level).transpose()?,
            })
        })
        .transpose()
    }

    async fn organization_for(
        &self,
        user: UserId,
        id: OrganizationId,
    ) -> Result<Option<AsSeenBy<Organization>>, Unexpected> {
        let mut conn = self.database.connection().await?;
        let row = organizations::table
            .left_join(
                organization_memberships::table.on(organization_memberships::organization_id
                    .eq(organizations::id)
                    .and(organization_memberships::user_id.eq(user.0))),
            )
            .filter(organizations::id.eq(id.0))
            .select((
                OrganizationRow::as_select(),
                organization_memberships::level.nullable(),
            ))
            .first::<(OrganizationRow, Option<i16>)>(&mut conn)
            .await
            .optional_during("loading an organization with the caller's membership")?;
        row.map(|(organization, level)| {
            Ok(AsSeenBy {
                tenant: organization.try_into()?,
                level: level.map(membership_level).transpose()?,
            })
        })
        .transpose()
    }

    async fn memberships(&self, user: UserId) -> Result<Vec<OrganizationMembership>, Unexpected> {
        let mut conn = self.database.connection().await?;
        let rows = organization_memberships::table
            .inner_join(organizations::table)
            .filter(organization_memberships::user_id.eq(user.0))
            .order((organizations::created_at.asc(), organizations::id.asc()))
            .select((
                OrganizationRow::as_select(),
                organization_memberships::level,
            ))
            .load::<(OrganizationRow, i16)>(&mut conn)
            .await
            .during("loading a user's memberships")?;
        rows.into_iter()
            .map(|(organization, level)| {
                Ok(OrganizationMembership {
                    organization: organization.try_into()?,
                    level: membership_level(level)?,
                })
            })
            .collect()
    }

    async fn visible_projects(
        &self,
        filter: &VisibleProjects,
        page_request: PageRequest,
    ) -> Result<Page<Project>, Unexpected> {
        let mut conn = self.database.connection().await?;
        let visible = || {
            let mut query = projects::table
                .filter(
                    projects::organization_id.eq_any(
                        organization_memberships::table
                            .filter(organization_memberships::user_id.eq(filter.user_id.0))
                            .select(organization_memberships::organization_id),
                    ),
                )
                .into_boxed();
            if let Some(ids) = &filter.project_ids {
                query = query
                    .filter(projects::id.eq_any(ids.iter().map(|id| id.0).collect::<Vec<_>>()));
            }
            if let Some(ids) = &filter.organization_ids {
                query = query.filter(
                    projects::organization_id.eq_any(ids.iter().map(|id| id.0).collect::<Vec<_>>()),
                );
            }
            query
        };
        let count = visible()
            .count()
            .get_result::<i64>(&mut conn)
            .await
            .during("counting visible projects")?;
        let rows = window(visible().order(projects::id.asc()), page_request)
            .select(ProjectRow::as_select())
            .load(&mut conn)
            .await
            .during("listing visible projects")?;
        Ok(page(count, rows.into_iter().map(Into::into).collect()))
    }

    async fn user(&self, id: UserId) -> Result<Option<User>, Unexpected> {
        let mut conn = self.database.connection().await?;
        let row = users::table
            .find(id.0)
            .select(UserRow::as_select())
            .first(&mut conn)
            .await
            .optional_during("loading a user")?;
        Ok(row.map(Into::into))
    }

    async fn user_by_email(&self, email: &Email) -> Result<Option<User>, Unexpected> {
        let mut conn = self.database.connection().await?;
        let row = find_user_by_email(&mut conn, email.as_str())
            .await
            .during("looking up a user by email")?;
        Ok(row.map(Into::into))
    }

    async fn create_project(
        &self,
        organization: OrganizationId,
        name: &str,
        api_token: &str,
    ) -> Result<Project, Unexpected> {
        let mut conn = self.database.connection().await?;
        let row = insert_project(&mut conn, organization, name, api_token)
            .await
            .during("creating a project")?;
        Ok(row.into())
    }

    async fn upsert_membership(
        &self,
        user: UserId,
        organization: OrganizationId,
        level: MembershipLevel,
    ) -> Result<(), Unexpected> {
        let mut conn = self.database.connection().await?;
        diesel::insert_into(organization_memberships::table)
            .values((
                organization_memberships::organization_id.eq(organization.0),
                organization_memberships::user_id.eq(user.0),
                organization_memberships::level.eq(level.as_i16()),
            ))
            .on_conflict((
                organization_memberships::organization_id,
                organization_memberships::user_id,
            ))
            .do_update()
            .set(organization_memberships::level.eq(level.as_i16()))
            .execute(&mut conn)
            .await
            .during("adding a member")?;
        Ok(())
    }

    async fn set_plugins_access_level(
        &self,
        organization: OrganizationId,
        level: PluginsAccessLevel,
    ) -> Result<(), Unexpected> {
        let mut conn = self.database.connection().await?;
        diesel::update(organizations::table.find(organization.0))
            .set(organizations::plugins_access_level.eq(level.as_i16()))
            .execute(&mut conn)
            .await
            .during("setting an organization's plugins access level")?;
        Ok(())
    }

    async fn set_current(
        &self,
        user: UserId,
        organization: OrganizationId,
        project: Option<ProjectId>,
    ) -> Result<(), Unexpected> {
        let mut conn = self.database.connection().await?;
        diesel::update(users::table.find(user.0))
            .set((
                users::current_organization_id.eq(Some(organization.0)),
                users::current_project_id.eq(project.map(|p| p.0)),
            ))
            .execute(&mut conn)
            .await
            .during("switching a user's current organization and project")?;
        Ok(())
    }

    async fn deactivate_user(&self, user: UserId) -> Result<(), Unexpected> {
        let mut conn = self.database.connection().await?;
        diesel::update(users::table.find(user.0))
            .set(users::is_active.eq(false))
            .execute(&mut conn)
            .await
            .during("deactivating a user")?;
        Ok(())
    }

    async fn begin(&self) -> Result<Box<dyn TenancyTransaction>, Unexpected> {
        Ok(Box::new(PgTransaction::open(&self.database).await?))
    }
}

#[async_trait]
impl TenancyTransaction for PgTransaction {
    async fn user_by_email(&mut self, email: &Email) -> Result<Option<User>, Unexpected> {
        let row = find_user_by_email(self.connection().await?, email.as_str())
            .await
            .during("looking up a user by email")?;
        Ok(row.map(Into::into))
    }

    async fn insert_user(&mut self, email: &Email, first_name: &str) -> Result<User, Unexpected> {
        let row = diesel::insert_into(users::table)
            .values((
                users::uuid.eq(Uuid::now_v7()),
                users::email.eq(email.as_str()),
                users::first_name.eq(first_name),
                users::distinct_id.eq(Uuid::new_v4().to_string()),
            ))
            .returning(UserRow::as_returning())
            .get_result(self.connection().await?)
            .await
            .during("creating a user")?;
        Ok(row.into())
    }

    async fn insert_organization(
        &mut self,
        name: &str,
        plugins_access_level: PluginsAccessLevel,
    ) -> Result<Organization, Unexpected> {
        let row = diesel::insert_into(organizations::table)
            .values(OrganizationRow {
                id: Uuid::now_v7(),
                name: name.to_owned(),
                plugins_access_level: plugins_access_level.as_i16(),
                created_at: chrono::Utc::now(),
            })
            .returning(OrganizationRow::as_returning())
            .get_result(self.connection().await?)
            .await
            .during("creating an organization")?;
        row.try_into()
    }

    async fn insert_membership(
        &mut self,
        user: UserId,
        organization: OrganizationId,
        level: MembershipLevel,
    ) -> Result<(), Unexpected> {
        diesel::insert_into(organization_memberships::table)
            .values((
                organization_memberships::organization_id.eq(organization.0),
                organization_memberships::user_id.eq(user.0),
                organization_memberships::level.eq(level.as_i16()),
            ))
            .execute(self.connection().await?)
            .await
            .during("adding a member")?;
        Ok(())
    }

    async fn insert_project(
        &mut self,
        organization: OrganizationId,
        name: &str,
        api_token: &str,
    ) -> Result<Project, Unexpected> {
        let row = insert_project(self.connection().await?, organization, name, api_token)
            .await
            .during("creating a project")?;
        Ok(row.into())
    }

    async fn set_current(
        &mut self,
        user: UserId,
        organization: OrganizationId,
        project: ProjectId,
    ) -> Result<User, Unexpected> {
        let row = diesel::update(users::table.find(user.0))
            .set((
                users::current_organization_id.eq(organization.0),
                users::current_project_id.eq(project.0),
            ))
            .returning(UserRow::as_returning())
            .get_result(self.connection().await?)
            .await
            .during("switching a user's current organization and project")?;
        Ok(row.into())
    }

    async fn lock_project(&mut self, id: ProjectId) -> Result<Option<Project>, Unexpected> {
        let row = projects::table
            .find(id.0)
            .select(ProjectRow::as_select())
            .for_update()
            .first(self.connection().await?)
            .await
            .optional_during("locking a project")?;
        Ok(row.map(Into::into))
    }

    async fn set_survey_config(
        &mut self,
        id: ProjectId,
        config: Option<&SurveyConfig>,
        activity: Option<&NewActivity>,
    ) -> Result<Project, Unexpected> {
        let stored = config.map(|config| Value::Object(config.as_map().clone()));
        let row = diesel::update(projects::table.find(id.0))
            .set(projects::survey_config.eq(stored))
            .returning(ProjectRow::as_returning())
            .get_result(self.connection().await?)
            .await
            .during("storing a project's survey_config")?;
        if let Some(activity) = activity {
            // About no survey: its `survey_id` is NULL, listed with an `item_id` of "".
            diesel::insert_into(survey_activity::table)
                .values((
                    survey_activity::id.eq(Uuid::now_v7()),
                    survey_activity::project_id.eq(id.0),
                    survey_activity::user_id.eq(activity.user.0),
                    survey_activity::activity.eq(activity.activity),
                    survey_activity::detail.eq(&activity.detail),
                ))
                .execute(self.connection().await?)
                .await
                .during("logging a change of a project's survey_config")?;
        }
        Ok(row.into())
    }
}

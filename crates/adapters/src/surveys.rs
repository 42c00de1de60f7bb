//! `SurveyRepository` over the `surveys` table; each write, with its targeting flag changes, is
//! one transaction.

use std::collections::HashMap;

use async_trait::async_trait;
use diesel::prelude::*;
use diesel_async::{AsyncConnection, RunQueryDsl};
use domain::Unexpected;
use domain::feature_flag::FlagId;
use domain::ports::{Page, PageRequest};
use domain::survey::{
    Attach, NewSurvey, Survey, SurveyError, SurveyFilter, SurveyRepository, TargetingPlan,
    UpdatePlanner,
};
use domain::tenancy::ProjectId;
use uuid::Uuid;

use crate::database::Database;
use crate::errors::{StorageContext, is_unique_violation, unexpected};
use crate::feature_flags::{insert_flag, load_creators, soft_delete_flag};
use crate::rows::{FlagRow, SurveyRow, SurveyStateRow};
use crate::schema::{feature_flags, surveys};

type Pg = diesel::pg::Pg;

/// The constraint that keeps survey names unique within a project.
const NAME_CONSTRAINT: &str = "surveys_project_name_key";

/// Surveys in PostgreSQL, with the flags they link to and are targeted by.
pub struct PgSurveyRepository {
    database: Database,
}

impl PgSurveyRepository {
    /// A repository over the shared pool.
    pub fn new(database: Database) -> Self {
        Self { database }
    }
}

/// The error of a survey transaction: diesel's transaction manager needs
/// `From<diesel::result::Error>`, which the domain's `SurveyError` cannot have here.
struct TransactionError(SurveyError);

impl From<diesel::result::Error> for TransactionError {
    fn from(error: diesel::result::Error) -> Self {
        Self(SurveyError::Unexpected(unexpected(
            error,
            "running a survey transaction",
        )))
    }
}

impl From<SurveyError> for TransactionError {
    fn from(error: SurveyError) -> Self {
        Self(error)
    }
}

impl From<Unexpected> for TransactionError {
    fn from(error: Unexpected) -> Self {
        Self(SurveyError::Unexpected(error))
    }
}

/// A survey write's failure: `NameTaken` for the project's name constraint, else `Unexpected`.
fn survey_write_error(error: diesel::result::Error, what: &'static str) -> TransactionError {
    if is_unique_violation(&error, NAME_CONSTRAINT) {
        TransactionError(SurveyError::NameTaken)
    } else {
        TransactionError(SurveyError::Unexpected(unexpected(error, what)))
    }
}

/// Escapes `LIKE` wildcards so a search term matches literally (backslash is the default
/// escape character).
fn like_pattern(term: &str) -> String {
    let mut pattern = String::with_capacity(term.len() + 2);
    pattern.push('%');
    for c in term.chars() {
        if matches!(c, '%' | '_' | '\\') {
            pattern.push('\\');
        }
        pattern.push(c);
    }
    pattern.push('%');
    pattern
}

/// Turns a page of survey rows into surveys with two more queries, however long the page:
/// one for every flag they reference (deleted ones included) and one for every creator.
async fn assemble(
    conn: &mut impl AsyncConnection<Backend = Pg>,
    project: ProjectId,
    rows: Vec<SurveyRow>,
) -> Result<Vec<Survey>, Unexpected> {
    let mut flag_ids: Vec<i32> = rows
        .iter()
        .flat_map(|row| [row.linked_flag_id, row.targeting_flag_id])
        .flatten()
        .collect();
    flag_ids.sort_unstable();
    flag_ids.dedup();
    let flag_rows = if flag_ids.is_empty() {
        Vec::new()
    } else {
        feature_flags::table
            .filter(feature_flags::id.eq_any(flag_ids))
            .filter(feature_flags::project_id.eq(project.0))
            .select(FlagRow::as_select())
            .load(conn)
            .await
            .during("loading surveys' feature flags")?
    };
    let creator_ids = rows
        .iter()
        .map(|row| row.created_by_id)
        .chain(flag_rows.iter().map(|flag| flag.created_by_id))
        .flatten()
        .collect();
    let users = load_creators(conn, creator_ids)
        .await
        .during("loading surveys' creators")?;
    let flags = flag_rows
        .into_iter()
        .map(|row| {
            let creator = row.created_by_id.and_then(|id| users.get(&id).cloned());
            Ok((row.id, row.into_flag(creator)?))
        })
        .collect::<Result<HashMap<_, _>, Unexpected>>()?;
    rows.into_iter()
        .map(|row| row.into_survey(&flags, &users))
        .collect()
}

/// One survey of the project, with its flags and creator.
async fn load_survey(
    conn: &mut impl AsyncConnection<Backend = Pg>,
    project: ProjectId,
    id: Uuid,
) -> Result<Option<Survey>, Unexpected> {
    let row = surveys::table
        .filter(surveys::id.eq(id))
        .filter(surveys::project_id.eq(project.0))
        .select(SurveyRow::as_select())
        .first(conn)
        .await
        .optional()
        .during("loading a survey")?;
    Ok(assemble(conn, project, row.into_iter().collect())
        .await?
        .pop())
}

/// A survey that was just written, read back inside its transaction.
async fn reload_survey(
    conn: &mut impl AsyncConnection<Backend = Pg>,
    project: ProjectId,
    id: Uuid,
) -> Result<Survey, Unexpected> {
    load_survey(conn, project, id)
        .await?
        .ok_or_else(|| Unexpected::new(format!("survey {id} vanished while being written")))
}

/// Which targeting flag a survey has, and whether it owns it.
#[derive(Clone, Copy)]
struct Targeting {
    flag: Option<i32>,
    owned: bool,
}

/// Gives the survey the flag `attach` names, creating it if it is new.
async fn attach_flag(
    conn: &mut impl AsyncConnection<Backend = Pg>,
    attach: &Attach,
) -> Result<Targeting, Unexpected> {
    Ok(match attach {
        Attach::New(flag) => {
            let row = insert_flag(conn, flag)
                .await
                .during("creating a survey's targeting flag")?;
            Targeting {
                flag: Some(row.id),
                owned: true,
            }
        }
        Attach::Existing(FlagId(id)) => Targeting {
            flag: Some(*id),
            owned: false,
        },
    })
}

/// Applies a plan's detach, attach and filters steps to the survey's targeting flag and returns
/// the flag it ends up with.
async fn change_targeting(
    conn: &mut impl AsyncConnection<Backend = Pg>,
    project: ProjectId,
    plan: &TargetingPlan,
    mut targeting: Targeting,
) -> Result<Targeting, Unexpected> {
    if let Some(detach) = plan.detach {
        targeting = Targeting {
            flag: None,
            owned: false,
        };
        if detach.delete {
            soft_delete_flag(conn, project, detach.flag)
                .await
                .during("deleting a survey's targeting flag")?;
        }
    }
    if let Some(attach) = &plan.attach {
        targeting = attach_flag(conn, attach).await?;
    }
    if let (Some(filters), Some(flag)) = (&plan.filters, targeting.flag) {
        diesel::update(
            feature_flags::table
                .filter(feature_flags::id.eq(flag))
                .filter(feature_flags::project_id.eq(project.0)),
        )
        .set(feature_flags::filters.eq(serde_json::Value::Object(filters.clone())))
        .execute(conn)
        .await
        .during("replacing a targeting flag's filters")?;
    }
    Ok(targeting)
}

/// The last step of a plan: the survey's targeting flag serves exactly while it runs.
async fn set_targeting_active(
    conn: &mut impl AsyncConnection<Backend = Pg>,
    project: ProjectId,
    targeting: Targeting,
    active: bool,
) -> Result<(), Unexpected> {
    if let Some(flag) = targeting.flag {
        diesel::update(
            feature_flags::table
                .filter(feature_flags::id.eq(flag))
                .filter(feature_flags::project_id.eq(project.0)),
        )
        .set(feature_flags::active.eq(active))
        .execute(conn)
        .await
        .during("switching a targeting flag on or off")?;
    }
    Ok(())
}

#[async_trait]
impl SurveyRepository for PgSurveyRepository {
    async fn list(
        &self,
        project: ProjectId,
        filter: &SurveyFilter,
        page: PageRequest,
    ) -> Result<Page<Survey>, Unexpected> {
        let mut conn = self.database.connection().await?;
        let matching = || {
            let mut query = surveys::table
                .filter(surveys::project_id.eq(project.0))
                .into_boxed();
            if let Some(archived) = filter.archived {
                query = query.filter(surveys::archived.eq(archived));
            }
            for term in &filter.search {
                let pattern = like_pattern(term);
                query = query.filter(
                    surveys::name
                        .ilike(pattern.clone())
                        .or(surveys::description.ilike(pattern)),
                );
            }
            query
        };
        let count = matching()
            .count()
            .get_result::<i64>(&mut conn)
            .await
            .during("counting surveys")?;
        let rows = matching()
            .order((surveys::created_at.desc(), surveys::id.desc()))
            .limit(i64::from(page.limit))
            .offset(i64::try_from(page.offset).unwrap_or(i64::MAX))
            .select(SurveyRow::as_select())
            .load(&mut conn)
            .await
            .during("listing surveys")?;
        Ok(Page {
            count: count.unsigned_abs(),
            items: assemble(&mut conn, project, rows).await?,
        })
    }

    async fn get(&self, project: ProjectId, id: Uuid) -> Result<Option<Survey>, Unexpected> {
        let mut conn = self.database.connection().await?;
        load_survey(&mut conn, project, id).await
    }

    async fn create(&self, survey: NewSurvey) -> Result<Survey, SurveyError> {
        let mut conn = self.database.connection().await?;
        let project = survey.project_id;
        conn.transaction::<_, TransactionError, _>(async |conn| {
            let targeting = match &survey.targeting.attach {
                Some(attach) => attach_flag(conn, attach).await?,
                None => Targeting {
                    flag: None,
                    owned: false,
                },
            };
            diesel::insert_into(surveys::table)
                .values((
                    SurveyStateRow::from(&survey.state),
                    surveys::id.eq(survey.id),
                    surveys::project_id.eq(project.0),
                    surveys::targeting_flag_id.eq(targeting.flag),
                    surveys::owns_targeting_flag.eq(targeting.owned),
                    surveys::created_by_id.eq(survey.created_by.map(|user| user.0)),
                ))
                .execute(conn)
                .await
                .map_err(|error| survey_write_error(error, "creating a survey"))?;
            set_targeting_active(conn, project, targeting, survey.targeting.active).await?;
            Ok(reload_survey(conn, project, survey.id).await?)
        })
        .await
        .map_err(|TransactionError(error)| error)
    }

    async fn update(
        &self,
        project: ProjectId,
        id: Uuid,
        planner: &UpdatePlanner<'_>,
    ) -> Result<Survey, SurveyError> {
        let mut conn = self.database.connection().await?;
        conn.transaction::<_, TransactionError, _>(async |conn| {
            let row = surveys::table
                .filter(surveys::id.eq(id))
                .filter(surveys::project_id.eq(project.0))
                .select(SurveyRow::as_select())
                .for_update()
                .first(conn)
                .await
                .optional()
                .during("locking a survey")?
                .ok_or(SurveyError::NotFound)?;
            let stored = Targeting {
                flag: row.targeting_flag_id,
                owned: row.owns_targeting_flag,
            };
            let current = assemble(conn, project, vec![row])
                .await?
                .pop()
                .ok_or_else(|| Unexpected::new(format!("survey {id} was loaded but not built")))?;
            let update = planner(&current)?;
            let targeting = change_targeting(conn, project, &update.targeting, stored).await?;
            diesel::update(surveys::table.find(id))
                .set((
                    SurveyStateRow::from(&update.state),
                    surveys::targeting_flag_id.eq(targeting.flag),
                    surveys::owns_targeting_flag.eq(targeting.owned),
                    surveys::updated_at.eq(diesel::dsl::now),
                ))
                .execute(conn)
                .await
                .map_err(|error| survey_write_error(error, "updating a survey"))?;
            set_targeting_active(conn, project, targeting, update.targeting.active).await?;
            Ok(reload_survey(conn, project, id).await?)
        })
        .await
        .map_err(|TransactionError(error)| error)
    }

    async fn delete(&self, project: ProjectId, id: Uuid) -> Result<bool, Unexpected> {
        let mut conn = self.database.connection().await?;
        conn.transaction::<_, diesel::result::Error, _>(async |conn| {
            let deleted = diesel::delete(
                surveys::table
                    .filter(surveys::id.eq(id))
                    .filter(surveys::project_id.eq(project.0)),
            )
            .returning((surveys::targeting_flag_id, surveys::owns_targeting_flag))
            .get_result::<(Option<i32>, bool)>(conn)
            .await
            .optional()?;
            let Some((targeting, owned)) = deleted else {
                return Ok(false);
            };
            if let (Some(flag), true) = (targeting, owned) {
                soft_delete_flag(conn, project, FlagId(flag)).await?;
            }
            Ok(true)
        })
        .await
        .during("deleting a survey and its targeting flag")
    }
}

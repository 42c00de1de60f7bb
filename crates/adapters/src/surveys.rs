//! `SurveyRepository` over the `surveys` and `survey_activity` tables; each write, with its
//! targeting flag changes and its activity entry, is one transaction that locks the survey and
//! the flags it may change before planning.

use std::collections::{BTreeSet, HashMap};

use async_trait::async_trait;
use diesel::prelude::*;
use diesel_async::{AsyncConnection, RunQueryDsl};
use domain::activity::{ActivityPage, NewActivity};
use domain::feature_flag::{FeatureFlag, FlagChanges, FlagId};
use domain::ports::{Page, PageRequest};
use domain::survey::{
    CopyPlanner, CopyTarget, CreatePlanner, DeletionNote, FlagReferences, ReferencedFlags, Survey,
    SurveyFilter, SurveyId, SurveyRepository, SurveyWrite, TargetingFlag, UpdatePlanner,
};
use domain::tenancy::{ProjectId, UserId};
use domain::{DomainError, Unexpected};
use uuid::Uuid;

use crate::database::Database;
use crate::errors::{StorageContext, TransactionError, write_error};
use crate::feature_flags::{change_flag, flags_by_id, insert_flag};
use crate::paging::{page, window};
use crate::rows::{SurveyActivityRow, SurveyRow, SurveyStateRow, activity_page};
use crate::schema::{survey_activity, surveys, users};
use crate::whole_surveys::load_whole;

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

/// A `LIKE` pattern matching what starts with `prefix`, wildcards in it matched literally.
fn prefix_pattern(prefix: &str) -> String {
    let mut pattern = like_pattern(prefix);
    pattern.remove(0);
    pattern
}

/// One survey of the project, whole.
async fn load_survey(
    conn: &mut impl AsyncConnection<Backend = Pg>,
    project: ProjectId,
    id: SurveyId,
) -> Result<Option<Survey>, Unexpected> {
    let ids = surveys::table
        .filter(surveys::id.eq(id.0))
        .select(surveys::id)
        .into_boxed();
    Ok(load_whole(conn, project, ids).await?.pop())
}

/// The referenced flags, among the locked ones, that are live.
fn referenced(flags: &HashMap<i32, FeatureFlag>, references: FlagReferences) -> ReferencedFlags {
    let live = |id: Option<FlagId>| {
        id.and_then(|id| flags.get(&id.0))
            .filter(|flag| !flag.deleted)
            .cloned()
    };
    ReferencedFlags {
        linked: live(references.linked),
        targeting: live(references.targeting),
    }
}

/// The flags a survey write plans against. Those it may change (its targeting flags) are locked
/// until the transaction ends, so no other write changes or deletes them meanwhile. Its linked
/// flags are only read: a survey shows its linked flag even once deleted, so linking a flag that
/// is deleted a moment later ends as linking it a moment before, and surveys linking one flag
/// need not wait for each other's commits.
#[derive(Default)]
struct PlannedFlags {
    flags: HashMap<i32, FeatureFlag>,
    locked: Vec<i32>,
}

impl PlannedFlags {
    async fn read(
        conn: &mut impl AsyncConnection<Backend = Pg>,
        project: ProjectId,
        targeting: Vec<Option<FlagId>>,
        linked: Vec<Option<FlagId>>,
    ) -> Result<Self, Unexpected> {
        let locked: Vec<i32> = targeting.into_iter().flatten().map(|id| id.0).collect();
        let linked = linked
            .into_iter()
            .flatten()
            .map(|id| id.0)
            .filter(|id| !locked.contains(id))
            .collect();
        let mut flags = flags_by_id(conn, project, linked, false).await?;
        flags.extend(flags_by_id(conn, project, locked.clone(), true).await?);
        Ok(Self { flags, locked })
    }

    /// A flag this write locked, as long as it is live.
    fn locked_live(&self, id: FlagId) -> bool {
        self.locked.contains(&id.0) && self.flags.get(&id.0).is_some_and(|flag| !flag.deleted)
    }
}

/// Executes a plan's targeting steps: soft-delete the flag let go of, then create or change the
/// flag the survey ends up with. Returns that flag and whether the survey owns it.
async fn store_targeting(
    conn: &mut impl AsyncConnection<Backend = Pg>,
    project: ProjectId,
    write: &SurveyWrite,
    planned: &PlannedFlags,
) -> Result<(Option<i32>, bool), DomainError> {
    if let Some(deleted) = write.targeting.delete {
        change_flag(conn, project, deleted, FlagChanges::deletion()).await?;
    }
    let Some(flag) = &write.targeting.flag else {
        return Ok((None, false));
    };
    let id = match flag {
        TargetingFlag::New { flag, created_by } => {
            insert_flag(conn, project, Some(*created_by), flag)
                .await?
                .id
        }
        // Nothing to write or read when nothing changes about a live flag this write locked.
        TargetingFlag::Existing { id, changes, .. }
            if changes.is_empty() && planned.locked_live(*id) =>
        {
            id.0
        }
        TargetingFlag::Existing { id, changes, .. } => {
            change_flag(conn, project, *id, changes.clone())
                .await?
                .ok_or_else(|| {
                    Unexpected::new(format!("targeting flag {} vanished while locked", id.0))
                })?
                .id
        }
    };
    Ok((Some(id), flag.owned()))
}

/// Logs a write's activity entry for the survey.
async fn log_activity(
    conn: &mut impl AsyncConnection<Backend = Pg>,
    project: ProjectId,
    survey: SurveyId,
    activity: &NewActivity,
) -> Result<(), Unexpected> {
    diesel::insert_into(survey_activity::table)
        .values((
            survey_activity::id.eq(Uuid::now_v7()),
            survey_activity::project_id.eq(project.0),
            survey_activity::survey_id.eq(survey.0),
            survey_activity::user_id.eq(activity.user.0),
            survey_activity::activity.eq(activity.activity),
            survey_activity::detail.eq(&activity.detail),
        ))
        .execute(conn)
        .await
        .during("logging a survey's activity")?;
    Ok(())
}

/// Inserts a new survey as planned, with its targeting flag and activity entry, and reads it
/// back.
async fn insert_survey(
    conn: &mut impl AsyncConnection<Backend = Pg>,
    project: ProjectId,
    id: SurveyId,
    creator: UserId,
    write: &SurveyWrite,
    planned: &PlannedFlags,
) -> Result<Survey, DomainError> {
    let (targeting_flag, owned) = store_targeting(conn, project, write, planned).await?;
    diesel::insert_into(surveys::table)
        .values((
            SurveyStateRow::from(&write.state),
            surveys::id.eq(id.0),
            surveys::project_id.eq(project.0),
            surveys::targeting_flag_id.eq(targeting_flag),
            surveys::owns_targeting_flag.eq(owned),
            surveys::created_by_id.eq(creator.0),
        ))
        .execute(conn)
        .await
        .map_err(|error| write_error(error, NAME_CONSTRAINT, "creating a survey"))?;
    if let Some(activity) = &write.activity {
        log_activity(conn, project, id, activity).await?;
    }
    Ok(reload_survey(conn, project, id).await?)
}

/// A survey that was just written, read back inside its transaction.
async fn reload_survey(
    conn: &mut impl AsyncConnection<Backend = Pg>,
    project: ProjectId,
    id: SurveyId,
) -> Result<Survey, Unexpected> {
    load_survey(conn, project, id)
        .await?
        .ok_or_else(|| Unexpected::new(format!("survey {} vanished while being written", id.0)))
}

#[async_trait]
impl SurveyRepository for PgSurveyRepository {
    async fn list(
        &self,
        project: ProjectId,
        filter: &SurveyFilter,
        page_request: PageRequest,
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
        // The page's ids first, from the index alone, then only those rows whole: a deep
        // offset skips index entries, not joined rows.
        let ids = window(
            matching()
                .order((surveys::created_at.desc(), surveys::id.desc()))
                .select(surveys::id),
            page_request,
        );
        Ok(page(count, load_whole(&mut conn, project, ids).await?))
    }

    async fn get(&self, project: ProjectId, id: SurveyId) -> Result<Option<Survey>, Unexpected> {
        let mut conn = self.database.connection().await?;
        load_survey(&mut conn, project, id).await
    }

    async fn create(
        &self,
        project: ProjectId,
        id: SurveyId,
        creator: UserId,
        references: FlagReferences,
        planner: &CreatePlanner<'_>,
    ) -> Result<Survey, DomainError> {
        let mut conn = self.database.connection().await?;
        conn.transaction::<_, TransactionError, _>(async |conn| {
            let planned = PlannedFlags::read(
                conn,
                project,
                vec![references.targeting],
                vec![references.linked],
            )
            .await?;
            let write = planner(&referenced(&planned.flags, references))?;
            Ok(insert_survey(conn, project, id, creator, &write, &planned).await?)
        })
        .await
        .map_err(|TransactionError(error)| error)
    }

    async fn update(
        &self,
        project: ProjectId,
        id: SurveyId,
        references: FlagReferences,
        planner: &UpdatePlanner<'_>,
    ) -> Result<Survey, DomainError> {
        let mut conn = self.database.connection().await?;
        conn.transaction::<_, TransactionError, _>(async |conn| {
            let row = surveys::table
                .filter(surveys::id.eq(id.0))
                .filter(surveys::project_id.eq(project.0))
                .select(SurveyRow::as_select())
                .for_update()
                .first(conn)
                .await
                .optional()
                .during("locking a survey")?
                .ok_or(DomainError::NotFound)?;
            let planned = PlannedFlags::read(
                conn,
                project,
                vec![row.targeting_flag_id.map(FlagId), references.targeting],
                vec![row.linked_flag_id.map(FlagId), references.linked],
            )
            .await?;
            let current = row.into_planned_survey(&planned.flags)?;
            let write = planner(&current, &referenced(&planned.flags, references))?;
            let (targeting_flag, owned) = store_targeting(conn, project, &write, &planned).await?;
            diesel::update(surveys::table.find(id.0))
                .set((
                    SurveyStateRow::from(&write.state),
                    surveys::targeting_flag_id.eq(targeting_flag),
                    surveys::owns_targeting_flag.eq(owned),
                    surveys::updated_at.eq(diesel::dsl::now),
                ))
                .execute(conn)
                .await
                .map_err(|error| write_error(error, NAME_CONSTRAINT, "updating a survey"))?;
            if let Some(activity) = &write.activity {
                log_activity(conn, project, id, activity).await?;
            }
            Ok(reload_survey(conn, project, id).await?)
        })
        .await
        .map_err(|TransactionError(error)| error)
    }

    async fn delete(
        &self,
        project: ProjectId,
        id: SurveyId,
        note: &DeletionNote<'_>,
    ) -> Result<bool, DomainError> {
        let mut conn = self.database.connection().await?;
        conn.transaction::<_, TransactionError, _>(async |conn| {
            let deleted = diesel::delete(
                surveys::table
                    .filter(surveys::id.eq(id.0))
                    .filter(surveys::project_id.eq(project.0)),
            )
            .returning((
                surveys::targeting_flag_id,
                surveys::owns_targeting_flag,
                surveys::name,
            ))
            .get_result::<(Option<i32>, bool, String)>(conn)
            .await
            .optional()
            .during("deleting a survey")?;
            let Some((targeting, owned, name)) = deleted else {
                return Ok(false);
            };
            if let (Some(flag), true) = (targeting, owned) {
                // A flag deleted through the flags API meanwhile is already gone.
                change_flag(conn, project, FlagId(flag), FlagChanges::deletion()).await?;
            }
            log_activity(conn, project, id, &note(&name)).await?;
            Ok(true)
        })
        .await
        .map_err(|TransactionError(error)| error)
    }

    async fn create_copies(
        &self,
        targets: &[CopyTarget],
        creator: UserId,
        name_prefix: &str,
        planner: &CopyPlanner<'_>,
    ) -> Result<Vec<Survey>, DomainError> {
        let mut conn = self.database.connection().await?;
        conn.transaction::<_, TransactionError, _>(async |conn| {
            let mut copies = Vec::with_capacity(targets.len());
            // A copy makes its own flags; it plans against none.
            let none = PlannedFlags::default();
            for target in targets {
                let taken: BTreeSet<String> = surveys::table
                    .filter(surveys::project_id.eq(target.project.0))
                    .filter(surveys::name.like(prefix_pattern(name_prefix)))
                    .select(surveys::name)
                    .load::<String>(conn)
                    .await
                    .during("reading the names a copy could take")?
                    .into_iter()
                    .collect();
                let write = planner(target.project, &taken)?;
                let copy = insert_survey(conn, target.project, target.id, creator, &write, &none);
                copies.push(copy.await?);
            }
            Ok(copies)
        })
        .await
        .map_err(|TransactionError(error)| error)
    }

    async fn activity(
        &self,
        project: ProjectId,
        survey: Option<SurveyId>,
        page_request: PageRequest,
    ) -> Result<ActivityPage, Unexpected> {
        let mut conn = self.database.connection().await?;
        let logged = || {
            let mut query = survey_activity::table
                .filter(survey_activity::project_id.eq(project.0))
                .into_boxed();
            if let Some(survey) = survey {
                query = query.filter(survey_activity::survey_id.eq(survey.0));
            }
            query
        };
        let total = logged()
            .count()
            .get_result::<i64>(&mut conn)
            .await
            .during("counting survey activity")?;
        let rows = window(
            logged()
                .left_join(users::table)
                .order((
                    survey_activity::created_at.desc(),
                    survey_activity::id.desc(),
                ))
                .select((
                    SurveyActivityRow::as_select(),
                    users::first_name.nullable(),
                    users::email.nullable(),
                )),
            page_request,
        )
        .load::<(SurveyActivityRow, Option<String>, Option<String>)>(&mut conn)
        .await
        .during("listing survey activity")?;
        Ok(activity_page(total, rows))
    }
}

//! `SurveyRepository` over the `surveys` and `survey_activity` tables: the reads, and the
//! primitives of a write's transaction. A survey write logs its activity entry in the same
//! statement (`logged`), and every write returns what it wrote.

use std::collections::BTreeSet;

use async_trait::async_trait;
use chrono::{DateTime, NaiveDate, Utc};
use diesel::dsl::{AsSelect, SqlTypeOf};
use diesel::expression::{AppearsOnTable, Expression};
use diesel::prelude::*;
use diesel::query_builder::{AstPass, NoFromClause, Query, QueryFragment, QueryId};
use diesel::sql_types::{Date, Integer, Nullable, Timestamptz};
use diesel_async::{AsyncConnectionCore, AsyncPgConnection, RunQueryDsl};
use domain::activity::{ActivityPage, NewActivity};
use domain::feature_flag::{FeatureFlag, FlagChanges, FlagId, NewFlag};
use domain::ports::{Page, PageRequest};
use domain::survey::{
    DeletedSurvey, FlagLock, OwnedNewFlag, SearchTerm, Survey, SurveyFilter, SurveyId, SurveyLock,
    SurveyRecord, SurveyRepository, SurveyRevision, SurveyState, SurveyStatus, SurveyTransaction,
    writes::too_many_surveys,
};
use domain::tenancy::{ProjectId, UserId};
use domain::{DomainError, Unexpected};
use futures_util::future::try_join;
use uuid::Uuid;

use crate::postgres::activity::{Owner, SURVEY_ACTIVITY};
use crate::postgres::errors::{
    StorageContext, is_check_violation, is_unique_violation, write_error,
};
use crate::postgres::feature_flags::{
    LIVE_KEY_INDEX, change_flag, flag_insert, flags_by_id, insert_flag,
};
use crate::postgres::paging::{page, window};
use crate::postgres::prepared::prepared;
use crate::postgres::rows::{FlagRow, NewSurveyActivityRow, SurveyStateRow};
use crate::postgres::schema::{survey_activity, surveys};
use crate::postgres::survey_search::{by_relevance, exactly_matching, in_tier};
use crate::postgres::text::contains_pattern;
use crate::postgres::transaction::{PgTransaction, logged, with};
use crate::postgres::whole_surveys::{
    RevisionsOf, SurveyIds, load_revised, load_revisions, load_whole, lock_survey, only,
};

type Pg = diesel::pg::Pg;

/// The constraint that keeps survey names unique within a project.
const NAME_CONSTRAINT: &str = "surveys_project_name_key";

/// What the trigger refusing a project's survey past `MAX_PROJECT_SURVEYS` names (migration
/// `2026-11-29-110000_surveys_per_project`).
const PER_PROJECT_BOUND: &str = "surveys_per_project";

/// A survey insert's failure: past the project's bound, a taken name, or else `Unexpected`.
fn insert_error(error: diesel::result::Error, what: &'static str) -> DomainError {
    if is_check_violation(&error, PER_PROJECT_BOUND) {
        return too_many_surveys();
    }
    write_error(error, NAME_CONSTRAINT, what)
}

crate::postgres::over_the_pool! {
    /// Surveys in PostgreSQL, with the flags they link to and are targeted by.
    PgSurveyRepository
}

/// A `LIKE` pattern matching what starts with `prefix`, wildcards in it matched literally.
fn prefix_pattern(prefix: &str) -> String {
    let mut pattern = contains_pattern(prefix);
    pattern.remove(0);
    pattern
}

/// The surveys among `ids`, as a query of ids.
fn among(ids: &[SurveyId]) -> SurveyIds<'static> {
    let ids: Vec<Uuid> = ids.iter().map(|id| id.0).collect();
    surveys::table
        .filter(surveys::id.eq_any(ids))
        .select(surveys::id)
        .into_boxed()
}

/// How many of the project's surveys match `filter`.
async fn count_matching(
    conn: &mut impl AsyncConnectionCore<Backend = Pg>,
    project: ProjectId,
    filter: &SurveyFilter,
) -> Result<i64, Unexpected> {
    matching(project, filter)
        .count()
        .get_result(conn)
        .await
        .during("counting surveys")
}

/// The project's surveys that `filter` keeps.
fn matching(project: ProjectId, filter: &SurveyFilter) -> surveys::BoxedQuery<'static, Pg> {
    let mut query = surveys::table
        .filter(surveys::project_id.eq(project.0))
        .into_boxed();
    if let Some(ids) = &filter.ids {
        let ids: Vec<Uuid> = ids.iter().map(|id| id.0).collect();
        query = query.filter(surveys::id.eq_any(ids));
    }
    if let Some(kind) = filter.survey_type {
        query = query.filter(surveys::survey_type.eq(kind.as_str()));
    }
    if let Some(archived) = filter.archived {
        query = query.filter(surveys::archived.eq(archived));
    }
    if let Some(creator) = filter.created_by {
        query = query.filter(surveys::created_by_id.eq(creator.0));
    }
    query = match filter.status {
        None => query,
        Some(SurveyStatus::Draft) => query.filter(surveys::start_date.is_null()),
        Some(SurveyStatus::Running) => query
            .filter(surveys::start_date.is_not_null())
            .filter(surveys::end_date.is_null()),
        Some(SurveyStatus::Complete) => query.filter(surveys::end_date.is_not_null()),
    };
    if let Some(search) = &filter.search {
        query = query.filter(in_tier(search));
    }
    query
}

/// The ids of the requested page of the matching surveys, newest first (a search's, most
/// relevant first), as a query to read them by: the page's ids come from the index alone, then
/// only those rows are read, so a deep offset skips index entries, not joined rows.
fn page_ids(
    project: ProjectId,
    filter: &SurveyFilter,
    page_request: PageRequest,
) -> SurveyIds<'static> {
    let ids = matching(project, filter).select(surveys::id);
    let ordered = match &filter.search {
        None => ids.order((surveys::created_at.desc(), surveys::id.desc())),
        Some(search) => ids.order(by_relevance(&search.term)),
    };
    window(ordered, page_request)
}

/// One survey of the project, whole.
async fn load_survey(
    conn: &mut impl AsyncConnectionCore<Backend = Pg>,
    project: ProjectId,
    id: SurveyId,
) -> Result<Option<Survey>, Unexpected> {
    Ok(load_whole(conn, project, only(id)).await?.pop())
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
        let count = count_matching(&mut conn, project, filter).await?;
        let ids = page_ids(project, filter, page_request);
        let surveys = match &filter.search {
            None => load_whole(&mut conn, project, ids).await?,
            // Whole reads come newest first: a search's page is read as ids first, in its order.
            Some(_) => {
                let ids: Vec<Uuid> = ids.load(&mut conn).await.during("searching surveys")?;
                let ids: Vec<SurveyId> = ids.into_iter().map(SurveyId).collect();
                let mut surveys = load_whole(&mut conn, project, among(&ids)).await?;
                surveys.sort_by_key(|survey| ids.iter().position(|id| *id == survey.id));
                surveys
            }
        };
        Ok(page(count, surveys))
    }

    async fn due_schedules(
        &self,
        now: DateTime<Utc>,
        limit: u32,
    ) -> Result<Vec<(ProjectId, SurveyId)>, Unexpected> {
        let mut conn = self.database.connection().await?;
        let due = diesel::sql_query(DUE_SCHEDULES)
            .bind::<Timestamptz, _>(now)
            .bind::<Integer, _>(i32::try_from(limit).unwrap_or(i32::MAX))
            .load::<DueSchedule>(&mut conn)
            .await
            .during("finding the surveys whose schedule moves on")?;
        Ok(due
            .into_iter()
            .map(|row| (ProjectId(row.project_id), SurveyId(row.id)))
            .collect())
    }

    async fn due_sampling(
        &self,
        today: NaiveDate,
        limit: u32,
    ) -> Result<Vec<(ProjectId, SurveyId)>, Unexpected> {
        let mut conn = self.database.connection().await?;
        let due = diesel::sql_query(DUE_SAMPLING)
            .bind::<Date, _>(today)
            .bind::<Integer, _>(i32::try_from(limit).unwrap_or(i32::MAX))
            .load::<DueSchedule>(&mut conn)
            .await
            .during("finding the surveys whose response sampling is due")?;
        Ok(due
            .into_iter()
            .map(|row| (ProjectId(row.project_id), SurveyId(row.id)))
            .collect())
    }

    async fn holds_term(
        &self,
        project: ProjectId,
        filter: &SurveyFilter,
        term: &SearchTerm,
    ) -> Result<bool, Unexpected> {
        let filter = SurveyFilter {
            search: None,
            ..filter.clone()
        };
        let mut conn = self.database.connection().await?;
        let holding = matching(project, &filter)
            .filter(exactly_matching(term))
            .select(surveys::id)
            .first::<Uuid>(&mut conn)
            .await
            .optional_during("looking for a survey holding the search term")?;
        Ok(holding.is_some())
    }

    async fn get(&self, project: ProjectId, id: SurveyId) -> Result<Option<Survey>, Unexpected> {
        let mut conn = self.database.connection().await?;
        load_survey(&mut conn, project, id).await
    }

    async fn revisions(
        &self,
        project: ProjectId,
        filter: &SurveyFilter,
        page_request: PageRequest,
    ) -> Result<Page<(SurveyId, SurveyRevision)>, Unexpected> {
        let conn = self.database.connection().await?;
        // The count and the page's revisions are sent together (pipelined): neither waits for
        // the other, so a page costs one round trip.
        let conn: &AsyncPgConnection = &conn;
        let ids = page_ids(project, filter, page_request);
        let search = filter.search.as_ref().map(|search| &search.term);
        let (count, revisions) = try_join(
            count_matching(&mut &*conn, project, filter),
            load_revisions(&mut &*conn, project, RevisionsOf::Page(ids), search),
        )
        .await?;
        Ok(page(count, revisions))
    }

    async fn revision(
        &self,
        project: ProjectId,
        id: SurveyId,
    ) -> Result<Option<SurveyRevision>, Unexpected> {
        let mut conn = self.database.connection().await?;
        let revisions =
            load_revisions(&mut conn, project, RevisionsOf::One(only(id)), None).await?;
        Ok(revisions.into_iter().next().map(|(_, revision)| revision))
    }

    async fn whole(
        &self,
        project: ProjectId,
        ids: &[SurveyId],
    ) -> Result<Vec<(Survey, SurveyRevision)>, Unexpected> {
        let ids = match ids {
            [id] => only(*id),
            _ => among(ids),
        };
        let mut conn = self.database.connection().await?;
        load_revised(&mut conn, project, ids).await
    }

    async fn project_of(&self, id: SurveyId) -> Result<Option<ProjectId>, Unexpected> {
        let mut conn = self.database.connection().await?;
        let project = surveys::table
            .find(id.0)
            .select(surveys::project_id)
            .first::<i32>(&mut conn)
            .await
            .optional_during("finding a survey's project")?;
        Ok(project.map(ProjectId))
    }

    async fn begin(&self) -> Result<Box<dyn SurveyTransaction>, Unexpected> {
        Ok(Box::new(PgTransaction::open(&self.database).await?))
    }

    async fn activity(
        &self,
        project: ProjectId,
        survey: Option<SurveyId>,
        page_request: PageRequest,
    ) -> Result<ActivityPage, Unexpected> {
        let mut conn = self.database.connection().await?;
        let survey = survey.map(|survey| survey.0);
        SURVEY_ACTIVITY
            .page(&mut conn, Owner::Project(project.0), survey, page_request)
            .await
    }
}

/// `SurveyRepository::due_schedules`: `schedule_due` in SQL (arrays count from 1: iteration k
/// begins at `iteration_start_dates[k]`), served by the partial index
/// `surveys_running_schedules`.
const DUE_SCHEDULES: &str = "\
    SELECT project_id, id FROM surveys \
    WHERE start_date IS NOT NULL AND end_date IS NULL AND iteration_frequency_days > 0 \
      AND cardinality(iteration_start_dates) > 0 \
      AND (iteration_start_dates[cardinality(iteration_start_dates)] \
             + make_interval(days => iteration_frequency_days) < $1 \
           OR (coalesce(current_iteration, 0) < cardinality(iteration_start_dates) \
               AND iteration_start_dates[coalesce(current_iteration, 0) + 1] <= $1)) \
    ORDER BY project_id, id \
    LIMIT $2";

/// `SurveyRepository::due_sampling`: `sampling_due` in SQL, served by the partial index
/// `surveys_sampling`.
const DUE_SAMPLING: &str = "\
    SELECT project_id, id FROM surveys \
    WHERE response_sampling_limit > 0 AND response_sampling_interval > 0 \
      AND response_sampling_interval_type IS NOT NULL \
      AND response_sampling_start_date IS NOT NULL AND end_date IS NULL \
      AND (response_sampling_checked_on IS NULL OR response_sampling_checked_on < $1) \
    ORDER BY project_id, id \
    LIMIT $2";

/// A row of [`DUE_SCHEDULES`] or [`DUE_SAMPLING`].
#[derive(QueryableByName)]
struct DueSchedule {
    #[diesel(sql_type = Integer)]
    project_id: i32,
    #[diesel(sql_type = diesel::sql_types::Uuid)]
    id: Uuid,
}

#[async_trait]
impl SurveyTransaction for PgTransaction {
    async fn lock_survey(
        &mut self,
        project: ProjectId,
        id: SurveyId,
        lock: SurveyLock,
    ) -> Result<Option<Survey>, Unexpected> {
        let targeting_flag = lock == SurveyLock::WithTargetingFlag;
        self.read(async |conn| lock_survey(conn, project, id, targeting_flag).await)
            .await
    }

    async fn flags(
        &mut self,
        project: ProjectId,
        ids: &[FlagId],
        lock: FlagLock,
    ) -> Result<Vec<FeatureFlag>, Unexpected> {
        let ids = ids.iter().map(|id| id.0).collect();
        let lock = lock == FlagLock::ForUpdate;
        self.read(async |conn| flags_by_id(conn, project, ids, lock).await)
            .await
    }

    async fn insert_flag(
        &mut self,
        project: ProjectId,
        creator: UserId,
        flag: &NewFlag,
    ) -> Result<FeatureFlag, DomainError> {
        let row = insert_flag(self.connection().await?, project, Some(creator), flag).await?;
        Ok(row.into_flag(None)?)
    }

    async fn change_flag(
        &mut self,
        project: ProjectId,
        id: FlagId,
        changes: &FlagChanges,
    ) -> Result<Option<FeatureFlag>, DomainError> {
        let row = change_flag(self.connection().await?, project, id, changes.clone()).await?;
        Ok(row.map(|row| row.into_flag(None)).transpose()?)
    }

    async fn insert_survey(
        &mut self,
        project: ProjectId,
        id: SurveyId,
        creator: UserId,
        record: SurveyRecord<'_>,
        activity: Option<&NewActivity>,
    ) -> Result<DateTime<Utc>, DomainError> {
        let targeting = TargetingFlagValue::Stored(record.targeting_flag.map(|flag| flag.0));
        let insert = survey_insert(
            project,
            id,
            creator,
            record.state,
            targeting,
            record.owns_targeting_flag,
        );
        let conn = self.connection().await?;
        match activity {
            Some(activity) => {
                logged(log_entry(project, id, activity), insert)
                    .get_result(conn)
                    .await
            }
            None => insert.get_result(conn).await,
        }
        .map_err(|error| insert_error(error, "creating a survey"))
    }

    async fn insert_survey_with_flag(
        &mut self,
        project: ProjectId,
        id: SurveyId,
        creator: UserId,
        state: &SurveyState,
        flag: OwnedNewFlag<'_>,
        activity: Option<&NewActivity>,
    ) -> Result<(DateTime<Utc>, FeatureFlag), DomainError> {
        let mut statement = with(
            "flag",
            flag_insert(project, Some(flag.created_by), flag.flag),
        );
        if let Some(activity) = activity {
            statement = statement.and("logged", log_entry(project, id, activity));
        }
        let survey = survey_insert(
            project,
            id,
            creator,
            state,
            TargetingFlagValue::Inserted,
            true,
        );
        let (created_at, flag) = statement
            .and("survey", survey)
            .then(SurveyWithItsFlag)
            .get_result::<(DateTime<Utc>, FlagRow)>(self.connection().await?)
            .await
            .map_err(|error| {
                if is_unique_violation(&error, LIVE_KEY_INDEX) {
                    return DomainError::Conflict;
                }
                insert_error(error, "creating a survey with its targeting flag")
            })?;
        Ok((created_at, flag.into_flag(None)?))
    }

    async fn update_survey(
        &mut self,
        project: ProjectId,
        id: SurveyId,
        record: SurveyRecord<'_>,
        activity: Option<&NewActivity>,
    ) -> Result<(), DomainError> {
        let update = diesel::update(
            surveys::table
                .filter(surveys::id.eq(id.0))
                .filter(surveys::project_id.eq(project.0)),
        )
        .set((
            SurveyStateRow::from(record.state),
            surveys::targeting_flag_id.eq(record.targeting_flag.map(|flag| flag.0)),
            surveys::owns_targeting_flag.eq(record.owns_targeting_flag),
            surveys::updated_at.eq(diesel::dsl::now),
        ));
        let conn = self.connection().await?;
        let updated = match activity {
            Some(activity) => {
                prepared(logged(log_entry(project, id, activity), update))
                    .execute(conn)
                    .await
            }
            None => prepared(update).execute(conn).await,
        }
        .map_err(|error| write_error(error, NAME_CONSTRAINT, "updating a survey"))?;
        if updated == 0 {
            let error = format!("survey {} vanished while locked", id.0);
            return Err(Unexpected::new(error).into());
        }
        Ok(())
    }

    async fn delete_survey(
        &mut self,
        project: ProjectId,
        id: SurveyId,
    ) -> Result<Option<DeletedSurvey>, Unexpected> {
        let deleted = diesel::delete(
            surveys::table
                .filter(surveys::id.eq(id.0))
                .filter(surveys::project_id.eq(project.0)),
        )
        .returning((
            surveys::name,
            surveys::targeting_flag_id,
            surveys::owns_targeting_flag,
        ))
        .get_result::<(String, Option<i32>, bool)>(self.connection().await?)
        .await
        .optional_during("deleting a survey")?;
        Ok(deleted.map(|(name, targeting, owned)| DeletedSurvey {
            name,
            targeting_flag: targeting.map(FlagId),
            owned_targeting_flag: owned,
        }))
    }

    async fn log_activity(
        &mut self,
        project: ProjectId,
        survey: SurveyId,
        activity: &NewActivity,
    ) -> Result<(), Unexpected> {
        log_entry(project, survey, activity)
            .execute(self.connection().await?)
            .await
            .during("logging a survey's activity")?;
        Ok(())
    }

    async fn names_starting_with(
        &mut self,
        project: ProjectId,
        prefix: &str,
    ) -> Result<BTreeSet<String>, Unexpected> {
        let names = surveys::table
            .filter(surveys::project_id.eq(project.0))
            .filter(surveys::name.like(prefix_pattern(prefix)))
            .select(surveys::name);
        let names = self
            .read(async |conn| {
                let names = names.load::<String>(conn).await;
                names.during("reading the names a copy could take")
            })
            .await?;
        Ok(names.into_iter().collect())
    }
}

/// The `INSERT` of a survey's activity entry, run alone or inside the statement that writes
/// the survey (`logged`).
fn log_entry<'a>(
    project: ProjectId,
    survey: SurveyId,
    activity: &'a NewActivity,
) -> impl QueryFragment<Pg> + QueryId + Send + 'a {
    diesel::insert_into(survey_activity::table)
        .values(NewSurveyActivityRow::new(project, survey, activity))
}

/// The `INSERT` of a new survey, returning when it was created.
fn survey_insert<'a>(
    project: ProjectId,
    id: SurveyId,
    creator: UserId,
    state: &'a SurveyState,
    targeting_flag: TargetingFlagValue,
    owns_targeting_flag: bool,
) -> impl Query<SqlType = Timestamptz> + QueryFragment<Pg> + QueryId + Send + 'a {
    diesel::insert_into(surveys::table)
        .values((
            SurveyStateRow::from(state),
            surveys::id.eq(id.0),
            surveys::project_id.eq(project.0),
            surveys::targeting_flag_id.eq(targeting_flag),
            surveys::owns_targeting_flag.eq(owns_targeting_flag),
            surveys::created_by_id.eq(creator.0),
        ))
        .returning(surveys::created_at)
}

/// A new survey's `targeting_flag_id`: a stored flag's, or that of the flag the same statement
/// inserts as `flag` (`insert_survey_with_flag`).
#[derive(Debug, Clone, Copy)]
enum TargetingFlagValue {
    Stored(Option<i32>),
    Inserted,
}

impl Expression for TargetingFlagValue {
    type SqlType = Nullable<Integer>;
}

impl AppearsOnTable<NoFromClause> for TargetingFlagValue {}

impl QueryFragment<Pg> for TargetingFlagValue {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, Pg>) -> QueryResult<()> {
        match self {
            Self::Stored(id) => out.push_bind_param::<Nullable<Integer>, _>(id),
            Self::Inserted => {
                out.push_sql("(SELECT id FROM flag)");
                Ok(())
            }
        }
    }
}

impl QueryId for TargetingFlagValue {
    type QueryId = ();
    const HAS_STATIC_QUERY_ID: bool = false;
}

/// `SELECT survey.created_at, flag.* FROM survey, flag`: the last part of
/// `insert_survey_with_flag`'s statement, the survey's creation time and its flag as stored
/// (`flag`'s columns are `FlagRow`'s, in its order: its `RETURNING`).
struct SurveyWithItsFlag;

impl QueryFragment<Pg> for SurveyWithItsFlag {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, Pg>) -> QueryResult<()> {
        out.push_sql("SELECT survey.created_at, flag.* FROM survey, flag");
        Ok(())
    }
}

impl Query for SurveyWithItsFlag {
    type SqlType = (Timestamptz, SqlTypeOf<AsSelect<FlagRow, Pg>>);
}

impl QueryId for SurveyWithItsFlag {
    type QueryId = Self;
    const HAS_STATIC_QUERY_ID: bool = true;
}

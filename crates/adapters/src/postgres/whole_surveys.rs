//! Surveys read whole — with their creator and their linked and targeting flags — in one
//! statement, so reading one survey or a page of them is one round trip. A survey shows its flags
//! in summary (PostHog's minimal flag), so the flags' creators are not read. A write may lock the
//! survey it reads, and its targeting flag after it, in that same statement.

use diesel::expression::{AppearsOnTable, Expression, SelectableExpression, ValidGrouping};
use diesel::pg::Pg;
use diesel::prelude::*;
use diesel::query_builder::{AstPass, QueryFragment, QueryId};
use diesel::sql_types;
use diesel_async::{AsyncConnectionCore, RunQueryDsl};
use domain::Unexpected;
use domain::survey::{SearchTerm, Survey, SurveyId, SurveyRevision};
use domain::tenancy::ProjectId;

use crate::postgres::errors::StorageContext;
use crate::postgres::rows::{FlagRow, SurveyRow, UserBasicRow};
use crate::postgres::schema::{feature_flags, surveys, users};
use crate::postgres::survey_search::by_relevance;
use crate::postgres::transaction::for_update_of;

/// Which surveys to read: a query of survey ids (narrowed, ordered and windowed as the caller
/// needs; the outer read keeps its order).
pub(crate) type SurveyIds<'a> = surveys::BoxedQuery<'a, Pg, sql_types::Uuid>;

/// A survey row with what it points at; a flag of another project is not joined.
type Joined = (
    SurveyRow,
    Option<UserBasicRow>,
    Option<FlagRow>,
    Option<FlagRow>,
);

/// A read of whole surveys: the project's surveys among `$ids` (a [`SurveyIds`]), newest first
/// (ties by id, descending), joined with their creator and their flags, selecting the columns a
/// `Survey` is made of (`SurveyRow`, its creator, its two flags) and then `$extra`; a flag of
/// another project is not joined. One join for every read of whole surveys.
macro_rules! joined_surveys {
    ($project:expr, $ids:expr $(, $extra:expr)?) => {{
        let (linked, targeting) = diesel::alias!(
            feature_flags as linked_flags,
            feature_flags as targeting_flags,
        );
        surveys::table
            .left_join(users::table.on(users::id.nullable().eq(surveys::created_by_id)))
            .left_join(
                linked.on(linked
                    .field(feature_flags::id)
                    .nullable()
                    .eq(surveys::linked_flag_id)
                    .and(linked.field(feature_flags::project_id).eq(surveys::project_id))),
            )
            .left_join(
                targeting.on(targeting
                    .field(feature_flags::id)
                    .nullable()
                    .eq(surveys::targeting_flag_id)
                    .and(
                        targeting
                            .field(feature_flags::project_id)
                            .eq(surveys::project_id),
                    )),
            )
            .filter(surveys::project_id.eq($project.0))
            .filter(surveys::id.eq_any($ids))
            .order((surveys::created_at.desc(), surveys::id.desc()))
            .select((
                SurveyRow::as_select(),
                Option::<UserBasicRow>::as_select(),
                linked
                    .fields(<FlagRow as Selectable<Pg>>::construct_selection())
                    .nullable(),
                targeting
                    .fields(<FlagRow as Selectable<Pg>>::construct_selection())
                    .nullable(),
                $($extra)?
            ))
    }};
}

/// The row versions a whole survey is read from — the survey's, its creator's and its two
/// flags' `xmin` (the transaction that wrote the version), in that order, `NULL` where the survey
/// points at none (or at a flag of another project, which is not shown) — as its revision. Every
/// committed change of one of those rows writes a new version with a new `xmin`, and a row points
/// at its creator and flags itself, so any change to what a whole survey shows changes one of the
/// four. (Transaction ids repeat only after four billion transactions; a kept rendering lives
/// minutes.)
///
/// The creator's and flags' versions are read by subqueries, not from the whole read's joins, so
/// a read of revisions alone plans one table: planning the four-table join for every page of a
/// list cost PostgreSQL more than running it (docs/benchmarks.md). The whole read selects the
/// same subqueries, so both reads agree on every revision.
///
/// A fragment of its own rather than `diesel::dsl::sql`: a literal marks its statement as not
/// to be kept prepared, and the read would be planned on every execution.
#[derive(Debug, Clone, Copy)]
struct RevisionColumns;

impl Expression for RevisionColumns {
    type SqlType = (
        sql_types::BigInt,
        sql_types::Nullable<sql_types::BigInt>,
        sql_types::Nullable<sql_types::BigInt>,
        sql_types::Nullable<sql_types::BigInt>,
    );
}

impl QueryFragment<Pg> for RevisionColumns {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, Pg>) -> QueryResult<()> {
        out.push_sql(
            "surveys.xmin::text::int8, \
             (SELECT creator.xmin::text::int8 FROM users AS creator \
              WHERE creator.id = surveys.created_by_id), \
             (SELECT flag.xmin::text::int8 FROM feature_flags AS flag \
              WHERE flag.id = surveys.linked_flag_id AND flag.project_id = surveys.project_id), \
             (SELECT flag.xmin::text::int8 FROM feature_flags AS flag \
              WHERE flag.id = surveys.targeting_flag_id AND flag.project_id = surveys.project_id)",
        );
        Ok(())
    }
}

impl QueryId for RevisionColumns {
    type QueryId = Self;
    const HAS_STATIC_QUERY_ID: bool = true;
}

impl<QS> SelectableExpression<QS> for RevisionColumns {}

impl<QS> AppearsOnTable<QS> for RevisionColumns {}

impl ValidGrouping<()> for RevisionColumns {
    type IsAggregate = diesel::expression::is_aggregate::Never;
}

/// The four transaction ids of [`RevisionColumns`].
type RevisionRow = (i64, Option<i64>, Option<i64>, Option<i64>);

fn revision((survey, creator, linked, targeting): RevisionRow) -> SurveyRevision {
    let xid = |id: Option<i64>| {
        id.and_then(|id| u32::try_from(id).ok())
            .map_or(0, u128::from)
    };
    SurveyRevision(
        xid(Some(survey)) << 96 | xid(creator) << 64 | xid(linked) << 32 | xid(targeting),
    )
}

/// One survey, as a query of ids. Not `= ANY` of an array of one id: PostgreSQL plans that for
/// an array of unknown length, of several rows, finds that plan dearer than one for the array it
/// is given, and so plans the statement again on every execution, which for one survey costs
/// more than reading it.
pub(crate) fn only(id: SurveyId) -> SurveyIds<'static> {
    surveys::table
        .filter(surveys::id.eq(id.0))
        .select(surveys::id)
        .into_boxed()
}

/// Which surveys a read of revisions is for, each named the way PostgreSQL plans cheapest.
pub(crate) enum RevisionsOf<'a> {
    /// One survey (a query of its id): `id = ANY (<ids>)`, which PostgreSQL keeps one plan for.
    One(SurveyIds<'a>),
    /// A page of a list (a query of its ids, windowed): `id = ANY (ARRAY(<ids>))`. The window's
    /// `LIMIT` and `OFFSET` are parameters, so the plan PostgreSQL could keep is costed for a tenth
    /// of the project's surveys, dearer than one for the page's own window, and every page is
    /// planned afresh. Taken as an array, the ids are planned apart from the read, which then
    /// plans one table, not a join with the page's query.
    Page(SurveyIds<'a>),
}

/// The revisions of the project's surveys named by `ids`, newest first (ties by id,
/// descending), as whole reads order them; for a `search`'s page, most relevant first, as the
/// page is ordered.
pub(crate) async fn load_revisions(
    conn: &mut impl AsyncConnectionCore<Backend = Pg>,
    project: ProjectId,
    ids: RevisionsOf<'_>,
    search: Option<&SearchTerm>,
) -> Result<Vec<(SurveyId, SurveyRevision)>, Unexpected> {
    let query = surveys::table
        .filter(surveys::project_id.eq(project.0))
        .select((surveys::id, RevisionColumns))
        .into_boxed();
    let query = match search {
        None => query.order((surveys::created_at.desc(), surveys::id.desc())),
        Some(term) => query.order(by_relevance(term)),
    };
    let query = match ids {
        RevisionsOf::One(ids) => query.filter(surveys::id.eq_any(ids)),
        RevisionsOf::Page(ids) => query.filter(surveys::id.eq_any(diesel::dsl::array(ids))),
    };
    let rows: Vec<(uuid::Uuid, RevisionRow)> = query
        .load(conn)
        .await
        .during("reading surveys' revisions")?;
    Ok(rows
        .into_iter()
        .map(|(id, row)| (SurveyId(id), revision(row)))
        .collect())
}

/// [`load_whole`], each survey with its revision, read in the same statement.
pub(crate) async fn load_revised(
    conn: &mut impl AsyncConnectionCore<Backend = Pg>,
    project: ProjectId,
    ids: SurveyIds<'_>,
) -> Result<Vec<(Survey, SurveyRevision)>, Unexpected> {
    let query = joined_surveys!(project, ids, RevisionColumns);
    type Revised = (
        SurveyRow,
        Option<UserBasicRow>,
        Option<FlagRow>,
        Option<FlagRow>,
        RevisionRow,
    );
    let rows: Vec<Revised> = query
        .load(conn)
        .await
        .during("loading surveys with their creators, flags and revisions")?;
    rows.into_iter()
        .map(|(survey, creator, linked, targeting, row)| {
            Ok((
                into_survey((survey, creator, linked, targeting))?,
                revision(row),
            ))
        })
        .collect()
}

/// The project's surveys among `ids`, newest first (ties by id, descending).
pub(crate) async fn load_whole(
    conn: &mut impl AsyncConnectionCore<Backend = Pg>,
    project: ProjectId,
    ids: SurveyIds<'_>,
) -> Result<Vec<Survey>, Unexpected> {
    let rows = load_joined(conn, project, ids, Locking::Nothing).await?;
    rows.into_iter().map(into_survey).collect()
}

/// The project's survey, locked; with `targeting_flag`, its targeting flag is locked after it
/// (the order every writer locks them in) in the same statement, and shown as locked. A flag
/// that a write committed while this statement waited for the survey is invisible to the
/// statement (it reads what was committed when it began), so then the read is made again: the
/// survey is locked by now, and nothing can point it at another flag meanwhile.
pub(crate) async fn lock_survey(
    conn: &mut impl AsyncConnectionCore<Backend = Pg>,
    project: ProjectId,
    id: SurveyId,
    targeting_flag: bool,
) -> Result<Option<Survey>, Unexpected> {
    let locking = if targeting_flag {
        Locking::SurveyThenTargetingFlag(id)
    } else {
        Locking::Survey
    };
    let mut row = lock_once(conn, project, id, locking).await?;
    if row.as_ref().is_some_and(misses_a_flag) {
        row = lock_once(conn, project, id, locking).await?;
    }
    row.map(into_survey).transpose()
}

async fn lock_once(
    conn: &mut impl AsyncConnectionCore<Backend = Pg>,
    project: ProjectId,
    id: SurveyId,
    locking: Locking,
) -> Result<Option<Joined>, Unexpected> {
    Ok(load_joined(conn, project, only(id), locking).await?.pop())
}

/// Whether the survey points at a flag the read did not find.
fn misses_a_flag((survey, _, linked, targeting): &Joined) -> bool {
    (survey.targeting_flag_id.is_some() && targeting.is_none())
        || (survey.linked_flag_id.is_some() && linked.is_none())
}

/// What a read of whole surveys locks.
#[derive(Clone, Copy)]
enum Locking {
    Nothing,
    /// The survey read (see [`for_update_of`]).
    Survey,
    /// One survey, then its targeting flag ([`SurveyThenTargetingFlag`]).
    SurveyThenTargetingFlag(SurveyId),
}

async fn load_joined(
    conn: &mut impl AsyncConnectionCore<Backend = Pg>,
    project: ProjectId,
    ids: SurveyIds<'_>,
    locking: Locking,
) -> Result<Vec<Joined>, Unexpected> {
    let query = joined_surveys!(project, ids);
    match locking {
        Locking::Survey => for_update_of(query, "surveys").load::<Joined>(conn).await,
        Locking::Nothing => query.load::<Joined>(conn).await,
        Locking::SurveyThenTargetingFlag(survey) => {
            let locked = SurveyThenTargetingFlag {
                project: project.0,
                survey: survey.0,
                read: query,
            };
            locked.load::<Joined>(conn).await
        }
    }
    .during("loading surveys with their creators and flags")
}

/// `WITH … <read>`: the read of whole surveys, run over common table expressions named like the
/// tables it reads, which stand in for them: `surveys` is the one survey, locked; `feature_flags`
/// is its targeting flag, locked after the survey and so read as locked, and its linked flag,
/// read. (Inside its own definition, a `WITH` name still means the table.) Locking the flag in
/// the read's own `FOR UPDATE` would lock it before the survey, the reverse of the order a
/// survey's deletion locks them in, and the flag of an outer join cannot be locked there.
struct SurveyThenTargetingFlag<Q> {
    project: i32,
    survey: uuid::Uuid,
    read: Q,
}

impl<Q: QueryFragment<Pg>> QueryFragment<Pg> for SurveyThenTargetingFlag<Q> {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, Pg>) -> QueryResult<()> {
        out.push_sql("WITH surveys AS MATERIALIZED (SELECT * FROM surveys WHERE id = ");
        out.push_bind_param::<sql_types::Uuid, _>(&self.survey)?;
        out.push_sql(" AND project_id = ");
        out.push_bind_param::<sql_types::Integer, _>(&self.project)?;
        out.push_sql(
            " FOR UPDATE), \
             locked_targeting_flag AS MATERIALIZED (\
               SELECT flag.* FROM feature_flags AS flag JOIN surveys AS survey \
               ON flag.id = survey.targeting_flag_id AND flag.project_id = survey.project_id \
               FOR UPDATE OF flag), \
             feature_flags AS (\
               SELECT * FROM locked_targeting_flag UNION ALL \
               SELECT flag.* FROM feature_flags AS flag JOIN surveys AS survey \
               ON flag.id = survey.linked_flag_id \
               WHERE NOT EXISTS (SELECT FROM locked_targeting_flag AS locked \
                                 WHERE locked.id = flag.id)) ",
        );
        self.read.walk_ast(out.reborrow())
    }
}

crate::postgres::prepared::query_like!(SurveyThenTargetingFlag<Q>);

fn into_survey((row, creator, linked, targeting): Joined) -> Result<Survey, Unexpected> {
    let linked = linked.map(|flag| flag.into_flag(None)).transpose()?;
    let targeting = targeting.map(|flag| flag.into_flag(None)).transpose()?;
    row.into_whole_survey(creator.map(Into::into), linked, targeting)
}

//! Surveys read whole — with their creator and their linked and targeting flags — in one
//! statement, so reading one survey or a page of them is one round trip. A survey shows its flags
//! in summary (PostHog's minimal flag), so the flags' creators are not read.

use diesel::prelude::*;
use diesel::sql_types;
use diesel_async::{AsyncConnection, RunQueryDsl};
use domain::Unexpected;
use domain::survey::Survey;
use domain::tenancy::ProjectId;

use crate::postgres::errors::StorageContext;
use crate::postgres::rows::{FlagRow, SurveyRow, UserBasicRow};
use crate::postgres::schema::{feature_flags, surveys, users};
use crate::postgres::transaction::{Lock, for_update_of};

type Pg = diesel::pg::Pg;

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

/// The project's surveys among `ids`, newest first (ties by id, descending).
pub(crate) async fn load_whole(
    conn: &mut impl AsyncConnection<Backend = Pg>,
    project: ProjectId,
    ids: SurveyIds<'_>,
    lock: Lock,
) -> Result<Vec<Survey>, Unexpected> {
    let (linked, targeting) = diesel::alias!(
        feature_flags as linked_flags,
        feature_flags as targeting_flags,
    );
    let query = surveys::table
        .left_join(users::table.on(users::id.nullable().eq(surveys::created_by_id)))
        .left_join(
            linked.on(linked
                .field(feature_flags::id)
                .nullable()
                .eq(surveys::linked_flag_id)
                .and(
                    linked
                        .field(feature_flags::project_id)
                        .eq(surveys::project_id),
                )),
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
        .filter(surveys::project_id.eq(project.0))
        .filter(surveys::id.eq_any(ids))
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
        ));
    let rows = match lock {
        Lock::ForUpdate => for_update_of(query, "surveys").load::<Joined>(conn).await,
        Lock::None => query.load::<Joined>(conn).await,
    }
    .during("loading surveys with their creators and flags")?;
    rows.into_iter().map(into_survey).collect()
}

fn into_survey((row, creator, linked, targeting): Joined) -> Result<Survey, Unexpected> {
    let linked = linked.map(|flag| flag.into_flag(None)).transpose()?;
    let targeting = targeting.map(|flag| flag.into_flag(None)).transpose()?;
    row.into_whole_survey(creator.map(Into::into), linked, targeting)
}

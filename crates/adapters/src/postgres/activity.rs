//! The one listing of every activity log table (`plugin_activity`, `survey_activity`,
//! `webhook_activity`): an owner's entries (an organization's, a project's), or one item's,
//! newest first (ties by id), each with its user's name and email while the user exists, and
//! an `item_id` of `""` when about no item (a project's survey settings); counted, then
//! windowed, as every list is.

use diesel::QueryableByName;
use diesel::pg::Pg;
use diesel::query_builder::{BoxedSqlQuery, SqlQuery};
use diesel::sql_types::{Int4, Int8, Uuid as SqlUuid};
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use domain::Unexpected;
use domain::activity::ActivityPage;
use domain::ports::PageRequest;
use uuid::Uuid;

use crate::postgres::errors::StorageContext;
use crate::postgres::rows::ActivityEntryRow;

/// An activity log table, as the listing reads it.
pub(crate) struct ActivityLog {
    table: &'static str,
    /// The column of the tenant whose log it is.
    owner: &'static str,
    /// The column of the item an entry is about.
    item: &'static str,
    /// The scope of every entry; `None`: each row has its own (a `scope` column).
    scope: Option<&'static str>,
}

pub(crate) const PLUGIN_ACTIVITY: ActivityLog = ActivityLog {
    table: "plugin_activity",
    owner: "organization_id",
    item: "plugin_id",
    scope: None,
};

pub(crate) const SURVEY_ACTIVITY: ActivityLog = ActivityLog {
    table: "survey_activity",
    owner: "project_id",
    item: "survey_id",
    scope: Some(domain::survey::activity::SCOPE),
};

pub(crate) const WEBHOOK_ACTIVITY: ActivityLog = ActivityLog {
    table: "webhook_activity",
    owner: "project_id",
    item: "webhook_id",
    scope: Some(domain::webhook::ACTIVITY_SCOPE),
};

/// Whose log: an organization (plugins) or a project (surveys, webhooks).
#[derive(Clone, Copy)]
pub(crate) enum Owner {
    Organization(Uuid),
    Project(i32),
}

#[derive(QueryableByName)]
struct Total {
    #[diesel(sql_type = Int8)]
    total: i64,
}

impl ActivityLog {
    /// A page of `owner`'s log, or of the entries about `item` alone.
    pub(crate) async fn page(
        &self,
        conn: &mut AsyncPgConnection,
        owner: Owner,
        item: Option<Uuid>,
        page: PageRequest,
    ) -> Result<ActivityPage, Unexpected> {
        let ActivityLog {
            table,
            owner: owner_column,
            item: item_column,
            scope,
        } = self;
        let filter = match item {
            Some(_) => format!("a.{owner_column} = $1 AND a.{item_column} = $2"),
            None => format!("a.{owner_column} = $1"),
        };
        let Total { total } = bound(
            format!("SELECT count(*) AS total FROM {table} a WHERE {filter}"),
            owner,
            item,
        )
        .get_result(conn)
        .await
        .during("counting activity")?;
        let own_scope = if scope.is_some() { "NULL" } else { "a.scope" };
        let limit = if item.is_some() { "$3" } else { "$2" };
        let offset = if item.is_some() { "$4" } else { "$3" };
        let rows: Vec<ActivityEntryRow> = bound(
            format!(
                "SELECT a.id, coalesce(a.{item_column}::text, '') AS item_id, {own_scope} AS scope, \
                 a.activity, a.detail, a.created_at, u.first_name, u.email \
                 FROM {table} a LEFT JOIN users u ON u.id = a.user_id WHERE {filter} \
                 ORDER BY a.created_at DESC, a.id DESC LIMIT {limit} OFFSET {offset}"
            ),
            owner,
            item,
        )
        .bind::<Int8, _>(i64::from(page.limit))
        // Offsets past i64 are past every list: the window is empty.
        .bind::<Int8, _>(i64::try_from(page.offset).unwrap_or(i64::MAX))
        .load(conn)
        .await
        .during("listing activity")?;
        let scope = scope.unwrap_or_default();
        Ok(ActivityPage {
            entries: rows.into_iter().map(|row| row.into_entry(scope)).collect(),
            total: total.unsigned_abs(),
        })
    }
}

/// `sql` with the owner bound to `$1` and the item, when there is one, to `$2`.
fn bound(sql: String, owner: Owner, item: Option<Uuid>) -> BoxedSqlQuery<'static, Pg, SqlQuery> {
    let query = diesel::sql_query(sql).into_boxed();
    let query = match owner {
        Owner::Organization(id) => query.bind::<SqlUuid, _>(id),
        Owner::Project(id) => query.bind::<Int4, _>(id),
    };
    match item {
        Some(item) => query.bind::<SqlUuid, _>(item),
        None => query,
    }
}

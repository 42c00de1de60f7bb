//! Wire shapes shared by several resources: the creator of an object, a flag summary, and a
//! page of an activity log.

use actix_web::HttpRequest;
use actix_web::web::Json;
use chrono::{DateTime, Utc};
use domain::activity::{ActivityEntry, ActivityPage};
use domain::feature_flag::{FeatureFlag, FlagFilters};
use domain::tenancy::UserBasic;
use serde::Serialize;
use serde_json::{Value, json};
use utoipa::ToSchema;
use uuid::Uuid;

use crate::contract::flag_filter_shapes::FlagFiltersShape;
use crate::extract::{NumberedPage, PageNumber};

/// PostHog's `UserBasicSerializer` fields.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = UserBasic)]
pub(crate) struct UserBasicResponse {
    id: i32,
    uuid: Uuid,
    distinct_id: String,
    first_name: String,
    last_name: String,
    email: String,
    is_email_verified: bool,
}

impl From<UserBasic> for UserBasicResponse {
    fn from(user: UserBasic) -> Self {
        Self {
            id: user.id.0,
            uuid: user.uuid,
            distinct_id: user.distinct_id,
            first_name: user.first_name,
            last_name: user.last_name,
            email: user.email,
            is_email_verified: user.is_email_verified,
        }
    }
}

/// A flag as embedded in a survey (PostHog's `MinimalFeatureFlagSerializer`).
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct FlagSummary {
    id: i32,
    team_id: i32,
    name: String,
    key: String,
    #[schema(value_type = FlagFiltersShape)]
    filters: FlagFilters,
    deleted: bool,
    active: bool,
    ensure_experience_continuity: bool,
}

impl From<FeatureFlag> for FlagSummary {
    fn from(flag: FeatureFlag) -> Self {
        Self {
            id: flag.id.0,
            team_id: flag.project_id.0,
            name: flag.name,
            key: flag.key,
            filters: flag.filters,
            deleted: flag.deleted,
            active: flag.active,
            ensure_experience_continuity: flag.ensure_experience_continuity,
        }
    }
}

/// A full flag, as `/feature_flags/` returns it.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = FeatureFlag)]
pub(crate) struct FlagResponse {
    #[serde(flatten)]
    summary: FlagSummary,
    /// Its payload is fetched as configuration (`…/remote_config`); it is not evaluated.
    is_remote_configuration: bool,
    created_at: DateTime<Utc>,
    created_by: Option<UserBasicResponse>,
}

impl From<FeatureFlag> for FlagResponse {
    fn from(mut flag: FeatureFlag) -> Self {
        let created_by = flag.created_by.take().map(Into::into);
        let created_at = flag.created_at;
        Self {
            is_remote_configuration: flag.is_remote_configuration,
            summary: flag.into(),
            created_at,
            created_by,
        }
    }
}

/// One activity entry as PostHog's activity log shows it, whatever the resource.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = ActivityEntry)]
pub(crate) struct ActivityResponse {
    id: Uuid,
    /// `{"first_name","email"}` of who acted, `null` when unknown.
    #[schema(value_type = Option<ActivityUser>)]
    user: Value,
    activity: String,
    scope: String,
    item_id: String,
    /// `{"name","changes","trigger","type","short_id",…}`.
    #[schema(value_type = Object)]
    detail: Value,
    created_at: DateTime<Utc>,
}

impl ActivityResponse {
    /// A page of a log as every `/activity/` endpoint answers it: newest first, paged with
    /// `page` and `limit`, `{"results","next","previous","total_count"}`.
    pub(crate) fn page(
        request: &HttpRequest,
        numbered: PageNumber,
        page: ActivityPage,
    ) -> Json<NumberedPage<Self>> {
        Json(NumberedPage::new(
            request,
            numbered,
            page.entries.into_iter().map(Into::into).collect(),
            page.total,
        ))
    }
}

/// Who acted, as an activity entry names them (schema only: the entry builds it as JSON).
#[derive(ToSchema)]
#[expect(
    dead_code,
    reason = "describes a shape for the OpenAPI document; never built"
)]
pub(crate) struct ActivityUser {
    first_name: String,
    email: String,
}

impl From<ActivityEntry> for ActivityResponse {
    fn from(entry: ActivityEntry) -> Self {
        // PostHog's `Detail` always has these keys; what a resource does not record is null.
        let mut detail =
            json!({"name": null, "changes": null, "trigger": null, "type": null, "short_id": null});
        if let (Value::Object(shown), Value::Object(stored)) = (&mut detail, entry.detail) {
            shown.extend(stored);
        }
        Self {
            id: entry.id,
            user: entry.user.map_or(
                Value::Null,
                |(first_name, email)| json!({"first_name": first_name, "email": email}),
            ),
            activity: entry.activity,
            scope: entry.scope,
            item_id: entry.item_id,
            detail,
            created_at: entry.created_at,
        }
    }
}

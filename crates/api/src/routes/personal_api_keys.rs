//! `/api/personal_api_keys/`: a key reads itself (agents ask which scopes they hold before
//! offering tools). As in PostHog, a personal key may do nothing else here; keys are made with
//! `burrow admin create-key`.

use actix_web::HttpRequest;
use actix_web::web::Json;
use chrono::{DateTime, Utc};
use domain::api_key::ApiKey;
use serde::Serialize;
use utoipa::ToSchema;
use uuid::Uuid;

use crate::error::ApiError;
use crate::extract::KeyHolder;

const NOT_FOR_PERSONAL_KEYS: &str = "This action does not support Personal API Key access";

/// PostHog's redacted key: never the value itself.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = PersonalApiKey)]
pub(crate) struct PersonalApiKeyResponse {
    id: Uuid,
    label: String,
    value: Option<String>,
    mask_value: String,
    created_at: DateTime<Utc>,
    last_used_at: Option<DateTime<Utc>>,
    user_id: i32,
    scopes: Vec<String>,
    scoped_teams: Vec<i32>,
    scoped_organizations: Vec<Uuid>,
    last_rolled_at: Option<DateTime<Utc>>,
}

impl From<ApiKey> for PersonalApiKeyResponse {
    fn from(key: ApiKey) -> Self {
        Self {
            id: key.id,
            label: key.label,
            value: None,
            mask_value: key.mask,
            created_at: key.created_at,
            last_used_at: key.last_used_at,
            user_id: key.user_id.0,
            // As granted: in Burrow an empty list grants nothing, so it is not shown as `*`.
            scopes: key.scopes.as_slice().to_vec(),
            scoped_teams: key
                .scoped_teams
                .unwrap_or_default()
                .into_iter()
                .map(|team| team.0)
                .collect(),
            scoped_organizations: key
                .scoped_organizations
                .unwrap_or_default()
                .into_iter()
                .map(|organization| organization.0)
                .collect(),
            last_rolled_at: None,
        }
    }
}

/// `@current`, or the calling key's own id.
pub(crate) async fn retrieve(
    request: HttpRequest,
    KeyHolder(principal): KeyHolder,
) -> Result<Json<PersonalApiKeyResponse>, ApiError> {
    let own = match request.match_info().get("key_id") {
        Some("@current") => true,
        Some(raw) => Uuid::parse_str(raw).is_ok_and(|id| id == principal.key.id),
        None => false,
    };
    if !own {
        return Err(ApiError::permission_denied(NOT_FOR_PERSONAL_KEYS));
    }
    Ok(Json(principal.key.into()))
}

/// Listing, creating, changing and deleting keys: never with a personal key.
pub(crate) async fn refused(KeyHolder(_): KeyHolder) -> Result<Json<()>, ApiError> {
    Err(ApiError::permission_denied(NOT_FOR_PERSONAL_KEYS))
}

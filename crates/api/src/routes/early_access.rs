//! `/api/projects/{project_id}/early_access_feature/`: features persons may opt into, each with
//! its flag, as PostHog's `EarlyAccessFeatureSerializer` shows them.

use actix_web::web::{self, Json};
use actix_web::{HttpRequest, HttpResponse};
use chrono::{DateTime, Utc};
use domain::ValidationError;
use domain::early_access::{
    EarlyAccessChanges, EarlyAccessFeature, EarlyAccessId, EarlyAccessRequest, EarlyAccessService,
    Stage,
};
use domain::feature_flag::{FeatureFlagService, FlagId};
use domain::patch::Patch;
use domain::tenancy::{ProjectId, UserBasic};
use serde::Serialize;
use serde_json::{Map, Value};
use utoipa::ToSchema;
use uuid::Uuid;

use crate::dto::FlagSummary;
use crate::error::ApiError;
use crate::extract::{
    EarlyAccessFeatures, JsonObject, Paginated, Pagination, ProjectCaller, path_id,
};
use crate::fields::{Fields, non_null, not_a_choice};

/// Longest name, as PostHog's column.
const MAX_NAME_CHARS: usize = 200;
/// Longest documentation URL, as PostHog's column.
const MAX_URL_CHARS: usize = 800;

#[derive(Debug, Serialize, ToSchema)]
#[schema(as = EarlyAccessFeature)]
pub(crate) struct EarlyAccessResponse {
    id: Uuid,
    /// The feature's flag (PostHog's `MinimalFeatureFlagSerializer`); `null` once deleted.
    feature_flag: Option<FlagSummary>,
    name: String,
    description: String,
    /// `draft`, `concept`, `alpha`, `beta`, `general-availability` or `archived`.
    stage: &'static str,
    documentation_url: String,
    created_at: DateTime<Utc>,
}

/// A feature to create (`name` and `stage` required; `feature_flag_id` to use an existing
/// boolean flag) or change.
#[derive(ToSchema)]
pub(crate) struct EarlyAccessWrite {
    #[schema(max_length = 200)]
    name: Option<String>,
    description: Option<String>,
    /// `draft`, `concept`, `alpha`, `beta`, `general-availability` or `archived`.
    #[schema(value_type = Option<String>)]
    stage: Option<Stage>,
    #[schema(max_length = 800)]
    documentation_url: Option<String>,
    /// Create only.
    #[schema(value_type = Option<i32>)]
    feature_flag_id: Option<FlagId>,
}

async fn shown(
    flags: &FeatureFlagService,
    project: ProjectId,
    feature: EarlyAccessFeature,
) -> Result<EarlyAccessResponse, ApiError> {
    let flag = match flags.get(project, feature.flag_id).await {
        Ok(flag) => Some(flag.into()),
        Err(domain::DomainError::NotFound) => None,
        Err(other) => return Err(other.into()),
    };
    Ok(EarlyAccessResponse {
        id: feature.id.0,
        feature_flag: flag,
        name: feature.name,
        description: feature.description,
        stage: feature.stage.as_str(),
        documentation_url: feature.documentation_url,
        created_at: feature.created_at,
    })
}

/// Newest first.
pub(crate) async fn list(
    request: HttpRequest,
    features: web::Data<EarlyAccessService>,
    flags: web::Data<FeatureFlagService>,
    ProjectCaller(access, _): ProjectCaller<EarlyAccessFeatures>,
    pagination: Pagination,
) -> Result<Json<Paginated<EarlyAccessResponse>>, ApiError> {
    let project = access.project.id;
    let page = features.list(project, pagination.page_request()).await?;
    let mut shown_items = Vec::with_capacity(page.items.len());
    for feature in page.items {
        shown_items.push(shown(&flags, project, feature).await?);
    }
    let page = domain::ports::Page {
        count: page.count,
        items: shown_items,
    };
    Ok(Json(Paginated::new(&request, pagination, page)))
}

pub(crate) async fn create(
    features: web::Data<EarlyAccessService>,
    flags: web::Data<FeatureFlagService>,
    ProjectCaller(access, _): ProjectCaller<EarlyAccessFeatures>,
    JsonObject(body): JsonObject,
) -> Result<HttpResponse, ApiError> {
    let project = access.project.id;
    let feature = features
        .create(
            project,
            &UserBasic::from(&access.principal.user),
            new_feature(&body)?,
        )
        .await?;
    Ok(HttpResponse::Created().json(shown(&flags, project, feature).await?))
}

pub(crate) async fn retrieve(
    request: HttpRequest,
    features: web::Data<EarlyAccessService>,
    flags: web::Data<FeatureFlagService>,
    ProjectCaller(access, _): ProjectCaller<EarlyAccessFeatures>,
) -> Result<Json<EarlyAccessResponse>, ApiError> {
    let project = access.project.id;
    let feature = features
        .get(project, path_id::<EarlyAccessId>(&request)?)
        .await?;
    Ok(Json(shown(&flags, project, feature).await?))
}

pub(crate) async fn update(
    request: HttpRequest,
    features: web::Data<EarlyAccessService>,
    flags: web::Data<FeatureFlagService>,
    ProjectCaller(access, _): ProjectCaller<EarlyAccessFeatures>,
    JsonObject(body): JsonObject,
) -> Result<Json<EarlyAccessResponse>, ApiError> {
    let project = access.project.id;
    let id = path_id::<EarlyAccessId>(&request)?;
    let feature = features.update(project, id, changes(&body)?).await?;
    Ok(Json(shown(&flags, project, feature).await?))
}

/// Deletes the feature (PostHog deletes it for good); its flag stays, without enrollment.
pub(crate) async fn delete(
    request: HttpRequest,
    features: web::Data<EarlyAccessService>,
    ProjectCaller(access, _): ProjectCaller<EarlyAccessFeatures>,
) -> Result<HttpResponse, ApiError> {
    features
        .delete(access.project.id, path_id::<EarlyAccessId>(&request)?)
        .await?;
    Ok(HttpResponse::NoContent().finish())
}

fn stage(fields: &Fields<'_>) -> Result<Patch<Stage>, ValidationError> {
    Ok(match fields.string("stage")? {
        Patch::Value(text) => Patch::Value(
            Stage::parse(&text).ok_or_else(|| not_a_choice("stage", &Value::String(text)))?,
        ),
        Patch::Null => Patch::Null,
        Patch::Absent => Patch::Absent,
    })
}

/// `documentation_url`: blank, or an http(s) URL of at most 800 characters.
fn documentation_url(fields: &Fields<'_>) -> Result<Option<String>, ValidationError> {
    let url = non_null(
        fields.bounded_string("documentation_url", MAX_URL_CHARS)?,
        "documentation_url",
    )?;
    if let Some(url) = &url
        && !url.is_empty()
        && !(url.starts_with("https://") || url.starts_with("http://"))
    {
        return Err(ValidationError::field(
            "documentation_url",
            domain::error::ValidationCode::Invalid,
            "Enter a valid URL.",
        ));
    }
    Ok(url)
}

impl EarlyAccessWrite {
    /// Reads a body; no field may be `null`, and `feature_flag_id` is read on create only.
    fn read(body: &Map<String, Value>, create: bool) -> Result<Self, ValidationError> {
        let fields = Fields(body);
        let name = non_null(fields.bounded_string("name", MAX_NAME_CHARS)?, "name")?;
        if name.as_ref().is_some_and(|name| name.trim().is_empty()) {
            return Err(ValidationError::blank("name"));
        }
        let description = non_null(fields.string("description")?, "description")?;
        let stage = non_null(stage(&fields)?, "stage")?;
        let feature_flag_id = if create {
            non_null(fields.integer("feature_flag_id")?, "feature_flag_id")?
                .map(|id| i32::try_from(id).map(FlagId))
                .transpose()
                .map_err(|_| {
                    ValidationError::invalid_input("Feature Flag with this ID does not exist")
                })?
        } else {
            None
        };
        Ok(Self {
            name,
            description,
            stage,
            documentation_url: documentation_url(&fields)?,
            feature_flag_id,
        })
    }
}

fn new_feature(body: &Map<String, Value>) -> Result<EarlyAccessRequest, ValidationError> {
    let write = EarlyAccessWrite::read(body, true)?;
    Ok(EarlyAccessRequest {
        name: write
            .name
            .ok_or_else(|| ValidationError::required("name"))?,
        description: write.description.unwrap_or_default(),
        stage: write
            .stage
            .ok_or_else(|| ValidationError::required("stage"))?,
        documentation_url: write.documentation_url.unwrap_or_default(),
        flag_id: write.feature_flag_id,
    })
}

fn changes(body: &Map<String, Value>) -> Result<EarlyAccessChanges, ValidationError> {
    let write = EarlyAccessWrite::read(body, false)?;
    Ok(EarlyAccessChanges {
        name: write.name,
        description: write.description,
        stage: write.stage,
        documentation_url: write.documentation_url,
    })
}

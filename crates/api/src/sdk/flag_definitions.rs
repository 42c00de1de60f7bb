//! Flag definitions for server-side SDKs' local evaluation: posthog-python (and the other
//! server SDKs) poll them with a personal key, then evaluate flags in process. posthog-python
//! 7.11.2 and later ask `GET /flags/definitions?token=…`, older SDKs
//! `GET /api/feature_flag/local_evaluation/?token=…`; both get the same answer, rendered once
//! per project snapshot, with an entity tag so an unchanged poll is a 304.

use actix_web::web;
use actix_web::{HttpRequest, HttpResponse};
use domain::access::AccessService;
use domain::sdk::{SdkService, SdkSnapshot};
use domain::tenancy::TenantRef;
use serde::Serialize;
use serde_json::{Map, Value};
use utoipa::ToSchema;

use super::SnapshotRenderings;
use super::rendered::{Caching, Rendered, respond};
use super::transport::query_token;
use crate::dto::FlagSummary;
use crate::error::ApiError;
use crate::extract::{Caller, FeatureFlags};

/// PostHog's `LocalEvaluationResponseSerializer`. Burrow has neither groups nor cohorts, so
/// both maps are empty; the flags are those `/flags` evaluates (serving ones, then each
/// survey's internal targeting flag), so both ways of evaluating agree.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct FlagDefinitions {
    flags: Vec<FlagSummary>,
    #[schema(value_type = Object)]
    group_type_mapping: Map<String, Value>,
    #[schema(value_type = Object)]
    cohorts: Map<String, Value>,
}

impl<R> From<&SdkSnapshot<R>> for FlagDefinitions {
    fn from(snapshot: &SdkSnapshot<R>) -> Self {
        Self {
            flags: snapshot.flags.iter().cloned().map(Into::into).collect(),
            group_type_mapping: Map::new(),
            cohorts: Map::new(),
        }
    }
}

/// The definitions of the project the token names, for a key with `feature_flag:read` that
/// reaches that project.
pub(crate) async fn definitions(
    request: HttpRequest,
    Caller(principal, _): Caller<FeatureFlags>,
    access: web::Data<AccessService>,
    sdk: web::Data<SdkService<SnapshotRenderings>>,
) -> Result<HttpResponse, ApiError> {
    let snapshot = sdk.snapshot(query_token(&request).as_deref()).await?;
    access
        .project(principal, TenantRef::Id(snapshot.project.id))
        .await?;
    if let Some(bytes) = snapshot.flags_withheld {
        return Err(ApiError::flags_withheld(bytes));
    }
    let rendered = snapshot.renderings.flag_definitions.get_or_init(|| {
        Rendered::new(
            serde_json::to_vec(&FlagDefinitions::from(&*snapshot))
                .expect("flag definitions of JSON values serialize"),
        )
    });
    Ok(respond(
        &request,
        rendered,
        "application/json",
        Caching::Private,
    ))
}

//! `GET /api/early_access_features/?token=…[&stage=…]`: what posthog-js's
//! `getEarlyAccessFeatures` lists — the project's features in the stages asked for (`beta` when
//! none is), as PostHog's `MinimalEarlyAccessFeatureSerializer` shows them, under
//! `earlyAccessFeatures`.

use actix_web::{HttpRequest, HttpResponse, web};
use domain::early_access::{EarlyAccessFeature, EarlyAccessService, Stage};
use domain::sdk::SdkService;
use serde::Serialize;
use utoipa::ToSchema;
use uuid::Uuid;

use super::SnapshotRenderings;
use super::transport::query_token;
use crate::error::ApiError;

#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct EarlyAccessFeatureList {
    #[serde(rename = "earlyAccessFeatures")]
    early_access_features: Vec<ListedFeature>,
}

/// One feature as posthog-js's `EarlyAccessFeature` reads it.
#[derive(Debug, Serialize, ToSchema)]
struct ListedFeature {
    id: Uuid,
    name: String,
    description: String,
    stage: &'static str,
    #[serde(rename = "documentationUrl")]
    documentation_url: String,
    #[serde(rename = "flagKey")]
    flag_key: String,
}

impl From<EarlyAccessFeature> for ListedFeature {
    fn from(feature: EarlyAccessFeature) -> Self {
        Self {
            id: feature.id.0,
            name: feature.name,
            description: feature.description,
            stage: feature.stage.as_str(),
            documentation_url: feature.documentation_url,
            flag_key: feature.flag_key,
        }
    }
}

/// The stages `?stage=` names (repeated); `beta` when none is named, nothing for names no stage
/// has, as PostHog filters by them.
fn stages(query: &str) -> Vec<Stage> {
    let named: Vec<&str> = query
        .split('&')
        .filter_map(|pair| pair.strip_prefix("stage="))
        .collect();
    if named.is_empty() {
        return vec![Stage::Beta];
    }
    named.into_iter().filter_map(Stage::parse).collect()
}

pub(crate) async fn list(
    request: HttpRequest,
    sdk: web::Data<SdkService<SnapshotRenderings>>,
    features: web::Data<EarlyAccessService>,
) -> Result<HttpResponse, ApiError> {
    let project = sdk.project_id(query_token(&request).as_deref()).await?;
    let stages = stages(request.query_string());
    let listed = if stages.is_empty() {
        Vec::new()
    } else {
        features.in_stages(project, &stages).await?
    };
    Ok(HttpResponse::Ok().json(EarlyAccessFeatureList {
        early_access_features: listed.into_iter().map(Into::into).collect(),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stages_default_to_beta_and_unknown_names_match_nothing() {
        assert_eq!(stages("token=phc"), vec![Stage::Beta]);
        assert_eq!(
            stages("token=phc&stage=alpha&stage=general-availability"),
            vec![Stage::Alpha, Stage::GeneralAvailability]
        );
        assert!(stages("stage=nope").is_empty());
    }
}

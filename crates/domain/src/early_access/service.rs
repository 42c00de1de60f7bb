//! The use cases of `/early_access_feature/` and of posthog-js's feature list, with PostHog's
//! rules: a feature gets a flag (made from its name, or an existing boolean person flag no other
//! feature has), and its stage decides whether enrollment serves that flag.

use std::sync::Arc;

use serde_json::{Value, json};

use super::{
    EarlyAccessChanges, EarlyAccessFeature, EarlyAccessId, EarlyAccessRepository,
    NewEarlyAccessFeature, Stage,
};
use crate::error::OrNotFound as _;
use crate::error::{DomainError, ValidationError};
use crate::feature_flag::{
    FeatureFlag, FeatureFlagService, FlagChanges, FlagFilters, FlagId, FlagKey, NewFlag,
};
use crate::ports::{Page, PageRequest};
use crate::survey_response::ENROLLMENT_PREFIX;
use crate::tenancy::{ProjectId, UserBasic};

/// Most early access features one project may hold: posthog-js lists them all at once.
pub const MAX_PROJECT_FEATURES: usize = 200;

/// What a create request asks for.
#[derive(Debug, Clone, PartialEq)]
pub struct EarlyAccessRequest {
    pub name: String,
    pub description: String,
    pub stage: Stage,
    pub documentation_url: String,
    /// An existing flag to use; none makes one from the name.
    pub flag_id: Option<FlagId>,
}

pub struct EarlyAccessService {
    features: Arc<dyn EarlyAccessRepository>,
    flags: Arc<FeatureFlagService>,
}

impl EarlyAccessService {
    pub fn new(features: Arc<dyn EarlyAccessRepository>, flags: Arc<FeatureFlagService>) -> Self {
        Self { features, flags }
    }

    /// # Errors
    /// `Unexpected`.
    pub async fn list(
        &self,
        project: ProjectId,
        page: PageRequest,
    ) -> Result<Page<EarlyAccessFeature>, DomainError> {
        Ok(self.features.list(project, page).await?)
    }

    /// # Errors
    /// `NotFound`.
    pub async fn get(
        &self,
        project: ProjectId,
        id: EarlyAccessId,
    ) -> Result<EarlyAccessFeature, DomainError> {
        self.features.get(project, id).await?.or_not_found()
    }

    /// The features posthog-js lists: those in `stages` (`beta` when none is asked for).
    ///
    /// # Errors
    /// `Unexpected`.
    pub async fn in_stages(
        &self,
        project: ProjectId,
        stages: &[Stage],
    ) -> Result<Vec<EarlyAccessFeature>, DomainError> {
        let stages = if stages.is_empty() {
            &[Stage::Beta][..]
        } else {
            stages
        };
        Ok(self.features.in_stages(project, stages).await?)
    }

    /// Creates the feature with its flag: the one named (boolean, by persons, no feature yet),
    /// or a new one keyed by the name's slug, serving no one but the enrolled.
    ///
    /// # Errors
    /// `Invalid` with PostHog's messages; the flag's own refusals (a taken key).
    pub async fn create(
        &self,
        project: ProjectId,
        creator: &UserBasic,
        request: EarlyAccessRequest,
    ) -> Result<EarlyAccessFeature, DomainError> {
        let flag = match request.flag_id {
            Some(id) => self.linkable(project, id).await?,
            None => {
                let (count, _) = self.features.count_and_linked(project, FlagId(0)).await?;
                check_count(count)?;
                let key = FlagKey::parse(&slug(&request.name)).map_err(|error| {
                    ValidationError::invalid(
                        "name",
                        format!("{} (the flag key made of the name)", error.detail),
                    )
                })?;
                let filters = FlagFilters::parse(json!({
                    "groups": [{"properties": [], "rollout_percentage": 0, "variant": null}]
                }))?;
                let flag = NewFlag {
                    name: format!("Feature Flag for Feature {}", request.name),
                    key,
                    filters,
                    active: true,
                    ensure_experience_continuity: false,
                    is_remote_configuration: false,
                };
                self.flags.create(project, creator, flag).await?
            }
        };
        self.set_enrollment(project, &flag, request.stage.is_release())
            .await?;
        self.features
            .create(
                project,
                NewEarlyAccessFeature {
                    name: request.name,
                    description: request.description,
                    stage: request.stage,
                    documentation_url: request.documentation_url,
                    flag_id: flag.id,
                },
            )
            .await
    }

    /// Partial update; moving into or out of a release stage switches enrollment on the flag.
    ///
    /// # Errors
    /// `NotFound`.
    pub async fn update(
        &self,
        project: ProjectId,
        id: EarlyAccessId,
        changes: EarlyAccessChanges,
    ) -> Result<EarlyAccessFeature, DomainError> {
        let feature = self.get(project, id).await?;
        if let Some(stage) = changes.stage
            && stage.is_release() != feature.stage.is_release()
            && let Ok(flag) = self.flags.get(project, feature.flag_id).await
        {
            self.set_enrollment(project, &flag, stage.is_release())
                .await?;
        }
        self.features.update(project, id, changes).await
    }

    /// Deletes the feature; its flag stays, no longer serving the enrolled.
    ///
    /// # Errors
    /// `NotFound`.
    pub async fn delete(&self, project: ProjectId, id: EarlyAccessId) -> Result<(), DomainError> {
        let feature = self.get(project, id).await?;
        if let Ok(flag) = self.flags.get(project, feature.flag_id).await {
            self.set_enrollment(project, &flag, false).await?;
        }
        self.features.delete(project, id).await
    }

    /// The flag `id` names, if a feature may use it: PostHog's rules and messages.
    async fn linkable(&self, project: ProjectId, id: FlagId) -> Result<FeatureFlag, DomainError> {
        let flag = self
            .flags
            .get(project, id)
            .await
            .map_err(|error| match error {
                DomainError::NotFound => {
                    ValidationError::invalid_input("Feature Flag with this ID does not exist")
                        .into()
                }
                other => other,
            })?;
        let (count, linked) = self.features.count_and_linked(project, id).await?;
        if linked {
            return Err(ValidationError::invalid_input(format!(
                "Linked feature flag {} already has a feature attached to it.",
                flag.key
            ))
            .into());
        }
        check_count(count)?;
        if flag.filters.aggregation_group_type_index.is_some() {
            return Err(ValidationError::invalid_input(
                "Group-based feature flags are not supported for Early Access Features.",
            )
            .into());
        }
        if !flag.variant_keys().is_empty() {
            return Err(ValidationError::invalid_input(
                "Multivariate feature flags are not supported for Early Access Features.",
            )
            .into());
        }
        Ok(flag)
    }

    /// Puts PostHog's enrollment condition in the flag's `super_groups` (or takes it out).
    async fn set_enrollment(
        &self,
        project: ProjectId,
        flag: &FeatureFlag,
        enrolled_served: bool,
    ) -> Result<(), DomainError> {
        let mut filters = flag.filters.to_json();
        let super_groups = if enrolled_served {
            json!([{
                "properties": [{
                    "key": format!("{ENROLLMENT_PREFIX}{}", flag.key),
                    "type": "person",
                    "operator": "exact",
                    "value": ["true"],
                }],
                "rollout_percentage": 100,
            }])
        } else {
            Value::Null
        };
        if filters.get("super_groups") == Some(&super_groups)
            || (super_groups.is_null() && !filters.contains_key("super_groups"))
        {
            return Ok(());
        }
        filters.insert("super_groups".to_owned(), super_groups);
        let changes = FlagChanges {
            filters: Some(FlagFilters::parse(Value::Object(filters))?),
            ..FlagChanges::default()
        };
        self.flags.update(project, flag.id, changes).await?;
        Ok(())
    }
}

fn check_count(count: usize) -> Result<(), ValidationError> {
    if count >= MAX_PROJECT_FEATURES {
        return Err(ValidationError::invalid_input(format!(
            "A project may have at most {MAX_PROJECT_FEATURES} early access features."
        )));
    }
    Ok(())
}

/// Django's `slugify`: lower case, letters, digits, `_` and `-` kept, runs of spaces and
/// hyphens made one hyphen, hyphens and underscores trimmed from the ends.
fn slug(name: &str) -> String {
    let mut slug = String::new();
    let mut gap = false;
    for c in name.to_lowercase().chars() {
        if c.is_ascii_alphanumeric() || c == '_' {
            if gap && !slug.is_empty() {
                slug.push('-');
            }
            gap = false;
            slug.push(c);
        } else if c == '-' || c.is_whitespace() {
            gap = true;
        }
    }
    slug.trim_matches(['-', '_']).to_owned()
}

#[cfg(test)]
mod tests {
    use super::slug;

    #[test]
    fn a_slug_is_djangos() {
        assert_eq!(slug("Dark Mode"), "dark-mode");
        assert_eq!(slug("  New -- checkout!  v2 "), "new-checkout-v2");
        assert_eq!(slug("snake_case ok"), "snake_case-ok");
        assert_eq!(slug("!!!"), "");
    }
}

//! Diesel row types: the column shapes of each table, converted to domain entities here and
//! nowhere else.

mod activity;
mod cohorts;
mod early_access;
mod feature_flags;
mod groups;
mod plugins;
mod surveys;
mod tenancy;
mod typed_json;
mod webhooks;

pub(crate) use activity::ActivityEntryRow;
pub(crate) use cohorts::{CohortChangeset, CohortRow, NewCohortRow};
pub(crate) use early_access::{EarlyAccessChangeset, EarlyAccessRow, NewEarlyAccessRow};
pub(crate) use feature_flags::{FlagChangeset, FlagRow, NewFlagRow};
pub(crate) use groups::{GroupRow, GroupTypeChangeset, GroupTypeRow};
pub(crate) use plugins::{NewPluginActivityRow, PluginRow, PluginStateRow};
pub(crate) use surveys::{NewSurveyActivityRow, SurveyRow, SurveyStateRow};
pub(crate) use tenancy::{
    ApiKeyRow, OrganizationRow, ProjectRow, UserBasicRow, UserRow, membership_level,
};
pub(crate) use typed_json::TypedJson;
pub(crate) use webhooks::{AttemptRow, DeliveryRow, NewWebhookActivityRow, WebhookRow, delivery};

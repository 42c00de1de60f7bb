//! What a webhook write records in the project's activity log, as surveys do: `created`,
//! `updated` with the fields that really changed (never the secret), `secret_rotated` and
//! `deleted`, each named by the webhook's URL.

use serde_json::{Value, json};

use super::WebhookSettings;
use crate::activity::{FieldChange, NewActivity};
use crate::tenancy::UserId;

/// The scope webhook entries are logged under.
pub const SCOPE: &str = "Webhook";

pub(super) fn created(settings: &WebhookSettings, user: UserId) -> NewActivity {
    entry("created", &settings.url, Value::Null, user)
}

pub(super) fn deleted(settings: &WebhookSettings, user: UserId) -> NewActivity {
    entry("deleted", &settings.url, Value::Null, user)
}

pub(super) fn secret_rotated(settings: &WebhookSettings, user: UserId) -> NewActivity {
    entry("secret_rotated", &settings.url, Value::Null, user)
}

/// An update from `before` to `after`; `None` when no field changed.
pub(super) fn updated(
    before: &WebhookSettings,
    after: &WebhookSettings,
    user: UserId,
) -> Option<NewActivity> {
    let changes = changes(before, after);
    (!changes.is_empty()).then(|| {
        let changes = changes.iter().map(|c| c.to_json(SCOPE)).collect();
        entry("updated", &after.url, Value::Array(changes), user)
    })
}

/// The fields an owner sets that differ, in the order the API lists them.
fn changes(before: &WebhookSettings, after: &WebhookSettings) -> Vec<FieldChange> {
    let events = |settings: &WebhookSettings| {
        json!(
            settings
                .events
                .iter()
                .map(|e| e.as_str())
                .collect::<Vec<_>>()
        )
    };
    let surveys = |settings: &WebhookSettings| {
        settings.survey_ids.as_ref().map_or(Value::Null, |ids| {
            json!(ids.iter().map(|id| id.0.to_string()).collect::<Vec<_>>())
        })
    };
    [
        ("url", json!(before.url), json!(after.url)),
        ("events", events(before), events(after)),
        ("survey_ids", surveys(before), surveys(after)),
        (
            "format",
            json!(before.format.as_str()),
            json!(after.format.as_str()),
        ),
        ("enabled", json!(before.enabled), json!(after.enabled)),
        (
            "description",
            json!(before.description),
            json!(after.description),
        ),
    ]
    .into_iter()
    .filter_map(|(field, before, after)| FieldChange::between(field, before, after))
    .collect()
}

/// PostHog's `Detail`: the webhook's URL as its name, and the changes.
fn entry(activity: &'static str, url: &str, changes: Value, user: UserId) -> NewActivity {
    NewActivity {
        user,
        activity,
        detail: json!({"name": url, "changes": changes}),
    }
}

//! Contract tests of the tenancy, API key, flag, person, group, survey (with its activity log),
//! plugin and plugin config repositories and of the webhook outbox and queue, written once and run
//! against both stores: the in-memory fake (`domain::testing::InMemoryStore`) and PostgreSQL. A
//! test that passes on one store and fails on the other means the fake has drifted from the real
//! store.
//!
//! `contract!` turns each `async fn name(stores: Stores)` into `name::in_memory` and
//! `name::postgres`; `postgres` holds what only a real database can show (locks, corrupt rows).

/// Runs each named contract test, an `async fn(Stores)` in the invoking module, once per store.
macro_rules! contract {
    ($($test:ident),+ $(,)?) => {$(
        mod $test {
            #[tokio::test]
            async fn in_memory() {
                super::$test(crate::stores::Stores::in_memory().await).await;
            }

            #[tokio::test]
            async fn postgres() {
                super::$test(crate::stores::Stores::postgres().await).await;
            }
        }
    )+};
}

mod cohorts;
mod early_access;
mod feature_flags;
mod groups;
mod persons;
mod plugins;
mod postgres;
mod project_settings;
mod response_counts;
mod response_sizes;
mod response_submissions;
mod statements;
mod stores;
mod survey_activity;
mod survey_languages;
mod survey_lists;
mod survey_responses;
mod survey_sampling;
mod survey_schedules;
mod survey_writes;
mod surveys;
mod tenancy;
mod webhook_backlog;
mod webhooks;

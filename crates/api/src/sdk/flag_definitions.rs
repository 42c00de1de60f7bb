//! Flag definitions for server-side SDKs' local evaluation: posthog-python (and the other
//! server SDKs) poll them with a personal key, then evaluate flags in process. posthog-python
//! 7.11.2 and later ask `GET /flags/definitions?token=…`, older SDKs
//! `GET /api/feature_flag/local_evaluation/?token=…`; both get the same answer, rendered once
//! per project snapshot, with an entity tag so an unchanged poll is a 304.

use actix_web::web;
use actix_web::{HttpRequest, HttpResponse};
use domain::access::AccessService;
use domain::feature_flag::FlagFilters;
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

/// PostHog's `LocalEvaluationResponseSerializer`: `group_type_mapping` names the project's group
/// types by index; `cohorts` holds, when asked for (`send_cohorts`), the dynamic cohorts the
/// flags name (nested ones too) as PostHog's property groups. Static cohorts are not served, as
/// PostHog serves none: a flag naming one makes the SDKs ask `/flags`, which reads the person's
/// membership. The flags are those `/flags` evaluates (serving ones, then each survey's
/// internal targeting and sampling flags), so both ways of evaluating agree, their dependencies served as
/// PostHog serves them.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct FlagDefinitions {
    flags: Vec<FlagSummary>,
    #[schema(value_type = Object)]
    group_type_mapping: Map<String, Value>,
    #[schema(value_type = Object)]
    cohorts: Map<String, Value>,
}

impl FlagDefinitions {
    /// The snapshot's definitions, with its cohorts when `with_cohorts`.
    fn of<R>(snapshot: &SdkSnapshot<R>, with_cohorts: bool) -> Self {
        let flags = snapshot
            .flags
            .iter()
            .map(|flag| {
                let mut flag = flag.clone();
                if flag.filters.dependencies().next().is_some() {
                    served_dependencies(snapshot, &mut flag.filters);
                }
                flag.into()
            })
            .collect();
        let cohorts = if with_cohorts {
            snapshot
                .cohorts()
                .dynamic()
                .map(|(id, filters)| (id.0.to_string(), filters.properties.to_json()))
                .collect()
        } else {
            Map::new()
        };
        let group_type_mapping = snapshot
            .group_types()
            .iter()
            .map(|group_type| {
                let index = group_type.index.get().to_string();
                (index, Value::from(group_type.group_type.as_str()))
            })
            .collect();
        Self {
            flags,
            group_type_mapping,
            cohorts,
        }
    }
}

/// Flag dependencies as PostHog's definitions serve them: the flag depended on named by its
/// key (its id when it is not served), with the `dependency_chain` the SDKs evaluate first,
/// dependencies before the flag, empty when the chain cannot be evaluated (a cycle or a
/// missing flag), which makes the SDKs ask `/flags`.
fn served_dependencies<R>(snapshot: &SdkSnapshot<R>, filters: &mut FlagFilters) {
    let graph = snapshot.dependencies();
    for set in &mut filters.groups {
        for filter in set.properties.iter_mut().flatten() {
            let Some(id) = filter
                .flag_dependency()
                .and_then(|dependency| dependency.flag)
            else {
                continue;
            };
            if let Some(position) = graph.position(id) {
                filter.key = Some(snapshot.flags[position].key.clone());
            }
            let chain = graph
                .chain(id)
                .into_iter()
                .map(|position| Value::String(snapshot.flags[position].key.clone()))
                .collect();
            filter
                .extra
                .insert("dependency_chain".to_owned(), Value::Array(chain));
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
    let with_cohorts = request
        .query_string()
        .split('&')
        .any(|pair| pair.split('=').next() == Some("send_cohorts"));
    let renderings = &snapshot.renderings;
    let kept = if with_cohorts {
        &renderings.flag_definitions_with_cohorts
    } else {
        &renderings.flag_definitions
    };
    let rendered = kept.get_or_init(|| {
        Rendered::new(
            serde_json::to_vec(&FlagDefinitions::of(&snapshot, with_cohorts))
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

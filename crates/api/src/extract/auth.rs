//! Authentication and authorization, resolved once per request and handed to handlers as a
//! typed context: `Caller` (key checked), `ProjectCaller` and `OrganizationCaller` (and the
//! tenant in the path resolved and checked).
//!
//! The scope a request needs comes from the caller's marker type (`ProjectCaller<Surveys>`
//! needs `survey:…`) and the method: GET/HEAD/OPTIONS read, everything else writes.

use std::future::Future;
use std::marker::PhantomData;
use std::pin::Pin;

use actix_web::dev::Payload;
use actix_web::http::header::AUTHORIZATION;
use actix_web::{FromRequest, HttpRequest, web};
use domain::access::{
    AccessError, AccessService, KeyLocation, OrganizationAccess, PresentedKey, Principal,
    ProjectAccess,
};
use domain::api_key::{PlainApiKey, is_personal_key_candidate};
use domain::rate_limit::{Admission, RateLimiter};
use domain::scope::ScopeObject;
use domain::tenancy::{OrganizationId, ProjectId, TenantRef};
use uuid::Uuid;

use super::body::SharedBody;
use super::json::{content_type, is_json};
use super::scopes::{ExtractorScope, ScopedResource, required_scope};
use crate::error::ApiError;
use crate::metrics::Metrics;

type Extraction<T> = Pin<Box<dyn Future<Output = Result<T, ApiError>>>>;

/// An authenticated caller whose key holds `R`'s scope. Handlers destructure it as
/// `Caller(principal, _)`.
#[derive(Debug, Clone)]
pub struct Caller<R: ScopedResource>(pub Principal, pub PhantomData<R>);

/// A caller holding `R`'s scope, cleared for the project named by the path's `{project_id}`.
#[derive(Debug, Clone)]
pub struct ProjectCaller<R: ScopedResource>(pub ProjectAccess, pub PhantomData<R>);

/// A caller holding `R`'s scope, cleared for the organization named by the path's
/// `{organization_id}`.
#[derive(Debug, Clone)]
pub struct OrganizationCaller<R: ScopedResource>(pub OrganizationAccess, pub PhantomData<R>);

/// The holder of any valid personal key, whatever its scopes: for what a key may always read
/// about itself.
#[derive(Debug, Clone)]
pub struct KeyHolder(pub Principal);

impl FromRequest for KeyHolder {
    type Error = ApiError;
    type Future = Extraction<Self>;

    fn from_request(request: &HttpRequest, payload: &mut Payload) -> Self::Future {
        authorized(request, payload, &[], |_, principal, _| async move {
            Ok(KeyHolder(principal))
        })
    }
}

impl ExtractorScope for KeyHolder {
    type Resource = super::scopes::Unscoped;
}

impl<R: ScopedResource> FromRequest for Caller<R> {
    type Error = ApiError;
    type Future = Extraction<Self>;

    fn from_request(request: &HttpRequest, payload: &mut Payload) -> Self::Future {
        authorized(request, payload, R::OBJECTS, |_, principal, _| async move {
            Ok(Caller(principal, PhantomData))
        })
    }
}

impl<R: ScopedResource> FromRequest for ProjectCaller<R> {
    type Error = ApiError;
    type Future = Extraction<Self>;

    fn from_request(request: &HttpRequest, payload: &mut Payload) -> Self::Future {
        authorized(
            request,
            payload,
            R::OBJECTS,
            |access, principal, request| async move {
                let project = tenant_ref(&request, "project_id", |raw| {
                    raw.parse().ok().map(ProjectId)
                })
                .ok_or(AccessError::ProjectNotFound)?;
                Ok(ProjectCaller(
                    access.project(principal, project).await?,
                    PhantomData,
                ))
            },
        )
    }
}

impl<R: ScopedResource> FromRequest for OrganizationCaller<R> {
    type Error = ApiError;
    type Future = Extraction<Self>;

    fn from_request(request: &HttpRequest, payload: &mut Payload) -> Self::Future {
        authorized(
            request,
            payload,
            R::OBJECTS,
            |access, principal, request| async move {
                let organization = tenant_ref(&request, "organization_id", |raw| {
                    Uuid::parse_str(raw).ok().map(OrganizationId)
                })
                .ok_or(AccessError::OrganizationNotFound)?;
                Ok(OrganizationCaller(
                    access.organization(principal, organization).await?,
                    PhantomData,
                ))
            },
        )
    }
}

impl<R: ScopedResource> ExtractorScope for Caller<R> {
    type Resource = R;
}

impl<R: ScopedResource> ExtractorScope for ProjectCaller<R> {
    type Resource = R;
}

impl<R: ScopedResource> ExtractorScope for OrganizationCaller<R> {
    type Resource = R;
}

/// The tenant a path segment names: `@current` or an id `parse` accepts (`None`: malformed).
fn tenant_ref<Id>(
    request: &HttpRequest,
    segment: &str,
    parse: impl FnOnce(&str) -> Option<Id>,
) -> Option<TenantRef<Id>> {
    match request.match_info().get(segment)? {
        "@current" => Some(TenantRef::Current),
        raw => parse(raw).map(TenantRef::Id),
    }
}

/// The extraction shared by every caller type: authorize for `objects`, then let `resolve`
/// finish the job (for tenant routes, resolving the path's project or organization).
fn authorized<T, F, Fut>(
    request: &HttpRequest,
    payload: &mut Payload,
    objects: &'static [ScopeObject],
    resolve: F,
) -> Extraction<T>
where
    T: 'static,
    F: FnOnce(web::Data<AccessService>, Principal, HttpRequest) -> Fut + 'static,
    Fut: Future<Output = Result<T, ApiError>> + 'static,
{
    let request = request.clone();
    let body = SharedBody::of(&request, payload);
    Box::pin(async move {
        let (access, principal) = authorize(&request, &body, objects).await?;
        resolve(access, principal, request).await
    })
}

/// Authenticates the request and checks its key holds the scope each of `objects` needs for its
/// method, in order (the 403 names the first it lacks).
async fn authorize(
    request: &HttpRequest,
    body: &SharedBody,
    objects: &[ScopeObject],
) -> Result<(web::Data<AccessService>, Principal), ApiError> {
    let access = request
        .app_data::<web::Data<AccessService>>()
        .cloned()
        .ok_or_else(ApiError::internal_without_cause)?;
    let presented = presented_key(request, body).await?;
    let principal = access.authenticate(presented).await?;
    within_rate_limit(request, &principal).await?;
    for object in objects {
        AccessService::require_scope(&principal, required_scope(*object, request.method()))?;
    }
    Ok((access, principal))
}

/// Counts the request against its key's rate limit, however the key was sent. When the
/// counters cannot be reached the request is served anyway (logged and counted): a limiter
/// outage must not become an API outage.
async fn within_rate_limit(request: &HttpRequest, principal: &Principal) -> Result<(), ApiError> {
    let limiter = request
        .app_data::<web::Data<RateLimiter>>()
        .ok_or_else(ApiError::internal_without_cause)?;
    let metrics = request.app_data::<web::Data<Metrics>>();
    match limiter.admit(&principal.key).await {
        Ok(Admission::Admitted) => Ok(()),
        Ok(Admission::Throttled { retry_after }) => {
            if let Some(metrics) = metrics {
                metrics.count_rate_limited();
            }
            Err(ApiError::throttled(retry_after))
        }
        Err(error) => {
            tracing::warn!(error = %error, "rate-limit counters unreachable; serving without limiting");
            if let Some(metrics) = metrics {
                metrics.count_rate_limit_store_error();
            }
            Ok(())
        }
    }
}

/// The key, looked for as PostHog does: the Bearer header, then the JSON body's
/// `personal_api_key`, then the `personal_api_key` query parameter.
async fn presented_key(
    request: &HttpRequest,
    body: &SharedBody,
) -> Result<Option<PresentedKey>, ApiError> {
    if let Some(key) = bearer_token(request) {
        return Ok(Some(PresentedKey {
            key: PlainApiKey::presented(key),
            location: KeyLocation::Header,
        }));
    }
    if is_json(content_type(request)) {
        let key = body
            .inspect(request, |object| {
                object
                    .get("personal_api_key")
                    .and_then(|v| v.as_str())
                    .filter(|k| !k.is_empty())
                    .map(PlainApiKey::presented)
            })
            .await?;
        if let Some(key) = key {
            return Ok(Some(PresentedKey {
                key,
                location: KeyLocation::Body,
            }));
        }
    }
    let from_query = url::form_urlencoded::parse(request.query_string().as_bytes())
        .find(|(name, value)| name == "personal_api_key" && !value.is_empty())
        .map(|(_, value)| PresentedKey {
            key: PlainApiKey::presented(value.into_owned()),
            location: KeyLocation::QueryString,
        });
    Ok(from_query)
}

/// The token of `Authorization: Bearer <token>`, unless it is an OAuth (`pha_`) token.
fn bearer_token(request: &HttpRequest) -> Option<String> {
    let header = request.headers().get(AUTHORIZATION)?.to_str().ok()?;
    let token = bearer_of(header)?;
    is_personal_key_candidate(token).then(|| token.to_owned())
}

/// What PostHog's `^Bearer\s+(\S.+)$` captures, trimmed: `Bearer`, whitespace, then a token of
/// at least two characters. Read by hand, not by that regex: every authenticated request
/// parses this header, and the regex's captures cost a few percent of a warm GET.
pub(crate) fn bearer_of(header: &str) -> Option<&str> {
    let after_scheme = header.strip_prefix("Bearer")?;
    let token = after_scheme.trim_start();
    let separated = token.len() < after_scheme.len();
    let long_enough = token.chars().nth(1).is_some();
    (separated && long_enough && !token.contains('\n')).then(|| token.trim_end())
}

#[cfg(test)]
mod tests {
    use regex::Regex;

    use super::bearer_of;

    /// `bearer_of` takes what PostHog's pattern captures (trimmed), and nothing else.
    #[test]
    fn the_bearer_token_is_what_posthogs_pattern_captures() {
        let pattern = Regex::new(r"^Bearer\s+(\S.+)$").unwrap();
        for header in [
            "Bearer phx_abc",
            "Bearer   phx_abc  ",
            "Bearer\tphx_abc",
            "Bearer \t phx_a b",
            "Bearer ab",
            "Bearer a",
            "Bearer ",
            "Bearer",
            "Bearerphx_abc",
            "bearer phx_abc",
            " Bearer phx_abc",
            "Basic phx_abc",
            "Bearer phx\nabc",
            "Bearer é€",
            "",
        ] {
            let expected = pattern
                .captures(header)
                .and_then(|captures| captures.get(1))
                .map(|token| token.as_str().trim());
            assert_eq!(bearer_of(header), expected, "{header:?}");
        }
    }
}

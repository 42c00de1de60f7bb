//! Authentication and authorization, resolved once per request and handed to handlers as a
//! typed context: `Caller` (key checked), `ProjectCaller` and `OrganizationCaller` (and the
//! tenant in the path resolved and checked).
//!
//! The scope a request needs comes from the `ScopeObject` its route group registers, and the
//! method: GET/HEAD/OPTIONS read, everything else writes (PostHog's action mapping).

use std::future::Future;
use std::pin::Pin;
use std::sync::OnceLock;

use actix_web::dev::Payload;
use actix_web::http::Method;
use actix_web::http::header::AUTHORIZATION;
use actix_web::{FromRequest, HttpRequest, web};
use domain::access::{
    AccessService, KeyLocation, OrganizationAccess, PresentedKey, Principal, ProjectAccess,
};
use domain::api_key::{PlainApiKey, is_personal_key_candidate};
use domain::scope::{AccessKind, RequiredScope, ScopeObject};
use regex::Regex;

use super::body::SharedBody;
use super::json::{content_type, is_json, parse_object};
use crate::error::ApiError;

type Extraction<T> = Pin<Box<dyn Future<Output = Result<T, ApiError>>>>;

/// An authenticated caller whose key holds the route's scope.
#[derive(Debug, Clone)]
pub struct Caller(pub Principal);

/// A caller cleared for the project named by the path's `{project_id}`.
#[derive(Debug, Clone)]
pub struct ProjectCaller(pub ProjectAccess);

/// A caller cleared for the organization named by the path's `{organization_id}`.
#[derive(Debug, Clone)]
pub struct OrganizationCaller(pub OrganizationAccess);

impl FromRequest for Caller {
    type Error = ApiError;
    type Future = Extraction<Self>;

    fn from_request(request: &HttpRequest, payload: &mut Payload) -> Self::Future {
        authorized(request, payload, |_, principal, _| async move {
            Ok(Caller(principal))
        })
    }
}

impl FromRequest for ProjectCaller {
    type Error = ApiError;
    type Future = Extraction<Self>;

    fn from_request(request: &HttpRequest, payload: &mut Payload) -> Self::Future {
        authorized(request, payload, |access, principal, request| async move {
            let segment = request.match_info().get("project_id").unwrap_or_default();
            Ok(ProjectCaller(access.project(principal, segment).await?))
        })
    }
}

impl FromRequest for OrganizationCaller {
    type Error = ApiError;
    type Future = Extraction<Self>;

    fn from_request(request: &HttpRequest, payload: &mut Payload) -> Self::Future {
        authorized(request, payload, |access, principal, request| async move {
            let segment = request
                .match_info()
                .get("organization_id")
                .unwrap_or_default();
            Ok(OrganizationCaller(
                access.organization(principal, segment).await?,
            ))
        })
    }
}

/// The extraction shared by every caller type: authorize, then let `resolve` finish the job
/// (for tenant routes, resolving the path's project or organization).
fn authorized<T, F, Fut>(request: &HttpRequest, payload: &mut Payload, resolve: F) -> Extraction<T>
where
    T: 'static,
    F: FnOnce(web::Data<AccessService>, Principal, HttpRequest) -> Fut + 'static,
    Fut: Future<Output = Result<T, ApiError>> + 'static,
{
    let request = request.clone();
    let body = SharedBody::of(&request, payload);
    Box::pin(async move {
        let (access, principal) = authorize(&request, &body).await?;
        resolve(access, principal, request).await
    })
}

/// Authenticates the request and checks the route's scope.
async fn authorize(
    request: &HttpRequest,
    body: &SharedBody,
) -> Result<(web::Data<AccessService>, Principal), ApiError> {
    let access = request
        .app_data::<web::Data<AccessService>>()
        .cloned()
        .ok_or_else(ApiError::internal_without_cause)?;
    let presented = presented_key(request, body).await?;
    let principal = access.authenticate(presented).await?;
    let object = request
        .app_data::<ScopeObject>()
        .copied()
        .ok_or_else(ApiError::internal_without_cause)?;
    AccessService::require_scope(
        &principal,
        RequiredScope {
            object,
            access: access_kind(request.method()),
        },
    )?;
    Ok((access, principal))
}

fn access_kind(method: &Method) -> AccessKind {
    if matches!(*method, Method::GET | Method::HEAD | Method::OPTIONS) {
        AccessKind::Read
    } else {
        AccessKind::Write
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
        let bytes = body.bytes(request).await?;
        let object = parse_object(content_type(request), &bytes)?;
        if let Some(key) = object
            .get("personal_api_key")
            .and_then(|v| v.as_str())
            .filter(|k| !k.is_empty())
        {
            return Ok(Some(PresentedKey {
                key: PlainApiKey::presented(key),
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
    static BEARER: OnceLock<Regex> = OnceLock::new();
    let bearer =
        BEARER.get_or_init(|| Regex::new(r"^Bearer\s+(\S.+)$").expect("static regex compiles"));
    let header = request.headers().get(AUTHORIZATION)?.to_str().ok()?;
    let token = bearer.captures(header)?.get(1)?.as_str().trim().to_owned();
    is_personal_key_candidate(&token).then_some(token)
}

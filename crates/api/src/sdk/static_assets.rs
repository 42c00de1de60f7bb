//! `/static/{version}/{file}` and `/static/{file}`: posthog-js's own `dist/` files, which the
//! SDK's default snippet (`array.js`) and its lazily loaded bundles (`surveys.js`) fetch from the
//! API host.
//!
//! `BURROW_STATIC_DIR` holds them, in either layout [`StaticAssets`] tells apart. Only regular
//! files with plain names are served; anything else is PostHog's 404.

use std::path::Path;

use actix_files::NamedFile;
use actix_web::http::header::{CACHE_CONTROL, HeaderValue};
use actix_web::{HttpRequest, HttpResponse, web};

use crate::error::ApiError;
use crate::settings::{ApiSettings, StaticAssets};

/// A file of one version: immutable, so caches may keep it for a year.
pub(crate) async fn versioned(
    request: HttpRequest,
    path: web::Path<(String, String)>,
) -> Result<HttpResponse, ApiError> {
    let (version, file) = path.into_inner();
    let dir = assets(&request)?
        .version_dir(&version)
        .ok_or_else(ApiError::not_found)?;
    serve(&request, &dir, &file, "public, max-age=31536000, immutable").await
}

/// A file of the version `?v=` names when Burrow has it, else of the newest version it has (as
/// the SDK falls back to this path when its own version is missing). Cached briefly, since a
/// newer version may be added.
pub(crate) async fn unversioned(
    request: HttpRequest,
    file: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let assets = assets(&request)?;
    let asked = url::form_urlencoded::parse(request.query_string().as_bytes())
        .find(|(key, _)| key == "v")
        .and_then(|(_, version)| assets.version_dir(&version))
        .filter(|dir| dir.is_dir());
    let dir = match asked {
        Some(dir) => dir,
        None => assets.newest_dir().await.ok_or_else(ApiError::not_found)?,
    };
    serve(&request, &dir, &file, "public, max-age=300").await
}

fn assets(request: &HttpRequest) -> Result<&StaticAssets, ApiError> {
    request
        .app_data::<ApiSettings>()
        .and_then(|settings| settings.static_assets.as_ref())
        .ok_or_else(ApiError::not_found)
}

/// `file` of the version directory `dir`. Path segments arrive percent-decoded, so `file` may
/// hold anything: only plain names (letters, digits, `.`, `_`, `-`, not starting with a dot) of
/// regular files are served, and nothing outside the directory ever is. A directory opens like a
/// file but has no body to stream, so it is refused here rather than answered with a broken 200.
async fn serve(
    request: &HttpRequest,
    dir: &Path,
    file: &str,
    cache: &'static str,
) -> Result<HttpResponse, ApiError> {
    let plain = !file.is_empty()
        && !file.starts_with('.')
        && file
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
    if !plain {
        return Err(ApiError::not_found());
    }
    let file = NamedFile::open_async(dir.join(file))
        .await
        .ok()
        .filter(|file| file.metadata().is_file())
        .ok_or_else(ApiError::not_found)?;
    let mut response = file.use_last_modified(true).into_response(request);
    response
        .headers_mut()
        .insert(CACHE_CONTROL, HeaderValue::from_static(cache));
    Ok(response)
}

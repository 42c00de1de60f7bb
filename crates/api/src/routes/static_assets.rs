//! `/static/{version}/{file}` and `/static/{file}`: posthog-js's own `dist/` files, which the
//! SDK's default snippet (`array.js`) and its lazily loaded bundles (`surveys.js`) fetch from the
//! API host. The operator points `BURROW_STATIC_DIR` at a directory holding one directory per
//! posthog-js version (`cargo xtask dev` fills it from the npm registry).

use std::path::{Path, PathBuf};

use actix_files::NamedFile;
use actix_web::http::header::{CACHE_CONTROL, HeaderValue};
use actix_web::{HttpRequest, HttpResponse, web};

use crate::error::ApiError;
use crate::settings::ApiSettings;

/// A file of one version: immutable, so caches may keep it for a year.
pub(crate) async fn versioned(
    request: HttpRequest,
    path: web::Path<(String, String)>,
) -> Result<HttpResponse, ApiError> {
    let (version, file) = path.into_inner();
    let dir = static_dir(&request)?;
    if semver::Version::parse(&version).is_err() {
        return Err(ApiError::not_found());
    }
    serve(
        &request,
        &dir.join(version),
        &file,
        "public, max-age=31536000, immutable",
    )
    .await
}

/// A file of the version `?v=` names when Burrow has it, else of the newest version it has (as
/// the SDK falls back to this path when its own version is missing). Cached briefly, since a
/// newer version may be added.
pub(crate) async fn unversioned(
    request: HttpRequest,
    file: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let dir = static_dir(&request)?;
    let asked = url::form_urlencoded::parse(request.query_string().as_bytes())
        .find(|(key, _)| key == "v")
        .map(|(_, value)| value.into_owned())
        .filter(|version| semver::Version::parse(version).is_ok() && dir.join(version).is_dir());
    let version = match asked {
        Some(version) => version,
        None => newest_version(&dir).await.ok_or_else(ApiError::not_found)?,
    };
    serve(&request, &dir.join(version), &file, "public, max-age=300").await
}

fn static_dir(request: &HttpRequest) -> Result<PathBuf, ApiError> {
    request
        .app_data::<ApiSettings>()
        .and_then(|settings| settings.static_dir.clone())
        .ok_or_else(ApiError::not_found)
}

/// The highest semver-named directory in `dir`.
async fn newest_version(dir: &Path) -> Option<String> {
    let mut entries = tokio::fs::read_dir(dir).await.ok()?;
    let mut newest: Option<semver::Version> = None;
    while let Ok(Some(entry)) = entries.next_entry().await {
        let Some(version) = entry
            .file_name()
            .to_str()
            .and_then(|name| semver::Version::parse(name).ok())
        else {
            continue;
        };
        if newest.as_ref().is_none_or(|known| &version > known) {
            newest = Some(version);
        }
    }
    newest.map(|version| version.to_string())
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

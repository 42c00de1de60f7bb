//! `GET /external_surveys/{survey_id}/`: a hosted survey's page, as PostHog serves one. No key:
//! the link is the invitation. The page loads posthog-js from Burrow's `/static/` and renders
//! the survey full page with posthog-js's own surveys code, so answers are captured like any
//! other; `?distinct_id=` names the respondent, `?q0=…` prefills (posthog-js's URL prefill),
//! and every other parameter but `auto_submit` becomes a property of the survey's events.
//! Every inline script carries a per-request nonce named by a strict Content-Security-Policy.
//! Other sites may frame the page only when its survey has `enable_iframe_embedding` (PostHog's
//! `xframe_options_exempt`); otherwise `X-Frame-Options: DENY` and `frame-ancestors 'none'`.

use actix_web::http::StatusCode;
use actix_web::http::header::{
    ACCEPT_LANGUAGE, CACHE_CONTROL, CONTENT_SECURITY_POLICY, X_FRAME_OPTIONS,
};
use actix_web::{HttpRequest, HttpResponse, web};
use domain::sdk::{HostedSurvey, SdkService};
use domain::survey::{Survey, SurveyId, is_right_to_left};
use serde_json::json;
use uuid::Uuid;

use super::SnapshotRenderings;
use super::public_surveys::PublicSurvey;
use crate::error::ApiError;
use crate::fallback_errors::ErrorPage;

/// Where a page's survey is rendered.
const CONTAINER: &str = "posthog-survey-container";

pub(crate) async fn page(
    request: HttpRequest,
    sdk: web::Data<SdkService<SnapshotRenderings>>,
) -> Result<HttpResponse, ApiError> {
    let raw = request.match_info().get("survey_id").unwrap_or_default();
    let Ok(id) = Uuid::parse_str(raw) else {
        return Ok(notice(
            StatusCode::NOT_FOUND,
            "Survey not found",
            "This survey link is not valid: check that it was copied whole.",
        ));
    };
    Ok(match sdk.hosted_survey(SurveyId(id)).await? {
        HostedSurvey::Open { survey, token } => survey_page(&request, &survey, &token),
        HostedSurvey::Closed { name } => notice(
            StatusCode::GONE,
            &name,
            "This survey is closed and no longer takes answers. Thank you for your interest.",
        ),
        HostedSurvey::Missing => notice(
            StatusCode::NOT_FOUND,
            "Survey not found",
            "There is no open survey at this address.",
        ),
    })
}

/// The page in the visitor's language (`Accept-Language`; PostHog's hosted page has no
/// parameter for it): the survey's texts in the translation it matches, else its own.
fn survey_page(request: &HttpRequest, survey: &Survey, token: &str) -> HttpResponse {
    let nonce = Uuid::new_v4().simple().to_string();
    let accepted = request
        .headers()
        .get(ACCEPT_LANGUAGE)
        .and_then(|value| value.to_str().ok())
        .unwrap_or_default();
    let language = survey.state.display_language(accepted);
    let shown = Survey {
        state: survey.state.in_language(language.as_deref()),
        ..survey.clone()
    };
    let lang = language
        .as_deref()
        .unwrap_or(survey.state.base_language.as_str());
    let dir = if is_right_to_left(lang) { "rtl" } else { "ltr" };
    let data = script_json(&json!({
        "survey": PublicSurvey::from(&shown),
        "token": token,
        "container": CONTAINER,
        "language": language,
    }));
    let title = html_escape::encode_text(&shown.state.name);
    let body = format!(
        r#"<!doctype html>
<html lang="{lang}" dir="{dir}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>{title}</title>
<style>
html, body {{ margin: 0; min-height: 100%; background: #f7f7f8; }}
body {{ display: flex; justify-content: center; align-items: flex-start; padding: 6vh 16px; box-sizing: border-box;
       font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; }}
#{CONTAINER} {{ width: 100%; max-width: 560px; color: #1d1f27; }}
#{CONTAINER} .survey-form {{ background: #fff; border: 1px solid #e2e3e7; border-radius: 12px; padding: 24px; }}
#{CONTAINER} textarea, #{CONTAINER} input[type=text] {{ width: 100%; box-sizing: border-box; min-height: 96px;
       margin-top: 8px; padding: 8px; font: inherit; border: 1px solid #c7c9d1; border-radius: 6px; }}
#{CONTAINER} button {{ font: inherit; cursor: pointer; }}
#{CONTAINER} button.form-submit {{ margin-top: 12px; padding: 8px 16px; border: 0; border-radius: 6px;
       background: #1d4aff; color: #fff; }}
#{CONTAINER} .footer-branding {{ display: block; margin-top: 16px; font-size: 12px; color: #6b6f7b; }}
</style>
</head>
<body>
<main id="{CONTAINER}" aria-live="polite"></main>
<script nonce="{nonce}" src="/static/array.full.js"></script>
<script nonce="{nonce}">
(function () {{
  var page = {data};
  var params = new URLSearchParams(window.location.search);
  // posthog-js's own property when it shows a translation: the key it matched.
  var properties = page.language ? {{ "$survey_language": page.language }} : {{}};
  params.forEach(function (value, key) {{
    if (key !== "distinct_id" && key !== "auto_submit" && key !== "__posthog_debug__" && !/^q\d+$/.test(key)) {{
      properties[key] = value;
    }}
  }});
  var distinctId = params.get("distinct_id");
  var rendered = false;
  function render(instance) {{
    var manager = instance.surveys && instance.surveys._surveyManager;
    if (rendered || !manager) return;
    rendered = true;
    manager.renderSurvey(page.survey, document.getElementById(page.container), properties);
  }}
  window.posthog.init(page.token, {{
    api_host: window.location.origin,
    disable_surveys_automatic_display: true,
    advanced_enable_surveys: true,
    autocapture: false,
    capture_pageview: false,
    capture_pageleave: false,
    disable_session_recording: true,
    persistence: "sessionStorage",
    bootstrap: distinctId ? {{ distinctID: distinctId }} : undefined,
    surveys: {{ prefillFromUrl: true }},
    loaded: function (instance) {{
      instance.onSurveysLoaded(function () {{ render(instance); }});
    }}
  }});
}})();
</script>
</body>
</html>
"#
    );
    let framing = if survey.state.enable_iframe_embedding {
        Framing::Anywhere
    } else {
        Framing::Never
    };
    let mut page = HttpResponse::Ok();
    page.content_type("text/html; charset=utf-8")
        .insert_header((CONTENT_SECURITY_POLICY, policy(&nonce, framing)))
        .insert_header((CACHE_CONTROL, "no-store"));
    if framing == Framing::Never {
        page.insert_header((X_FRAME_OPTIONS, "DENY"));
    }
    page.body(body)
}

/// A page without a survey (invalid link, closed or unknown survey), under the same policy.
fn notice(status: StatusCode, heading: &str, text: &str) -> HttpResponse {
    let heading = html_escape::encode_text(heading);
    let body = format!(
        r#"<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>{heading}</title>
<style>
body {{ margin: 0; padding: 12vh 16px; background: #f7f7f8; text-align: center;
       font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #1d1f27; }}
</style>
</head>
<body>
<h1>{heading}</h1>
<p>{text}</p>
</body>
</html>
"#
    );
    let mut page = HttpResponse::build(status)
        .content_type("text/html; charset=utf-8")
        .insert_header((CONTENT_SECURITY_POLICY, policy("none", Framing::Never)))
        .insert_header((X_FRAME_OPTIONS, "DENY"))
        .insert_header((CACHE_CONTROL, "no-store"))
        .body(body);
    page.extensions_mut().insert(ErrorPage);
    page
}

/// Who may show a page in a frame.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Framing {
    Never,
    /// The survey asked for it (`enable_iframe_embedding`).
    Anywhere,
}

/// The page's policy: scripts only from Burrow and with this response's nonce, requests only
/// to Burrow (posthog-js's `/flags`, `/e/`, the survey feed), inline styles for posthog-js's
/// survey (it styles its shadow DOM inline), framing as `framing` says, no forms posting
/// elsewhere.
fn policy(nonce: &str, framing: Framing) -> String {
    let ancestors = match framing {
        Framing::Never => "'none'",
        Framing::Anywhere => "*",
    };
    format!(
        "default-src 'none'; script-src 'self' 'nonce-{nonce}'; connect-src 'self'; \
         style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; \
         base-uri 'none'; form-action 'none'; frame-ancestors {ancestors}"
    )
}

/// JSON safe inside a `<script>`: no `<`, `>` or `&` (so no `</script>` or comment opener),
/// nor the two line separators older engines end string literals at.
fn script_json(value: &serde_json::Value) -> String {
    serde_json::to_string(value)
        .expect("JSON serializes")
        .replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026")
        .replace('\u{2028}', "\\u2028")
        .replace('\u{2029}', "\\u2029")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_in_a_script_cannot_close_it() {
        let text = script_json(&json!({"name": "</script><script>alert(1)</script> & \u{2028}"}));
        assert!(!text.contains('<') && !text.contains('>') && !text.contains('&'));
        assert_eq!(
            serde_json::from_str::<serde_json::Value>(&text).unwrap()["name"],
            "</script><script>alert(1)</script> & \u{2028}"
        );
    }
}

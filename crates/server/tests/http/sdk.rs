//! What posthog-js loads from its API host besides capture: the remote config and its own
//! `dist/` bundles from `BURROW_STATIC_DIR`, on any origin.

use reqwest::Method;
use serde_json::{Value, json};

use crate::helpers::{assert_error, parts, spawn_app, spawn_app_with, temp_tree};

const SITE: &str = "https://shop.example";

#[tokio::test]
async fn the_remote_config_turns_on_surveys_flags_and_gzip_capture() {
    let app = spawn_app().await;
    let ada = app.tenant("ada@example.com", &["*"]).await;
    let token = app.project_token(&ada).await;

    let response = app
        .request(Method::GET, &format!("/array/{token}/config"))
        .header("Origin", SITE)
        .send()
        .await
        .unwrap();
    assert_eq!(response.headers()["access-control-allow-origin"], "*");
    let (status, config) = parts(response).await;
    assert_eq!(status, 200);
    assert_eq!(config["token"], token.as_str());
    assert_eq!(config["surveys"], true);
    assert_eq!(config["hasFeatureFlags"], true);
    assert_eq!(
        config["supportedCompression"],
        serde_json::json!(["gzip", "gzip-js"])
    );
    assert_eq!(config["analytics"]["endpoint"], "/i/v0/e/");
    for off in [
        "sessionRecording",
        "heatmaps",
        "capturePerformance",
        "autocaptureExceptions",
    ] {
        assert_eq!(config[off], false, "{off}");
    }

    let script = app
        .request(Method::GET, &format!("/array/{token}/config.js"))
        .header("Origin", SITE)
        .send()
        .await
        .unwrap();
    assert_eq!(script.status(), 200);
    assert_eq!(script.headers()["access-control-allow-origin"], "*");
    assert!(
        script.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("application/javascript")
    );
    let script = script.text().await.unwrap();
    let assignment = format!("window._POSTHOG_REMOTE_CONFIG[\"{token}\"]=");
    let entry = script
        .split_once(&assignment)
        .and_then(|(_, rest)| rest.strip_suffix(";})();\n"))
        .unwrap_or_else(|| panic!("not PostHog's config script: {script}"));
    let entry: Value = serde_json::from_str(entry).unwrap();
    assert_eq!(
        entry["config"], config,
        "the script carries the same config"
    );
    assert_eq!(entry["siteApps"], serde_json::json!([]));
    let missing_script = app
        .request(Method::GET, "/array/phc_nobodyhasthistoken/config.js")
        .header("Origin", SITE)
        .send()
        .await
        .unwrap();
    assert_eq!(missing_script.status(), 404);
    assert_eq!(missing_script.headers()["access-control-allow-origin"], "*");

    let unknown = app
        .request(Method::GET, "/array/phc_nobodyhasthistoken/config/")
        .header("Origin", SITE)
        .send()
        .await
        .unwrap();
    assert_eq!(unknown.headers()["access-control-allow-origin"], "*");
    let (status, body) = parts(unknown).await;
    assert_eq!(status, 404);
    assert_error(&body, "invalid_request", "not_found", "Not found.");
}

#[tokio::test]
async fn posthog_js_bundles_are_served_from_the_static_directory() {
    let dir = temp_tree(
        "burrow-static",
        &[
            ("1.10.0/surveys.js", "/* surveys 1.10.0 */"),
            ("1.449.2/surveys.js", "/* surveys 1.449.2 */"),
            ("secret.txt", "not served"),
        ],
    );
    let static_dir = dir.clone();
    let app = spawn_app_with(move |args| args.static_dir = Some(static_dir)).await;
    let get = |path: &str| app.request(Method::GET, path).header("Origin", SITE).send();

    let versioned = get("/static/1.449.2/surveys.js").await.unwrap();
    assert_eq!(versioned.status(), 200);
    assert_eq!(versioned.headers()["access-control-allow-origin"], "*");
    assert!(
        versioned.headers()["content-type"]
            .to_str()
            .unwrap()
            .contains("javascript")
    );
    assert!(
        versioned.headers()["cache-control"]
            .to_str()
            .unwrap()
            .contains("immutable")
    );
    assert_eq!(versioned.text().await.unwrap(), "/* surveys 1.449.2 */");

    // The newest version by semver (1.449.2 > 1.10.0), or the one `?v=` names when present.
    let newest = get("/static/surveys.js").await.unwrap();
    assert_eq!(newest.text().await.unwrap(), "/* surveys 1.449.2 */");
    let asked = get("/static/surveys.js?v=1.10.0").await.unwrap();
    assert_eq!(asked.text().await.unwrap(), "/* surveys 1.10.0 */");
    let missing_version = get("/static/surveys.js?v=2.0.0").await.unwrap();
    assert_eq!(
        missing_version.text().await.unwrap(),
        "/* surveys 1.449.2 */"
    );

    for path in [
        "/static/9.9.9/surveys.js",
        "/static/1.449.2/nothing.js",
        "/static/..%2Fsecret.txt",
        "/static/1.449.2/..%2F..%2Fsecret.txt",
        "/static/1.449.2/..%2Fsecret.txt",
    ] {
        let response = get(path).await.unwrap();
        assert_eq!(
            response
                .headers()
                .get("access-control-allow-origin")
                .map(|v| v.to_str().unwrap()),
            Some("*"),
            "{path}"
        );
        let (status, body): (u16, Value) = parts(response).await;
        assert_eq!(status, 404, "{path}");
        assert_eq!(body["code"], "not_found", "{path}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn posthog_js_as_npm_installs_it_is_served_from_its_dist_directory_or_its_package_root() {
    // What `npm install posthog-js` leaves in `node_modules/posthog-js`.
    let package = temp_tree(
        "burrow-npm-posthog-js",
        &[
            (
                "package.json",
                r#"{"name": "posthog-js", "version": "1.449.2"}"#,
            ),
            ("dist/array.js", "/* array 1.449.2 */"),
            ("dist/surveys.js", "/* surveys 1.449.2 */"),
        ],
    );
    for static_dir in [package.join("dist"), package.clone()] {
        let configured = static_dir.clone();
        let app = spawn_app_with(move |args| args.static_dir = Some(configured)).await;
        let get = |path: &str| app.request(Method::GET, path).send();

        for (path, served) in [
            ("/static/array.js", "/* array 1.449.2 */"),
            ("/static/surveys.js?v=1.449.2", "/* surveys 1.449.2 */"),
            ("/static/surveys.js?v=1.10.0", "/* surveys 1.449.2 */"),
            ("/static/1.449.2/surveys.js", "/* surveys 1.449.2 */"),
        ] {
            let response = get(path).await.unwrap();
            assert_eq!(response.status(), 200, "{path} from {static_dir:?}");
            assert_eq!(response.text().await.unwrap(), served, "{path}");
        }
        for path in ["/static/1.10.0/surveys.js", "/static/package.json"] {
            let (status, body) = parts(get(path).await.unwrap()).await;
            assert_eq!(status, 404, "{path} from {static_dir:?}");
            assert_error(&body, "invalid_request", "not_found", "Not found.");
        }
    }
    let _ = std::fs::remove_dir_all(&package);
}

#[tokio::test]
async fn without_a_static_directory_bundles_are_404() {
    let app = spawn_app().await;
    let (status, body) = parts(
        app.request(Method::GET, "/static/surveys.js")
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 404);
    assert_error(&body, "invalid_request", "not_found", "Not found.");
}

#[tokio::test]
async fn hosted_survey_pages_answer_only_running_external_surveys_under_a_strict_policy() {
    let app = spawn_app().await;
    let tenant = app.tenant("hosted@example.com", &["*"]).await;
    let create = async |body: Value| {
        let (status, survey) = parts(
            app.send_json(
                Method::POST,
                &format!("/api/projects/{}/surveys/", tenant.project_id),
                &tenant.key,
                &body,
            )
            .await,
        )
        .await;
        assert_eq!(status, 201, "{survey}");
        survey["id"].as_str().unwrap().to_owned()
    };
    let question = json!([{"type": "open", "question": "Why </script><script>alert(1)?"}]);
    let running = create(
        json!({"name": "Hosted <b>page</b>", "type": "external_survey",
                                "start_date": "2026-01-01T00:00:00Z", "questions": question}),
    )
    .await;
    let draft =
        create(json!({"name": "Draft", "type": "external_survey", "questions": question})).await;
    let popover = create(json!({"name": "Popover", "type": "popover",
                                "start_date": "2026-01-01T00:00:00Z", "questions": question}))
    .await;
    let ended = create(json!({"name": "Ended", "type": "external_survey",
                              "start_date": "2026-01-01T00:00:00Z",
                              "end_date": "2026-02-01T00:00:00Z", "questions": question}))
    .await;
    let page = async |id: &str| {
        let response = app
            .request(Method::GET, &format!("/external_surveys/{id}/"))
            .send()
            .await
            .unwrap();
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        (status, headers, response.text().await.unwrap())
    };

    let (status, headers, body) = page(&running).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(headers["content-type"], "text/html; charset=utf-8");
    assert_eq!(headers["x-frame-options"], "DENY");
    let policy = headers["content-security-policy"].to_str().unwrap();
    let nonce = policy
        .split("'nonce-")
        .nth(1)
        .and_then(|rest| rest.split('\'').next())
        .expect("a nonce in the policy");
    assert!(
        policy.contains("default-src 'none'") && policy.contains("frame-ancestors 'none'"),
        "{policy}"
    );
    assert_eq!(
        body.matches(&format!("nonce=\"{nonce}\"")).count(),
        2,
        "{body}"
    );
    assert!(
        body.contains("<title>Hosted &lt;b&gt;page&lt;/b&gt;</title>"),
        "{body}"
    );
    assert!(
        !body.contains("</script><script>alert"),
        "the survey's text closed a script: {body}"
    );
    // Another request, another nonce.
    let (_, again, _) = page(&running).await;
    assert_ne!(
        again["content-security-policy"],
        headers["content-security-policy"]
    );

    for (id, expected) in [
        (draft.as_str(), 404),
        (popover.as_str(), 404),
        (ended.as_str(), 410),
        ("0192f5a4-0000-7000-8000-000000000000", 404),
        ("not-a-uuid", 404),
    ] {
        let (status, headers, body) = page(id).await;
        assert_eq!(status, expected, "{id}: {body}");
        assert_eq!(
            headers["content-type"], "text/html; charset=utf-8",
            "{id}: {status} {body}"
        );
        assert!(headers.contains_key("content-security-policy"), "{id}");
    }
    // Archived: closed too.
    let archive = format!("/api/projects/{}/surveys/{running}/", tenant.project_id);
    app.send_json(
        Method::PATCH,
        &archive,
        &tenant.key,
        &json!({"archived": true}),
    )
    .await;
    assert_eq!(page(&running).await.0, 410);
}

//! Spawning the app and making tenants for HTTP tests.

use std::sync::Arc;
use std::time::{Duration, Instant};

use adapters::testing::TestDatabase;
use adapters::{PgApiKeyRepository, PgTenancyRepository};
use burrow_server::cli::ServeArgs;
use burrow_server::startup::Application;
use clap::{Args as _, FromArgMatches as _};
use domain::access::MAX_FRESHNESS;
use domain::admin::{AdminService, BootstrapRequest, KeyRequest};
use domain::tenancy::{OrganizationId, PluginsAccessLevel, ProjectId};
use reqwest::{Method, RequestBuilder, Response};
use serde_json::Value;

/// A running app with its private database.
pub struct TestApp {
    pub address: String,
    pub database: TestDatabase,
    pub admin: AdminService,
    pub client: reqwest::Client,
}

/// A user with an organization, a project and a key, as `admin bootstrap` makes them.
#[derive(Debug, Clone)]
pub struct Tenant {
    pub email: String,
    pub key: String,
    pub organization_id: OrganizationId,
    pub project_id: ProjectId,
}

pub async fn spawn_app() -> TestApp {
    spawn_app_with(|_| {}).await
}

/// Starts the app after letting the test adjust its settings.
pub async fn spawn_app_with(adjust: impl FnOnce(&mut ServeArgs)) -> TestApp {
    let database = TestDatabase::create().await;
    let address = start_node(&database.url, adjust);
    let admin = AdminService::new(
        Arc::new(PgApiKeyRepository::new(database.database.clone())),
        Arc::new(PgTenancyRepository::new(database.database.clone())),
    );
    TestApp {
        address,
        database,
        admin,
        client: reqwest::Client::new(),
    }
}

/// The settings a test app starts with: the command line's defaults (its environment variables
/// ignored), one worker, a small pool.
pub fn serve_args(database_url: &str) -> ServeArgs {
    let command =
        ServeArgs::augment_args(clap::Command::new("serve")).mut_args(|arg| arg.env(None));
    let matches = command.get_matches_from([
        "serve",
        "--database-url",
        database_url,
        "--bind",
        "127.0.0.1:0",
        "--db-pool-size",
        "5",
        "--workers",
        "1",
    ]);
    ServeArgs::from_arg_matches(&matches).expect("the test settings parse")
}

/// Starts a node of the app on `database_url`; returns its base URL.
pub fn start_node(database_url: &str, adjust: impl FnOnce(&mut ServeArgs)) -> String {
    let mut args = serve_args(database_url);
    adjust(&mut args);
    let app = Application::build(&args).expect("building the app");
    let address = format!("http://127.0.0.1:{}", app.port());
    tokio::spawn(app.run_until_stopped());
    address
}

impl TestApp {
    /// The project's public token (`phc_…`), which SDKs carry instead of a key.
    pub async fn project_token(&self, tenant: &Tenant) -> String {
        let (status, project) = parts(
            self.get(
                &format!("/api/projects/{}/", tenant.project_id),
                &tenant.key,
            )
            .await,
        )
        .await;
        assert_eq!(status, 200, "{project}");
        project["api_token"]
            .as_str()
            .expect("project api_token")
            .to_owned()
    }

    /// Another node serving the same database, as behind a load balancer; returns its base URL.
    pub fn another_node(&self, adjust: impl FnOnce(&mut ServeArgs)) -> String {
        start_node(&self.database.url, adjust)
    }

    /// Bootstraps a tenant whose key has `scopes`.
    pub async fn tenant(&self, email: &str, scopes: &[&str]) -> Tenant {
        let made = self
            .admin
            .bootstrap(BootstrapRequest {
                email: email.into(),
                first_name: "Test".into(),
                organization_name: format!("Org of {email}"),
                project_name: "Default project".into(),
                scopes: scopes.iter().map(ToString::to_string).collect(),
                plugins_access_level: PluginsAccessLevel::Root,
            })
            .await
            .expect("bootstrapping a tenant");
        Tenant {
            email: email.into(),
            key: made.key.expose().to_owned(),
            organization_id: made.record.organization.id,
            project_id: made.record.project.id,
        }
    }

    /// Another key for an existing user.
    pub async fn key(&self, request: KeyRequest) -> String {
        self.admin
            .create_key(request)
            .await
            .expect("creating a key")
            .expose()
            .to_owned()
    }

    /// Another key for the tenant's user, labelled `label`, with only `scopes` and reaching all
    /// of the user's projects and organizations.
    pub async fn scoped_key(&self, tenant: &Tenant, label: &str, scopes: &[&str]) -> String {
        self.key(KeyRequest {
            email: tenant.email.clone(),
            label: label.into(),
            scopes: scopes.iter().map(ToString::to_string).collect(),
            ..KeyRequest::default()
        })
        .await
    }

    /// `POST /batch/` of `events` with the tenant's project token, as a server SDK sends them;
    /// asserts a 200.
    pub async fn capture_batch(&self, tenant: &Tenant, events: Vec<Value>) {
        let token = self.project_token(tenant).await;
        let response = self
            .request(Method::POST, "/batch/")
            .json(&serde_json::json!({"api_key": token, "batch": events}))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200);
    }

    pub fn request(&self, method: Method, path: &str) -> RequestBuilder {
        self.client
            .request(method, format!("{}{path}", self.address))
    }

    /// `POST /flags/?v=2` with `body` (token, distinct id, …) as the SDKs send it: the answer's
    /// status and JSON.
    pub async fn flags(&self, body: &Value) -> (u16, Value) {
        parts(
            self.request(Method::POST, "/flags/?v=2")
                .json(body)
                .send()
                .await
                .expect("POST /flags sent"),
        )
        .await
    }

    /// The project's public survey feed (`GET /api/surveys/?token=`), as posthog-js reads it.
    pub async fn survey_feed(&self, token: &str) -> Value {
        let path = format!("/api/surveys/?token={token}");
        let sent = self.request(Method::GET, &path).send().await;
        parts(sent.expect("GET /api/surveys/ sent")).await.1
    }

    /// GET with the key in the Authorization header.
    pub async fn get(&self, path: &str, key: &str) -> Response {
        self.request(Method::GET, path)
            .bearer_auth(key)
            .send()
            .await
            .expect("request sent")
    }

    /// A request with a JSON body and the key in the Authorization header.
    pub async fn send_json(&self, method: Method, path: &str, key: &str, body: &Value) -> Response {
        self.request(method, path)
            .bearer_auth(key)
            .json(body)
            .send()
            .await
            .expect("request sent")
    }

    /// Rows in a table, for "a failed write leaves nothing behind".
    pub async fn rows(&self, table: &str) -> i64 {
        self.database.count_rows(table).await
    }
}

/// Polls `check` until it holds. Running nodes remember keys and tenants for at most
/// `MAX_FRESHNESS`, so an admin change must be felt within that (plus a request's time);
/// panics naming `what` otherwise.
pub async fn eventually<F, Fut>(what: &str, check: F)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = bool>,
{
    within(MAX_FRESHNESS + Duration::from_millis(500), what, check).await;
}

/// Polls `check` until it holds; panics naming `what` when it still does not after `bound`.
pub async fn within<F, Fut>(bound: Duration, what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = bool>,
{
    let deadline = Instant::now() + bound;
    while !check().await {
        assert!(
            Instant::now() < deadline,
            "{what} was not felt within {bound:?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Status and JSON body of a response.
/// Runs `command` with `input` on its standard input; its exit status and output.
pub async fn run_with_input(
    mut command: tokio::process::Command,
    input: &[u8],
) -> std::process::Output {
    use tokio::io::AsyncWriteExt;
    let mut child = command
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("starting the driver");
    let mut stdin = child.stdin.take().expect("the driver's stdin");
    stdin
        .write_all(input)
        .await
        .expect("writing the driver's input");
    drop(stdin);
    child.wait_with_output().await.expect("the driver's output")
}

pub async fn parts(response: Response) -> (u16, Value) {
    let status = response.status().as_u16();
    let text = response.text().await.expect("body read");
    let body = serde_json::from_str(&text).unwrap_or_else(|_| panic!("body is not JSON: {text:?}"));
    (status, body)
}

/// Asserts a PostHog-shaped error.
pub fn assert_error(body: &Value, kind: &str, code: &str, detail: &str) {
    assert_eq!(
        body,
        &serde_json::json!({"type": kind, "code": code, "detail": detail, "attr": null}),
    );
}

/// Asserts the 403 answer of a key without `scope`.
pub fn assert_missing_scope(body: &Value, scope: &str) {
    assert_error(
        body,
        "authentication_error",
        "permission_denied",
        &format!("API key missing required scope '{scope}'"),
    );
}

/// A route pattern with its parameters filled in: the caller's own tenant, and `0` for the
/// rest (the scope is checked before any of them is looked up).
pub fn concrete_path(pattern: &str) -> String {
    pattern
        .split('/')
        .map(|segment| match segment {
            "{project_id}" | "{organization_id}" => "@current",
            // Survey, webhook, response and early access feature ids are matched by a UUID
            // pattern, so a route only sees UUID-like ids.
            parameter
                if ["{survey_id", "{webhook_id", "{response_uuid", "{feature_id"]
                    .iter()
                    .any(|name| parameter.starts_with(name)) =>
            {
                "00000000-0000-0000-0000-000000000000"
            }
            parameter if parameter.starts_with('{') => "0",
            literal => literal,
        })
        .collect::<Vec<_>>()
        .join("/")
}

/// A fresh directory under the system's temporary one holding `files` (paths relative to it,
/// parents created), for tests that point Burrow at a directory.
pub fn temp_tree(prefix: &str, files: &[(&str, &str)]) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("{prefix}-{}", uuid::Uuid::new_v4()));
    for (path, contents) in files {
        let path = dir.join(path);
        std::fs::create_dir_all(path.parent().expect("a file has a parent")).unwrap();
        std::fs::write(path, contents).unwrap();
    }
    dir
}

/// The Chromium the browser tests run: Debian's `chromium` (which `.ci/run` installs), or the
/// binary `BURROW_CHROMIUM` names.
pub fn chromium() -> String {
    std::env::var("BURROW_CHROMIUM").unwrap_or_else(|_| "chromium".into())
}

/// The value of the sample named exactly `series` (name and labels) in Prometheus text.
pub fn sample(metrics: &str, series: &str) -> Option<f64> {
    metrics
        .lines()
        .find_map(|line| line.strip_prefix(series)?.strip_prefix(' ')?.parse().ok())
}

/// `series`' value in `GET /metrics` of the node at `address`.
pub async fn scraped(address: &str, series: &str) -> Option<f64> {
    let metrics = reqwest::get(format!("{address}/metrics"))
        .await
        .expect("GET /metrics")
        .text()
        .await
        .expect("the metrics text");
    sample(&metrics, series)
}

/// Sends `body` to `path` under the tenant's project (`/api/projects/{id}/<path>`) with its
/// key; the status and JSON body.
pub async fn send_to_project(
    app: &TestApp,
    tenant: &Tenant,
    method: reqwest::Method,
    path: &str,
    body: serde_json::Value,
) -> (u16, serde_json::Value) {
    parts(
        app.send_json(
            method,
            &format!("/api/projects/{}/{path}", tenant.project_id.0),
            &tenant.key,
            &body,
        )
        .await,
    )
    .await
}

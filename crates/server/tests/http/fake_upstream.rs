//! A loopback stand-in for GitHub, GitLab, the npm registry and a repository listing: it answers
//! the paths a test sets up, with real zip and tgz archives, optionally slowly, and records
//! what it was asked (with the `Authorization` header) so tests can check what was sent.

use std::collections::HashMap;
use std::io::Write as _;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use actix_web::{App, HttpRequest, HttpResponse, HttpServer, web};

/// One canned answer.
#[derive(Clone)]
struct Reply {
    status: u16,
    body: Vec<u8>,
    delay: Duration,
}

#[derive(Default)]
struct State {
    replies: HashMap<String, Reply>,
    /// `(path with query, Authorization header)` of every request, in order.
    requests: Vec<(String, Option<String>)>,
}

/// The running fake; its `base` is a bare origin like `http://127.0.0.1:41234`.
#[derive(Clone)]
pub struct FakeUpstream {
    pub base: String,
    state: Arc<Mutex<State>>,
}

impl FakeUpstream {
    pub async fn start() -> Self {
        let state = Arc::new(Mutex::new(State::default()));
        let shared = web::Data::from(state.clone());
        let server = HttpServer::new(move || {
            App::new()
                .app_data(shared.clone())
                .default_service(web::to(answer))
        })
        .workers(1)
        .bind(("127.0.0.1", 0))
        .expect("binding the fake upstream");
        let port = server.addrs()[0].port();
        tokio::spawn(server.run());
        Self {
            base: format!("http://127.0.0.1:{port}"),
            state,
        }
    }

    /// Answers `path` (with its query, if the request has one) with `status` and `body`.
    pub fn serve(&self, path: &str, status: u16, body: impl Into<Vec<u8>>) {
        self.serve_slowly(path, status, body, Duration::ZERO);
    }

    pub fn serve_slowly(&self, path: &str, status: u16, body: impl Into<Vec<u8>>, delay: Duration) {
        self.state.lock().unwrap().replies.insert(
            path.to_owned(),
            Reply {
                status,
                body: body.into(),
                delay,
            },
        );
    }

    /// The `Authorization` headers sent for requests whose path starts with `prefix`.
    pub fn authorizations(&self, prefix: &str) -> Vec<Option<String>> {
        self.state
            .lock()
            .unwrap()
            .requests
            .iter()
            .filter(|(path, _)| path.starts_with(prefix))
            .map(|(_, authorization)| authorization.clone())
            .collect()
    }
}

async fn answer(request: HttpRequest, state: web::Data<Mutex<State>>) -> HttpResponse {
    let path = request.path().to_owned();
    let full = match request.query_string() {
        "" => path.clone(),
        query => format!("{path}?{query}"),
    };
    let authorization = request
        .headers()
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let reply = {
        let mut state = state.lock().unwrap();
        state.requests.push((full.clone(), authorization));
        state
            .replies
            .get(&full)
            .or_else(|| state.replies.get(&path))
            .cloned()
    };
    let Some(reply) = reply else {
        return HttpResponse::NotFound().json(serde_json::json!({"message": "Not Found"}));
    };
    tokio::time::sleep(reply.delay).await;
    HttpResponse::build(actix_web::http::StatusCode::from_u16(reply.status).unwrap())
        .body(reply.body)
}

/// A zip as GitHub and GitLab serve them: every file under one root folder.
pub fn zip_archive(root: &str, files: &[(&str, &str)]) -> Vec<u8> {
    let mut writer = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let options = zip::write::SimpleFileOptions::default();
    writer
        .add_directory(format!("{root}/"), options)
        .expect("zip directory");
    for (name, contents) in files {
        writer
            .start_file(format!("{root}/{name}"), options)
            .expect("zip entry");
        writer.write_all(contents.as_bytes()).expect("zip write");
    }
    writer.finish().expect("zip finish").into_inner()
}

/// A zip whose one entry climbs out of the archive.
pub fn zip_slip_archive() -> Vec<u8> {
    let mut writer = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let options = zip::write::SimpleFileOptions::default();
    writer.start_file("../evil.js", options).expect("zip entry");
    writer.write_all(b"evil").expect("zip write");
    writer.finish().expect("zip finish").into_inner()
}

/// The real npm tarball of PostHog's GeoIP plugin, version 0.0.7.
pub const GEOIP_TGZ: &[u8] =
    include_bytes!("../../../adapters/tests/data/posthog-geoip-plugin-0.0.7.tgz");

//! What `cargo xtask dev` shows a new user: a demo survey in the demo project, and a pretend
//! customer's site on a port of its own (another origin than Burrow's, as in real life) whose
//! page loads posthog-js from Burrow with PostHog's snippet, so the survey pops up there.

use std::sync::Arc;
use std::thread;

use anyhow::{Context as _, anyhow};
use serde_json::{Value, json};

use crate::api::Api;

/// The project `burrow admin bootstrap` makes for the demo user.
pub(crate) const DEMO_PROJECT: &str = "Demo Project";
/// The demo survey's name, which finds it again on the next run (names are unique per project).
pub(crate) const SURVEY_NAME: &str = "How do you like Acme Socks?";

/// The page, with `{{…}}` placeholders filled by [`Site::start`].
const PAGE: &str = include_str!("../demo/index.html");

/// The demo project and its running survey.
#[derive(Debug, Clone)]
pub(crate) struct Demo {
    pub(crate) project_id: i64,
    /// The project's public token, which the page's snippet initialises posthog-js with.
    pub(crate) token: String,
    pub(crate) survey_id: String,
}

/// Finds or makes the demo survey (a rating and an open question, shown to everyone) in the
/// demo project, through the API as any client would; a second run finds the first's survey and
/// makes sure it still runs.
pub(crate) fn seed(api: &Api) -> anyhow::Result<Demo> {
    let projects = api.get("/api/projects/")?;
    let projects = projects["results"]
        .as_array()
        .context("GET /api/projects/ listed no results")?;
    let project = projects
        .iter()
        .find(|project| project["name"] == DEMO_PROJECT)
        .or_else(|| projects.first())
        .context("the demo key reaches no project")?;
    let project_id = project["id"].as_i64().context("a project without an id")?;
    let token = project["api_token"]
        .as_str()
        .context("a project without an api_token")?
        .to_owned();
    let surveys = format!("/api/projects/{project_id}/surveys/");
    let found = api.get(&format!("{surveys}?search={}", query_value(SURVEY_NAME)))?;
    let existing = found["results"]
        .as_array()
        .and_then(|results| results.iter().find(|survey| survey["name"] == SURVEY_NAME));
    let survey = match existing {
        Some(survey) if survey["archived"] == true || !survey["end_date"].is_null() => api.patch(
            &format!("{surveys}{}/", id_of(survey)?),
            &json!({"archived": false, "end_date": null}),
        )?,
        Some(survey) => survey.clone(),
        None => api.post(&surveys, &demo_survey())?,
    };
    Ok(Demo {
        project_id,
        token,
        survey_id: id_of(&survey)?,
    })
}

fn id_of(survey: &Value) -> anyhow::Result<String> {
    survey["id"]
        .as_str()
        .map(str::to_owned)
        .context("a survey without an id")
}

/// A query-string value: the survey's name has spaces and a `?`.
fn query_value(text: &str) -> String {
    url::form_urlencoded::byte_serialize(text.as_bytes()).collect()
}

/// The demo survey: launched now, no conditions, so every visitor of the page sees it.
fn demo_survey() -> Value {
    json!({
        "name": SURVEY_NAME,
        "description": "Made by `cargo xtask dev` for its demo page.",
        "type": "popover",
        "questions": [
            {
                "type": "rating",
                "question": "How likely are you to recommend Acme Socks to a friend?",
                "scale": 10,
                "display": "number",
                "lowerBoundLabel": "Not likely",
                "upperBoundLabel": "Very likely"
            },
            {
                "type": "open",
                "question": "What would make your feet happier?"
            }
        ],
        "start_date": chrono::Utc::now().to_rfc3339(),
    })
}

/// The pretend customer's site, serving its one page until dropped.
pub(crate) struct Site {
    server: Arc<tiny_http::Server>,
    url: String,
}

impl Site {
    /// Serves the demo page at `bind`, its snippet pointing posthog-js at `burrow` (Burrow's
    /// origin as a browser reaches it) with the demo project's token.
    pub(crate) fn start(bind: &str, burrow: &str, demo: &Demo) -> anyhow::Result<Self> {
        let server = tiny_http::Server::http(bind)
            .map_err(|error| anyhow!("serving the demo page at {bind}: {error}"))?;
        let address = server
            .server_addr()
            .to_ip()
            .context("the demo site listens on no IP address")?;
        let url = format!("http://{}/", browser_address(&address.to_string()));
        let page = PAGE
            .replace("{{TOKEN}}", &script_string(&demo.token))
            .replace("{{API_HOST}}", &script_string(burrow))
            .replace("{{SITE_ORIGIN}}", &html_text(url.trim_end_matches('/')))
            .replace("{{BURROW_ORIGIN}}", &html_text(burrow));
        let server = Arc::new(server);
        let serving = Arc::clone(&server);
        thread::Builder::new()
            .name("demo-site".into())
            .spawn(move || serve(&serving, &page))?;
        Ok(Self { server, url })
    }

    /// The page's URL, for the user to open.
    pub(crate) fn url(&self) -> &str {
        &self.url
    }
}

impl Drop for Site {
    fn drop(&mut self) {
        self.server.unblock();
    }
}

/// Answers `/` with the page, anything else 404, until the server is unblocked.
fn serve(server: &tiny_http::Server, page: &str) {
    for request in server.incoming_requests() {
        let path = request.url().split('?').next().unwrap_or_default();
        let response = if path == "/" || path == "/index.html" {
            tiny_http::Response::from_string(page).with_header(
                "Content-Type: text/html; charset=utf-8"
                    .parse::<tiny_http::Header>()
                    .expect("a valid header"),
            )
        } else {
            tiny_http::Response::from_string("Not found").with_status_code(404)
        };
        // A visitor who went away is no concern of the site's.
        let _ = request.respond(response);
    }
}

/// `host:port` as a browser on this machine reaches it: a wildcard bind is reached at loopback.
pub(crate) fn browser_address(bind: &str) -> String {
    match bind.rsplit_once(':') {
        Some(("0.0.0.0" | "[::]", port)) => format!("127.0.0.1:{port}"),
        _ => bind.to_owned(),
    }
}

/// A JSON string literal that is safe inside a `<script>` element.
fn script_string(text: &str) -> String {
    Value::from(text).to_string().replace('<', "\\u003c")
}

fn html_text(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Whether `url` answers 200 (the console, say, which a build may not have yet).
pub(crate) fn answers_ok(url: &str) -> bool {
    ureq::get(url)
        .call()
        .is_ok_and(|response| response.status() == 200)
}

//! `cargo xtask dev [--no-demo]`: installs what is missing, ensures a PostgreSQL, migrates, makes
//! a key for the demo user, serves Burrow (with posthog-js's bundles from the npm registry as
//! `BURROW_STATIC_DIR`) and, unless `--no-demo`, seeds the demo survey and serves the demo site
//! (`demo.rs`); then prints where to look, the demo page first.

use std::env;
use std::path::{Path, PathBuf};

use anyhow::{Context as _, bail};

use crate::api::Api;
use crate::demo::{self, Demo, Site};
use crate::prerequisites::{self, Task};
use crate::server::Server;
use crate::{admin, browser, migrate};

/// The demo user, whom `dev` makes a key for.
const DEMO_EMAIL: &str = "demo@burrow.local";
/// Where Burrow listens unless `BURROW_BIND` says otherwise.
const DEFAULT_BIND: &str = "127.0.0.1:8000";
/// Where the demo site listens unless `BURROW_DEMO_BIND` says otherwise.
const DEFAULT_DEMO_BIND: &str = "127.0.0.1:8001";

pub(crate) fn run(args: &[String]) -> anyhow::Result<()> {
    let with_demo = match args {
        [] => true,
        [flag] if flag == "--no-demo" => false,
        _ => bail!("usage: cargo xtask dev [--no-demo]"),
    };
    prerequisites::ensure(Task::Dev)?;
    let (database_url, burrow) = migrate()?;
    let key = demo_key(&burrow, &database_url)?;
    let settings = Settings {
        burrow,
        database_url,
        bind: env::var("BURROW_BIND").unwrap_or_else(|_| DEFAULT_BIND.into()),
        demo_bind: with_demo
            .then(|| env::var("BURROW_DEMO_BIND").unwrap_or_else(|_| DEFAULT_DEMO_BIND.into())),
        // posthog-js's bundles for `/static/...`, from the npm registry when missing, unless the
        // caller names a directory of their own.
        static_dir: match env::var_os("BURROW_STATIC_DIR") {
            Some(dir) => PathBuf::from(dir),
            None => browser::static_dir()?,
        },
        key,
    };
    let session = Session::start(&settings, None)?;
    eprintln!();
    eprintln!("{}", session.banner());
    // The key alone on stdout, for scripts.
    println!("{}", settings.key);
    session.server.wait()
}

/// What the server part of `dev` runs with.
pub(crate) struct Settings {
    pub(crate) burrow: PathBuf,
    pub(crate) database_url: String,
    pub(crate) bind: String,
    /// Where the demo site listens; `None`: no demo.
    pub(crate) demo_bind: Option<String>,
    pub(crate) static_dir: PathBuf,
    /// The demo user's personal API key.
    pub(crate) key: String,
}

/// Burrow serving, with the demo seeded and its site up (unless asked not to).
pub(crate) struct Session {
    pub(crate) server: Server,
    /// Burrow's origin as a browser on this machine reaches it.
    pub(crate) origin: String,
    pub(crate) demo: Option<(Demo, Site)>,
    key: String,
}

impl Session {
    /// Starts Burrow at `settings.bind` (its output to `log`, or the terminal), then seeds the
    /// demo and serves its site.
    pub(crate) fn start(settings: &Settings, log: Option<&Path>) -> anyhow::Result<Self> {
        let server = Server::start_with(
            &settings.burrow,
            &settings.database_url,
            &settings.bind,
            log,
            |command| {
                command.env("BURROW_STATIC_DIR", &settings.static_dir);
                // Request logs would scroll the banner away; warnings and errors still show.
                if env::var_os("RUST_LOG").is_none() {
                    command.env("RUST_LOG", "warn");
                }
            },
        )?;
        let origin = format!("http://{}", demo::browser_address(&settings.bind));
        let api = Api::new(origin.clone(), settings.key.clone());
        let demo = match &settings.demo_bind {
            Some(bind) => {
                let demo = demo::seed(&api).context("seeding the demo survey")?;
                let site = Site::start(bind, &origin, &demo)?;
                Some((demo, site))
            }
            None => None,
        };
        Ok(Self {
            server,
            origin,
            demo,
            key: settings.key.clone(),
        })
    }

    /// What to open and try, the demo page first.
    pub(crate) fn banner(&self) -> String {
        let origin = &self.origin;
        let key = &self.key;
        let mut lines = Vec::new();
        if let Some((demo, site)) = &self.demo {
            lines.push(format!(
                "Open {} — a pretend customer's site showing Burrow's demo survey; answer it.",
                site.url()
            ));
            lines.push(format!(
                "  Its answers: curl -H \"Authorization: Bearer {key}\" \
                 {origin}/api/projects/{}/surveys/{}/responses/",
                demo.project_id, demo.survey_id
            ));
        }
        let console = format!("{origin}/app/");
        if demo::answers_ok(&console) {
            lines.push(format!(
                "Console (survey results; sign in with the key below): {console}"
            ));
        }
        lines.push(format!(
            "API documentation (Swagger UI): {origin}/api/schema/swagger-ui/"
        ));
        lines.push(format!(
            "Demo user {DEMO_EMAIL}; personal API key (new each run): {key}"
        ));
        lines.push(format!(
            "Try: curl -H \"Authorization: Bearer {key}\" {origin}/api/projects/"
        ));
        lines.push("(Burrow logs warnings here; RUST_LOG=info shows every request.)".to_owned());
        lines.join("\n")
    }
}

/// A fresh key for the demo user, bootstrapping the demo tenant the first time.
pub(crate) fn demo_key(burrow: &Path, database_url: &str) -> anyhow::Result<String> {
    let made: serde_json::Value = match admin(
        burrow,
        database_url,
        &["create-key", "--email", DEMO_EMAIL, "--label", "xtask dev"],
    ) {
        Ok(made) => made,
        Err(_) => admin(
            burrow,
            database_url,
            &[
                "bootstrap",
                "--email",
                DEMO_EMAIL,
                "--first-name",
                "Demo",
                "--organization",
                "Demo Organization",
                "--project",
                demo::DEMO_PROJECT,
            ],
        )
        .context("bootstrapping the demo tenant")?,
    };
    made["personal_api_key"]
        .as_str()
        .map(str::to_owned)
        .context("burrow printed no personal_api_key")
}

#[cfg(test)]
mod tests;

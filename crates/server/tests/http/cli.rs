//! The `burrow` binary's commands, run as a script would run them.

use std::process::{Command, Output};

use serde_json::{Value, json};

use crate::helpers::{eventually, parts, spawn_app};

fn burrow(database_url: &str, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_burrow"))
        .args(args)
        .env("DATABASE_URL", database_url)
        .env("RUST_LOG", "off")
        .output()
        .expect("running burrow")
}

fn json_of(output: &Output) -> Value {
    assert!(
        output.status.success(),
        "burrow failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).expect("stdout is one JSON object")
}

#[tokio::test]
async fn bootstrap_prints_a_working_key_and_its_tenant() {
    let app = spawn_app().await;
    let url = &app.database.url;
    let boot = json_of(&burrow(
        url,
        &[
            "admin",
            "bootstrap",
            "--email",
            "ops@example.com",
            "--organization",
            "Ops",
            "--project",
            "Main",
            "--first-name",
            "Olga",
        ],
    ));
    for field in [
        "organization_id",
        "project_id",
        "project_api_token",
        "personal_api_key",
    ] {
        assert!(!boot[field].is_null(), "{field} missing in {boot}");
    }
    assert_eq!(boot["user"]["email"], "ops@example.com");
    assert!(
        boot["user"]["id"].is_i64()
            && boot["user"]["uuid"].is_string()
            && boot["user"]["distinct_id"].is_string()
    );
    let key = boot["personal_api_key"].as_str().unwrap();
    assert!(key.starts_with("phx_") && key.len() >= 44);

    let (status, projects) = parts(app.get("/api/projects/", key).await).await;
    assert_eq!(status, 200);
    assert_eq!(projects["results"][0]["id"], boot["project_id"]);
    assert_eq!(
        projects["results"][0]["api_token"],
        boot["project_api_token"]
    );

    // The same email again: the user is reused and owns the second organization too.
    let again = json_of(&burrow(
        url,
        &[
            "admin",
            "bootstrap",
            "--email",
            "OPS@example.com",
            "--organization",
            "Ops 2",
            "--project",
            "Other",
        ],
    ));
    assert_eq!(again["user"]["id"], boot["user"]["id"]);
    let (_, orgs) = parts(app.get("/api/organizations/", key).await).await;
    assert_eq!(orgs["count"], 2);
}

#[tokio::test]
async fn create_key_honours_scopes_and_restrictions() {
    let app = spawn_app().await;
    let url = &app.database.url;
    let boot = json_of(&burrow(
        url,
        &[
            "admin",
            "bootstrap",
            "--email",
            "ops@example.com",
            "--organization",
            "Ops",
            "--project",
            "Main",
        ],
    ));
    let project = boot["project_id"].to_string();
    let read_only = json_of(&burrow(
        url,
        &[
            "admin",
            "create-key",
            "--email",
            "ops@example.com",
            "--scopes",
            "survey:read,project:read",
            "--scoped-teams",
            &project,
        ],
    ));
    let key = read_only["personal_api_key"].as_str().unwrap();
    assert_eq!(
        app.get(&format!("/api/projects/{project}/"), key)
            .await
            .status(),
        200
    );
    let (status, body) = parts(app.get("/api/organizations/", key).await).await;
    assert_eq!(
        (status, body["detail"].clone()),
        (
            403,
            json!("API key missing required scope 'organization:read'")
        )
    );

    let bad = burrow(
        url,
        &[
            "admin",
            "create-key",
            "--email",
            "ops@example.com",
            "--scopes",
            "surveys:read",
        ],
    );
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("unknown object 'surveys'"));
}

#[tokio::test]
async fn create_project_add_member_and_plugin_levels_take_effect() {
    let app = spawn_app().await;
    let url = &app.database.url;
    let owner = json_of(&burrow(
        url,
        &[
            "admin",
            "bootstrap",
            "--email",
            "owner@example.com",
            "--organization",
            "Shared",
            "--project",
            "Main",
        ],
    ));
    let guest = json_of(&burrow(
        url,
        &[
            "admin",
            "bootstrap",
            "--email",
            "guest@example.com",
            "--organization",
            "Guest",
            "--project",
            "Guest",
        ],
    ));
    let org = owner["organization_id"].as_str().unwrap();
    let guest_key = guest["personal_api_key"].as_str().unwrap();

    let created = json_of(&burrow(
        url,
        &[
            "admin",
            "create-project",
            "--organization",
            org,
            "--name",
            "Extra",
        ],
    ));
    assert!(created["project_id"].is_i64());
    assert!(
        created["project_api_token"]
            .as_str()
            .unwrap()
            .starts_with("phc_")
    );
    let extra = format!("/api/projects/{}/", created["project_id"]);
    assert_eq!(app.get(&extra, guest_key).await.status(), 403);

    json_of(&burrow(
        url,
        &[
            "admin",
            "add-member",
            "--email",
            "guest@example.com",
            "--organization",
            org,
            "--level",
            "admin",
        ],
    ));
    assert_eq!(app.get(&extra, guest_key).await.status(), 200);
    let (_, shared) = parts(
        app.get(&format!("/api/organizations/{org}/"), guest_key)
            .await,
    )
    .await;
    assert_eq!(shared["membership_level"], 8);

    json_of(&burrow(
        url,
        &[
            "admin",
            "set-plugins-access-level",
            "--organization",
            org,
            "--level",
            "install",
        ],
    ));
    let organization = format!("/api/organizations/{org}/");
    eventually("admin set-plugins-access-level", || async {
        parts(app.get(&organization, guest_key).await).await.1["plugins_access_level"] == 6
    })
    .await;
}

#[tokio::test]
async fn deactivate_user_locks_out_their_keys() {
    let app = spawn_app().await;
    let url = &app.database.url;
    let boot = json_of(&burrow(
        url,
        &[
            "admin",
            "bootstrap",
            "--email",
            "gone@example.com",
            "--organization",
            "Gone",
            "--project",
            "Gone",
        ],
    ));
    let key = boot["personal_api_key"].as_str().unwrap();
    assert_eq!(app.get("/api/projects/", key).await.status(), 200);
    json_of(&burrow(
        url,
        &["admin", "deactivate-user", "--email", "gone@example.com"],
    ));
    eventually("admin deactivate-user", || async {
        app.get("/api/projects/", key).await.status() == 401
    })
    .await;
}

#[tokio::test]
async fn refused_commands_exit_non_zero_on_stderr_and_write_nothing() {
    let app = spawn_app().await;
    let url = &app.database.url;
    let unknown = burrow(
        url,
        &["admin", "deactivate-user", "--email", "nobody@example.com"],
    );
    assert!(!unknown.status.success());
    assert!(unknown.stdout.is_empty());
    assert!(
        String::from_utf8_lossy(&unknown.stderr)
            .contains("no user with email 'nobody@example.com'")
    );

    let bad_email = burrow(
        url,
        &[
            "admin",
            "bootstrap",
            "--email",
            "not-an-email",
            "--organization",
            "X",
            "--project",
            "Y",
        ],
    );
    assert!(!bad_email.status.success());
    let missing_org = burrow(
        url,
        &[
            "admin",
            "create-project",
            "--organization",
            "00000000-0000-0000-0000-000000000001",
            "--name",
            "X",
        ],
    );
    assert!(!missing_org.status.success());
    assert!(String::from_utf8_lossy(&missing_org.stderr).contains("no organization"));

    // Nothing was created by the refused commands: a fresh bootstrap is the only tenant.
    let boot = json_of(&burrow(
        url,
        &[
            "admin",
            "bootstrap",
            "--email",
            "ops@example.com",
            "--organization",
            "Ops",
            "--project",
            "Main",
        ],
    ));
    let (_, orgs) = parts(
        app.get(
            "/api/organizations/",
            boot["personal_api_key"].as_str().unwrap(),
        )
        .await,
    )
    .await;
    assert_eq!(orgs["count"], 1);
}

#[tokio::test]
async fn migrate_is_idempotent() {
    let app = spawn_app().await;
    for _ in 0..2 {
        let output = burrow(&app.database.url, &["migrate"]);
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
}

#[tokio::test]
async fn sigterm_stops_accepting_and_lets_an_in_flight_request_finish() {
    use std::io::{Read as _, Write as _};
    use std::net::{TcpListener, TcpStream};
    use std::time::{Duration, Instant};

    let database = adapters::testing::TestDatabase::create().await;
    let url = &database.url;
    let boot = json_of(&burrow(
        url,
        &[
            "admin",
            "bootstrap",
            "--email",
            "ops@example.com",
            "--organization",
            "Ops",
            "--project",
            "Main",
        ],
    ));
    let key = boot["personal_api_key"].as_str().unwrap();
    let address = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let mut server = Command::new(env!("CARGO_BIN_EXE_burrow"))
        .arg("serve")
        .env("DATABASE_URL", url)
        .env("BURROW_BIND", address.to_string())
        .env("RUST_LOG", "off")
        .spawn()
        .expect("starting burrow serve");
    let deadline = Instant::now() + Duration::from_secs(20);
    while TcpStream::connect(address).is_err() {
        assert!(Instant::now() < deadline, "burrow serve never listened");
        std::thread::sleep(Duration::from_millis(50));
    }

    // Headers now, and half the body once Burrow has read them (its `100 Continue` says so: a
    // request still in the kernel's accept queue is not in flight, and closing the listener
    // rightly resets it); the rest after SIGTERM.
    let body = br#"{"name": "In flight", "type": "popover"}"#;
    let (first, rest) = body.split_at(body.len() / 2);
    let mut stream = TcpStream::connect(address).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    write!(
        stream,
        "POST /api/projects/{}/surveys/ HTTP/1.1\r\nHost: test\r\nAuthorization: Bearer {key}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n",
        boot["project_id"],
        body.len()
    )
    .unwrap();
    let mut interim = Vec::new();
    while !interim.ends_with(b"\r\n\r\n") {
        let mut byte = [0];
        stream.read_exact(&mut byte).unwrap();
        interim.push(byte[0]);
    }
    assert!(
        interim.starts_with(b"HTTP/1.1 100 Continue"),
        "{}",
        String::from_utf8_lossy(&interim)
    );
    stream.write_all(first).unwrap();
    std::thread::sleep(Duration::from_millis(100));
    let terminated = Command::new("kill")
        .args(["-TERM", &server.id().to_string()])
        .status()
        .unwrap();
    assert!(terminated.success());

    let deadline = Instant::now() + Duration::from_secs(10);
    while TcpStream::connect(address).is_ok() {
        assert!(
            Instant::now() < deadline,
            "still accepting connections after SIGTERM"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    stream.write_all(rest).unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    assert!(
        response.starts_with("HTTP/1.1 201"),
        "in-flight request did not finish: {response}"
    );
    assert!(response.contains("\"name\":\"In flight\""));
    let status = server.wait().unwrap();
    assert!(status.success(), "burrow exited with {status}");
}

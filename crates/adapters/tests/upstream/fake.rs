//! A loopback HTTP/1.1 responder standing in for GitHub, GitLab, npm and the repository host:
//! canned replies by request target, and a record of every request with its `Authorization`.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use url::Url;

/// What the fake received.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    /// The path and query, exactly as sent (percent-encoding kept).
    pub target: String,
    pub authorization: Option<String>,
}

/// A canned answer.
#[derive(Debug, Clone)]
pub struct Reply {
    status: u16,
    body: Vec<u8>,
    delay: Duration,
    content_length: bool,
    location: Option<String>,
}

impl Reply {
    pub fn json(value: Value) -> Self {
        Self::status(200, value)
    }

    pub fn status(status: u16, value: Value) -> Self {
        Self {
            status,
            body: value.to_string().into_bytes(),
            delay: Duration::ZERO,
            content_length: true,
            location: None,
        }
    }

    pub fn bytes(body: Vec<u8>) -> Self {
        Self {
            status: 200,
            body,
            delay: Duration::ZERO,
            content_length: true,
            location: None,
        }
    }

    /// A `302 Found` sending the client to `location`.
    pub fn redirect(location: &Url) -> Self {
        Self {
            status: 302,
            location: Some(location.to_string()),
            ..Self::bytes(Vec::new())
        }
    }

    /// Answers only after `delay`.
    pub fn delayed(self, delay: Duration) -> Self {
        Self { delay, ..self }
    }

    /// Sends no `Content-Length`: the body ends when the connection closes.
    pub fn without_length(self) -> Self {
        Self {
            content_length: false,
            ..self
        }
    }
}

#[derive(Default)]
struct State {
    routes: HashMap<String, Reply>,
    requests: Vec<Request>,
}

/// The running fake; it stops with the test's runtime.
pub struct Fake {
    url: Url,
    state: Arc<Mutex<State>>,
}

impl Fake {
    pub async fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind loopback");
        let url = Url::parse(&format!("http://{}", listener.local_addr().unwrap())).unwrap();
        let state = Arc::new(Mutex::new(State::default()));
        let shared = Arc::clone(&state);
        tokio::spawn(async move {
            while let Ok((socket, _)) = listener.accept().await {
                tokio::spawn(answer(socket, Arc::clone(&shared)));
            }
        });
        Self { url, state }
    }

    /// `http://127.0.0.1:{port}/`.
    pub fn url(&self) -> Url {
        self.url.clone()
    }

    /// `self.url()` joined with `path`.
    pub fn url_at(&self, path: &str) -> Url {
        self.url.join(path).unwrap()
    }

    /// Answers `target` (path and query, as sent) with `reply` from now on.
    pub fn route(&self, target: &str, reply: Reply) {
        let mut state = self.state.lock().unwrap();
        state.routes.insert(target.to_owned(), reply);
    }

    pub fn requests(&self) -> Vec<Request> {
        self.state.lock().unwrap().requests.clone()
    }

    /// How many requests asked for `target`.
    pub fn hits(&self, target: &str) -> usize {
        self.requests()
            .iter()
            .filter(|request| request.target == target)
            .count()
    }
}

async fn answer(mut socket: TcpStream, state: Arc<Mutex<State>>) -> std::io::Result<()> {
    let mut head = Vec::new();
    let mut buffer = [0u8; 4096];
    while !head.windows(4).any(|window| window == b"\r\n\r\n") {
        let read = socket.read(&mut buffer).await?;
        if read == 0 {
            return Ok(());
        }
        head.extend_from_slice(&buffer[..read]);
    }
    let head = String::from_utf8_lossy(&head).into_owned();
    let mut lines = head.split("\r\n");
    let target = lines
        .next()
        .and_then(|line| line.split(' ').nth(1))
        .unwrap_or_default()
        .to_owned();
    let authorization = lines.find_map(|line| {
        let (name, value) = line.split_once(':')?;
        name.eq_ignore_ascii_case("authorization")
            .then(|| value.trim().to_owned())
    });
    let reply = {
        let mut state = state.lock().unwrap();
        state.requests.push(Request {
            target: target.clone(),
            authorization,
        });
        state.routes.get(&target).cloned()
    }
    .unwrap_or_else(|| Reply::status(404, serde_json::json!({"message": "Not Found"})));
    tokio::time::sleep(reply.delay).await;
    let mut response = format!("HTTP/1.1 {} Fake\r\nConnection: close\r\n", reply.status);
    if let Some(location) = &reply.location {
        response.push_str(&format!("Location: {location}\r\n"));
    }
    if reply.content_length {
        response.push_str(&format!("Content-Length: {}\r\n", reply.body.len()));
    }
    response.push_str("\r\n");
    socket.write_all(response.as_bytes()).await?;
    socket.write_all(&reply.body).await?;
    socket.shutdown().await
}

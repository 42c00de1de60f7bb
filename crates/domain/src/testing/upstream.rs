//! Fakes of the plugin upstream and source analysis ports: canned archives and a word scan, so
//! the plugin use cases can be tested without a network or a JavaScript parser.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use serde_json::Value;

use crate::plugin::{
    Capabilities, PluginArchive, PluginFiles, PluginUpstream, PluginUrl, SourceAnalyzer,
    UpstreamError,
};

#[derive(Debug, Default)]
struct Canned {
    latest: Option<String>,
    archives: BTreeMap<String, PluginFiles>,
    failure: Option<UpstreamError>,
    latest_asked: usize,
}

/// An upstream serving one plugin: its newest tag and its files at each tag, or one failure
/// for every call. Every URL gets the same answers.
#[derive(Debug, Clone, Default)]
pub struct CannedUpstream {
    canned: Arc<Mutex<Canned>>,
}

impl CannedUpstream {
    pub fn new() -> Self {
        Self::default()
    }

    /// Makes `tag` the newest version, with these files.
    pub fn publish(&self, tag: &str, files: &[(&str, &str)]) {
        let mut canned = self.canned.lock().expect("fake upstream poisoned");
        canned.latest = Some(tag.to_owned());
        canned.archives.insert(
            tag.to_owned(),
            files
                .iter()
                .map(|(name, text)| ((*name).to_owned(), (*text).to_owned()))
                .collect(),
        );
    }

    /// Every later call fails with `error`.
    pub fn fail_with(&self, error: UpstreamError) {
        self.canned.lock().expect("fake upstream poisoned").failure = Some(error);
    }

    /// How often the newest tag was asked for (pinned URLs should not ask).
    pub fn latest_asked(&self) -> usize {
        self.canned
            .lock()
            .expect("fake upstream poisoned")
            .latest_asked
    }

    fn check(&self) -> Result<std::sync::MutexGuard<'_, Canned>, UpstreamError> {
        let canned = self.canned.lock().expect("fake upstream poisoned");
        match &canned.failure {
            Some(error) => Err(error.clone()),
            None => Ok(canned),
        }
    }
}

#[async_trait]
impl PluginUpstream for CannedUpstream {
    async fn latest_tag(&self, _url: &PluginUrl) -> Result<String, UpstreamError> {
        let mut canned = self.check()?;
        canned.latest_asked += 1;
        canned
            .latest
            .clone()
            .ok_or_else(|| UpstreamError::Unavailable("nothing published".into()))
    }

    async fn download(&self, _url: &PluginUrl, tag: &str) -> Result<PluginArchive, UpstreamError> {
        let canned = self.check()?;
        let files = canned
            .archives
            .get(tag)
            .cloned()
            .ok_or_else(|| UpstreamError::Unavailable(format!("no archive at {tag}")))?;
        Ok(PluginArchive {
            bytes: tag.as_bytes().to_vec(),
            files,
        })
    }

    async fn local(&self, _path: &str) -> Result<PluginFiles, UpstreamError> {
        let canned = self.check()?;
        canned
            .latest
            .as_ref()
            .and_then(|tag| canned.archives.get(tag))
            .cloned()
            .ok_or_else(|| UpstreamError::InvalidArchive("no local plugin".into()))
    }

    async fn repository(&self) -> Result<Value, UpstreamError> {
        self.check().map(|_| Value::Array(vec![]))
    }
}

/// Reads capabilities by looking for PostHog's hook names as words; a source containing
/// `syntax error` cannot be read.
#[derive(Debug, Clone, Copy, Default)]
pub struct WordAnalyzer;

impl SourceAnalyzer for WordAnalyzer {
    fn capabilities(&self, _filename: &str, source: &str) -> Result<Capabilities, String> {
        if source.contains("syntax error") {
            return Err("syntax error".into());
        }
        let found = |names: &[&str]| {
            names
                .iter()
                .filter(|name| source.contains(**name))
                .map(|name| (*name).to_owned())
                .collect()
        };
        Ok(Capabilities {
            methods: found(&["onEvent", "processEvent", "setupPlugin"]),
            jobs: Vec::new(),
            scheduled_tasks: found(&["runEveryDay", "runEveryHour", "runEveryMinute"]),
        })
    }
}

//! The port of stored persons, as `/flags` reads them: their properties, the properties of the
//! groups a request names, the hash keys that keep their variants across identify, and which
//! static cohorts list them. Properties are written by capture, together with the events that
//! `$set` them (`SurveyResponseRepository::record`).

use super::{Profile, ProfileQuery};
use crate::error::Unexpected;
use crate::tenancy::ProjectId;
use async_trait::async_trait;

#[async_trait]
pub trait PersonRepository: Send + Sync {
    /// What is stored of the person and the groups `query` names, in one read: empty
    /// properties for a person or group never seen, no overrides and no static cohorts unless
    /// asked for.
    async fn profile(
        &self,
        project: ProjectId,
        query: &ProfileQuery<'_>,
    ) -> Result<Profile, Unexpected>;

    /// Experience continuity after identify: for each of `flag_keys` the person `distinct_id`
    /// has no hash key override of yet, keeps `hash_key` (the anonymous id they had) as theirs.
    /// An override, once written, is never replaced.
    async fn keep_hash_keys(
        &self,
        project: ProjectId,
        distinct_id: &str,
        hash_key: &str,
        flag_keys: &[&str],
    ) -> Result<(), Unexpected>;
}

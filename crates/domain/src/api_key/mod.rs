//! Personal API keys: how they are minted, hashed for storage, masked for display, and scoped.

mod port;

pub use port::{ApiKeyRepository, ApiKeyTransaction};

use chrono::{DateTime, Utc};
use sha2::{Digest, Sha256};
use uuid::Uuid;

use crate::scope::ScopeGrants;
use crate::tenancy::{OrganizationId, ProjectId, UserId, random_alphanumeric};

const KEY_PREFIX: &str = "phx_";
const KEY_RANDOM_CHARS: usize = 47;
/// Prefix of OAuth access tokens, which are never personal API keys.
const OAUTH_PREFIX: &str = "pha_";
/// `last_used_at` is refreshed at most this often, so authentication rarely writes.
pub const LAST_USED_REFRESH: chrono::TimeDelta = chrono::TimeDelta::hours(1);

/// A freshly minted key in clear text. It is shown once and never stored.
#[derive(Clone, PartialEq, Eq)]
pub struct PlainApiKey(String);

impl std::fmt::Debug for PlainApiKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PlainApiKey({})", self.mask())
    }
}

impl PlainApiKey {
    /// Mints a new `phx_` key with 47 random alphanumeric characters.
    pub fn generate() -> Self {
        Self(format!(
            "{KEY_PREFIX}{}",
            random_alphanumeric(KEY_RANDOM_CHARS)
        ))
    }

    /// Wraps a key presented by a client.
    pub fn presented(value: impl Into<String>) -> Self {
        Self(value.into())
    }

    pub fn expose(&self) -> &str {
        &self.0
    }

    /// The storage form: `sha256$` + hex digest, as PostHog stores it.
    pub fn secure_value(&self) -> String {
        format!("sha256${}", hex::encode(Sha256::digest(self.0.as_bytes())))
    }

    /// The display form, `phx_...abcd`.
    pub fn mask(&self) -> String {
        let tail: String = self
            .0
            .chars()
            .rev()
            .take(4)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
        let head: String = self.0.chars().take(KEY_PREFIX.chars().count()).collect();
        format!("{head}...{tail}")
    }
}

/// Whether a bearer token can be a personal API key (OAuth tokens are skipped).
pub fn is_personal_key_candidate(token: &str) -> bool {
    !token.is_empty() && !token.starts_with(OAUTH_PREFIX)
}

/// A stored key with what it may touch.
#[derive(Debug, Clone, PartialEq)]
pub struct ApiKey {
    pub id: Uuid,
    pub user_id: UserId,
    pub label: String,
    pub mask: String,
    pub scopes: ScopeGrants,
    /// `None` means every project the user can reach.
    pub scoped_teams: Option<Vec<ProjectId>>,
    /// `None` means every organization the user belongs to.
    pub scoped_organizations: Option<Vec<OrganizationId>>,
    pub created_at: DateTime<Utc>,
    pub last_used_at: Option<DateTime<Utc>>,
}

impl ApiKey {
    /// Whether `last_used_at` is stale enough to be written again at `now`.
    pub fn needs_last_used_refresh(&self, now: DateTime<Utc>) -> bool {
        self.last_used_at
            .is_none_or(|last| now - last >= LAST_USED_REFRESH)
    }

    /// Whether the key's project restriction (if any) lets it reach `project`.
    pub fn reaches_project(&self, project: ProjectId) -> bool {
        self.scoped_teams
            .as_ref()
            .is_none_or(|teams| teams.is_empty() || teams.contains(&project))
    }

    /// Whether the key's organization restriction (if any) lets it reach `organization`.
    pub fn reaches_organization(&self, organization: OrganizationId) -> bool {
        self.scoped_organizations
            .as_ref()
            .is_none_or(|orgs| orgs.is_empty() || orgs.contains(&organization))
    }
}

/// What a new key is to be stored with (its owner is given alongside).
#[derive(Debug, Clone)]
pub struct NewApiKey {
    pub id: Uuid,
    pub label: String,
    pub secure_value: String,
    pub mask: String,
    pub scopes: ScopeGrants,
    pub scoped_teams: Option<Vec<ProjectId>>,
    pub scoped_organizations: Option<Vec<OrganizationId>>,
}

impl NewApiKey {
    /// Mints a key; returns the clear text (to show once) and what to store.
    pub fn mint(
        label: impl Into<String>,
        scopes: ScopeGrants,
        scoped_teams: Option<Vec<ProjectId>>,
        scoped_organizations: Option<Vec<OrganizationId>>,
    ) -> (PlainApiKey, Self) {
        let plain = PlainApiKey::generate();
        let new = Self {
            id: Uuid::new_v4(),
            label: label.into(),
            secure_value: plain.secure_value(),
            mask: plain.mask(),
            scopes,
            scoped_teams,
            scoped_organizations,
        };
        (plain, new)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_keys_are_prefixed_long_and_distinct() {
        let a = PlainApiKey::generate();
        let b = PlainApiKey::generate();
        assert!(a.expose().starts_with("phx_"));
        assert!(a.expose().len() >= 44);
        assert_ne!(a, b);
    }

    #[test]
    fn secure_value_is_the_sha256_hex_of_the_key() {
        let key = PlainApiKey::presented("phx_abc");
        assert_eq!(
            key.secure_value(),
            "sha256$5e26f9f4aa7f98042e671fbaa15196a12513a2635898590230de0c25e658279e"
        );
    }

    #[test]
    fn mask_shows_prefix_and_last_four() {
        let key = PlainApiKey::presented("phx_0123456789abcdWXYZ");
        assert_eq!(key.mask(), "phx_...WXYZ");
        assert!(!format!("{key:?}").contains("0123456789"));
    }

    #[test]
    fn mask_counts_characters_not_bytes() {
        for raw in ["ph€x_secret", "ééé", "€", ""] {
            let key = PlainApiKey::presented(raw);
            assert!(format!("{key:?}").starts_with("PlainApiKey("));
        }
        assert_eq!(PlainApiKey::presented("ph€x_abcdef").mask(), "ph€x...cdef");
    }

    #[test]
    fn oauth_tokens_are_not_personal_keys() {
        assert!(!is_personal_key_candidate("pha_abc"));
        assert!(is_personal_key_candidate("phx_abc"));
    }
}

//! The port of stored personal API keys.

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::{ApiKey, NewApiKey};
use crate::error::Unexpected;
use crate::tenancy::{TenancyTransaction, User, UserId};

/// Stored personal API keys.
#[async_trait]
pub trait ApiKeyRepository: Send + Sync {
    /// The key whose `secure_value` matches, with its owner, when the owner is active.
    async fn find_active(&self, secure_value: &str) -> Result<Option<(ApiKey, User)>, Unexpected>;

    /// Sets `last_used_at` of the key to `at`.
    async fn touch(&self, key_id: Uuid, at: DateTime<Utc>) -> Result<(), Unexpected>;

    /// Stores a new key for `owner`.
    async fn create(&self, owner: UserId, key: NewApiKey) -> Result<(), Unexpected>;

    /// Opens a transaction in which a tenant and its first key are made together.
    async fn begin(&self) -> Result<Box<dyn ApiKeyTransaction>, Unexpected>;
}

/// A tenancy transaction that also stores keys, so a tenant and its first key are made at
/// once or not at all.
#[async_trait]
pub trait ApiKeyTransaction: TenancyTransaction {
    /// Stores a new key for `owner`.
    ///
    /// # Errors
    /// `Unexpected` when storage fails (a taken id or hash included).
    async fn insert_key(&mut self, owner: UserId, key: NewApiKey) -> Result<(), Unexpected>;
}

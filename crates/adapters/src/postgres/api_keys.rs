//! `ApiKeyRepository` over the `personal_api_keys` table.

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use domain::Unexpected;
use domain::api_key::{ApiKey, ApiKeyRepository, ApiKeyTransaction, NewApiKey};
use domain::tenancy::{User, UserId};
use uuid::Uuid;

use crate::postgres::database::Connection;
use crate::postgres::errors::StorageContext;
use crate::postgres::rows::{ApiKeyRow, UserRow};
use crate::postgres::schema::{personal_api_keys, users};
use crate::postgres::transaction::PgTransaction;

crate::postgres::over_the_pool! {
    /// Personal API keys in PostgreSQL.
    PgApiKeyRepository
}

/// Inserts a key row, alone or in a transaction.
async fn insert_key(
    conn: &mut impl diesel_async::AsyncConnection<Backend = diesel::pg::Pg>,
    owner: UserId,
    key: NewApiKey,
) -> QueryResult<usize> {
    diesel::insert_into(personal_api_keys::table)
        .values((
            personal_api_keys::id.eq(key.id),
            personal_api_keys::user_id.eq(owner.0),
            personal_api_keys::label.eq(key.label),
            personal_api_keys::secure_value.eq(key.secure_value),
            personal_api_keys::mask.eq(key.mask),
            personal_api_keys::scopes.eq(key.scopes.as_slice().to_vec()),
            personal_api_keys::scoped_teams.eq(key
                .scoped_teams
                .map(|teams| teams.into_iter().map(|t| t.0).collect::<Vec<_>>())),
            personal_api_keys::scoped_organizations.eq(key.scoped_organizations.map(|orgs| {
                orgs.into_iter()
                    .map(|o| o.0.to_string())
                    .collect::<Vec<_>>()
            })),
        ))
        .execute(conn)
        .await
}

#[async_trait]
impl ApiKeyRepository for PgApiKeyRepository {
    async fn find_active(&self, secure_value: &str) -> Result<Option<(ApiKey, User)>, Unexpected> {
        let mut conn: Connection = self.database.connection().await?;
        let found = personal_api_keys::table
            .inner_join(users::table)
            .filter(personal_api_keys::secure_value.eq(secure_value))
            .filter(users::is_active.eq(true))
            .select((ApiKeyRow::as_select(), UserRow::as_select()))
            .first::<(ApiKeyRow, UserRow)>(&mut conn)
            .await
            .optional_during("looking up a personal API key")?;
        Ok(found.map(|(key, user)| (key.into(), user.into())))
    }

    async fn touch(&self, key_id: Uuid, at: DateTime<Utc>) -> Result<(), Unexpected> {
        let mut conn = self.database.connection().await?;
        diesel::update(personal_api_keys::table.find(key_id))
            .set(personal_api_keys::last_used_at.eq(at))
            .execute(&mut conn)
            .await
            .during("recording a key's last use")?;
        Ok(())
    }

    async fn create(&self, owner: UserId, key: NewApiKey) -> Result<(), Unexpected> {
        let mut conn = self.database.connection().await?;
        insert_key(&mut conn, owner, key)
            .await
            .during("creating a personal API key")?;
        Ok(())
    }

    async fn begin(&self) -> Result<Box<dyn ApiKeyTransaction>, Unexpected> {
        Ok(Box::new(PgTransaction::open(&self.database).await?))
    }
}

#[async_trait]
impl ApiKeyTransaction for PgTransaction {
    async fn insert_key(&mut self, owner: UserId, key: NewApiKey) -> Result<(), Unexpected> {
        insert_key(self.connection().await?, owner, key)
            .await
            .during("creating a personal API key")?;
        Ok(())
    }
}

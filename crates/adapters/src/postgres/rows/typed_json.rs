//! `jsonb` columns read into and written from their domain types directly: a list of surveys
//! reads hundreds of questions and settings objects, and a `serde_json::Value` in between would
//! build and take apart a second tree of each.

use std::fmt::Debug;
use std::io::Write as _;

use diesel::deserialize::{self, FromSql, FromSqlRow};
use diesel::expression::AsExpression;
use diesel::pg::{Pg, PgValue};
use diesel::serialize::{self, IsNull, Output, ToSql};
use diesel::sql_types::Jsonb;
use serde::Serialize;
use serde::de::DeserializeOwned;

/// PostgreSQL's binary `jsonb` format: this version byte, then the JSON text.
const JSONB_VERSION: u8 = 1;

/// A `jsonb` value as the type `T` it holds.
#[derive(Debug, FromSqlRow, AsExpression)]
#[diesel(sql_type = Jsonb)]
pub(crate) struct TypedJson<T>(pub T);

impl<T: DeserializeOwned> FromSql<Jsonb, Pg> for TypedJson<T> {
    fn from_sql(value: PgValue<'_>) -> deserialize::Result<Self> {
        match value.as_bytes().split_first() {
            Some((&JSONB_VERSION, json)) => Ok(Self(serde_json::from_slice(json)?)),
            _ => Err("jsonb in a binary format other than version 1".into()),
        }
    }
}

impl<T: Serialize + Debug> ToSql<Jsonb, Pg> for TypedJson<T> {
    fn to_sql<'b>(&'b self, out: &mut Output<'b, '_, Pg>) -> serialize::Result {
        out.write_all(&[JSONB_VERSION])?;
        serde_json::to_writer(out, &self.0)?;
        Ok(IsNull::No)
    }
}

//! Burrow's domain: entities, validation rules, ports and the use-case services built on them.
//!
//! Nothing here performs I/O. Adapters implement the port traits; the `testing` feature ships
//! in-memory fakes of every repository port so the rules can be tested without a database.

/// An enum of unit variants, each with one wire name (`Variant = "name",`), declared with what
/// every such enum needs: `ALL` in declaration order, `as_str` (the name), `parse` (its
/// inverse) and `Display` (the name).
macro_rules! wire_enum {
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident {
            $($(#[$variant_meta:meta])* $variant:ident = $wire:literal,)+
        }
    ) => {
        $(#[$meta])*
        $vis enum $name {
            $($(#[$variant_meta])* $variant,)+
        }

        impl $name {
            pub const ALL: [Self; [$($wire),+].len()] = [$(Self::$variant),+];

            pub fn as_str(self) -> &'static str {
                match self {
                    $(Self::$variant => $wire,)+
                }
            }

            pub fn parse(text: &str) -> Option<Self> {
                Self::ALL.into_iter().find(|known| known.as_str() == text)
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

pub mod access;
pub mod activity;
pub mod admin;
pub mod api_key;
pub mod cohort;
pub mod early_access;
pub mod error;
pub mod feature_flag;
pub mod group;
mod json_fields;
pub mod memory;
pub mod patch;
pub mod person;
pub mod plugin;
pub mod plugin_config;
pub mod ports;
pub mod rate_limit;
pub mod scope;
pub mod sdk;
pub mod survey;
pub mod survey_response;
pub mod tenancy;
#[cfg(feature = "testing")]
pub mod testing;
pub mod webhook;

pub use error::{DomainError, Unexpected, ValidationError};

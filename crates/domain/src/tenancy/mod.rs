//! Tenancy entities: users, organizations, the projects inside them, and who belongs where.

mod port;
mod service;
mod survey_config;

pub use port::{AsSeenBy, TenancyRepository, TenancyTransaction, VisibleProjects};
pub use service::{GLOBAL_SURVEY_SETTINGS, ProjectChanges, ProjectService};
pub use survey_config::{
    MAX_SURVEY_CONFIG_BYTES, MAX_WAIT_PERIOD_DAYS, SurveyConfig, WAIT_PERIOD_KEY, config_changes,
    positive_days,
};

use std::fmt;
use std::str::FromStr;

use chrono::{DateTime, Utc};
use rand::Rng;
use rand::distr::Alphanumeric;
use uuid::Uuid;

/// A user's integer id (PostHog's `User.id`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct UserId(pub i32);

/// A project's integer id (PostHog's team/project id).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ProjectId(pub i32);

impl fmt::Display for ProjectId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// An organization's UUID.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct OrganizationId(pub Uuid);

impl fmt::Display for OrganizationId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// How far an organization's members may go with plugins (PostHog's numeric levels).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum PluginsAccessLevel {
    None = 0,
    Config = 3,
    Install = 6,
    Root = 9,
}

impl PluginsAccessLevel {
    pub fn as_i16(self) -> i16 {
        self as i16
    }

    pub fn from_i16(value: i16) -> Option<Self> {
        [Self::None, Self::Config, Self::Install, Self::Root]
            .into_iter()
            .find(|level| level.as_i16() == value)
    }
}

impl FromStr for PluginsAccessLevel {
    type Err = String;

    fn from_str(value: &str) -> Result<Self, Self::Err> {
        match value {
            "none" | "0" => Ok(Self::None),
            "config" | "3" => Ok(Self::Config),
            "install" | "6" => Ok(Self::Install),
            "root" | "9" => Ok(Self::Root),
            other => Err(format!(
                "unknown plugins access level '{other}': expected none, config, install or root"
            )),
        }
    }
}

/// A member's rank in an organization (PostHog's numeric levels).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum MembershipLevel {
    Member = 1,
    Admin = 8,
    Owner = 15,
}

impl MembershipLevel {
    pub fn as_i16(self) -> i16 {
        self as i16
    }

    pub fn from_i16(value: i16) -> Option<Self> {
        [Self::Member, Self::Admin, Self::Owner]
            .into_iter()
            .find(|level| level.as_i16() == value)
    }
}

impl FromStr for MembershipLevel {
    type Err = String;

    fn from_str(value: &str) -> Result<Self, Self::Err> {
        match value {
            "member" => Ok(Self::Member),
            "admin" => Ok(Self::Admin),
            "owner" => Ok(Self::Owner),
            other => Err(format!(
                "unknown membership level '{other}': expected member, admin or owner"
            )),
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Organization {
    pub id: OrganizationId,
    pub name: String,
    pub plugins_access_level: PluginsAccessLevel,
    pub created_at: DateTime<Utc>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Project {
    pub id: ProjectId,
    pub organization_id: OrganizationId,
    pub name: String,
    pub api_token: String,
    pub created_at: DateTime<Utc>,
    /// Settings every survey of the project shares (`None`: never set, or cleared).
    pub survey_config: Option<SurveyConfig>,
}

/// `len` random ASCII letters and digits: the secret part of keys and tokens.
pub fn random_alphanumeric(len: usize) -> String {
    rand::rng()
        .sample_iter(&Alphanumeric)
        .take(len)
        .map(char::from)
        .collect()
}

/// A new project's public token: `phc_` and 43 random characters.
pub fn generate_project_api_token() -> String {
    format!("phc_{}", random_alphanumeric(43))
}

#[derive(Debug, Clone, PartialEq)]
pub struct User {
    pub id: UserId,
    pub uuid: Uuid,
    pub email: String,
    pub first_name: String,
    pub last_name: String,
    pub distinct_id: String,
    pub is_active: bool,
    pub is_email_verified: bool,
    pub current_organization_id: Option<OrganizationId>,
    pub current_project_id: Option<ProjectId>,
    pub created_at: DateTime<Utc>,
}

/// The public face of a user, as shown in `created_by` (PostHog's `UserBasicSerializer`).
#[derive(Debug, Clone, PartialEq)]
pub struct UserBasic {
    pub id: UserId,
    pub uuid: Uuid,
    pub distinct_id: String,
    pub first_name: String,
    pub last_name: String,
    pub email: String,
    pub is_email_verified: bool,
}

impl From<&User> for UserBasic {
    fn from(user: &User) -> Self {
        Self {
            id: user.id,
            uuid: user.uuid,
            distinct_id: user.distinct_id.clone(),
            first_name: user.first_name.clone(),
            last_name: user.last_name.clone(),
            email: user.email.clone(),
            is_email_verified: user.is_email_verified,
        }
    }
}

/// An organization as one of its members sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct OrganizationMembership {
    pub organization: Organization,
    pub level: MembershipLevel,
}

/// A user's email, trimmed and checked for the one shape every address has.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Email(String);

impl Email {
    pub fn parse(raw: &str) -> Result<Self, String> {
        let email = raw.trim();
        if email.len() > 254 {
            return Err("an email address has at most 254 characters".into());
        }
        match email.split_once('@') {
            Some((local, domain))
                if !local.is_empty()
                    && domain.contains('.')
                    && !email.contains(char::is_whitespace) =>
            {
                Ok(Self(email.to_owned()))
            }
            _ => Err(format!("'{raw}' is not a valid email address")),
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// Which projects or organizations a path names: a concrete id or the user's `@current` one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TenantRef<Id> {
    Current,
    Id(Id),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn emails_need_a_local_part_and_a_dotted_domain() {
        assert!(Email::parse(" ada@example.com ").is_ok());
        assert!(Email::parse("ada").is_err());
        assert!(Email::parse("@example.com").is_err());
        assert!(Email::parse("ada@localhost").is_err());
    }

    #[test]
    fn plugin_levels_parse_by_name_and_number() {
        assert_eq!("install".parse(), Ok(PluginsAccessLevel::Install));
        assert_eq!("9".parse(), Ok(PluginsAccessLevel::Root));
        assert!("everything".parse::<PluginsAccessLevel>().is_err());
        assert_eq!(
            PluginsAccessLevel::from_i16(3),
            Some(PluginsAccessLevel::Config)
        );
    }

    #[test]
    fn project_tokens_are_prefixed_and_long() {
        let token = generate_project_api_token();
        assert!(token.starts_with("phc_"));
        assert!(token.len() >= 36);
    }
}

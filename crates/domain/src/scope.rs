//! API key scopes: what a route requires (`survey:read`) and what a key grants (`survey:write`, `*`).

use std::fmt;

wire_enum! {
    /// The kind of object a route works on; each route group declares one. Declared in the
    /// order `docs/api.md` documents them.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
    pub enum ScopeObject {
        Survey = "survey",
        FeatureFlag = "feature_flag",
        Cohort = "cohort",
        Group = "group",
        EarlyAccessFeature = "early_access_feature",
        Plugin = "plugin",
        Project = "project",
        Organization = "organization",
        User = "user",
        ActivityLog = "activity_log",
        Webhook = "webhook",
        Person = "person",
        /// PostHog's scope for reading through its query engine: the JSON responses list
        /// needs it beside `survey:read`, as PostHog's does.
        Query = "query",
    }
}

/// Whether a request only reads or also changes state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AccessKind {
    Read,
    Write,
}

/// The scope one request needs, e.g. `survey:write`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RequiredScope {
    pub object: ScopeObject,
    pub access: AccessKind,
}

impl fmt::Display for RequiredScope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let access = match self.access {
            AccessKind::Read => "read",
            AccessKind::Write => "write",
        };
        write!(f, "{}:{access}", self.object.as_str())
    }
}

/// The scopes stored on a key. `write` implies `read`; `*` grants everything; empty grants nothing.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ScopeGrants(Vec<String>);

impl ScopeGrants {
    /// Parses scopes given by an operator, rejecting unknown objects and actions so a typo
    /// cannot silently produce a key that can do nothing.
    pub fn parse<S: AsRef<str>>(scopes: &[S]) -> Result<Self, String> {
        let mut grants = Vec::with_capacity(scopes.len());
        for scope in scopes {
            let scope = scope.as_ref().trim();
            if scope.is_empty() {
                continue;
            }
            if scope != "*" {
                let (object, action) = scope.split_once(':').ok_or_else(|| {
                    format!("invalid scope '{scope}': expected <object>:<read|write> or *")
                })?;
                if !ScopeObject::ALL
                    .iter()
                    .any(|known| known.as_str() == object)
                {
                    return Err(format!(
                        "invalid scope '{scope}': unknown object '{object}'"
                    ));
                }
                if action != "read" && action != "write" {
                    return Err(format!(
                        "invalid scope '{scope}': action must be read or write"
                    ));
                }
            }
            if !grants.iter().any(|g| g == scope) {
                grants.push(scope.to_owned());
            }
        }
        Ok(Self(grants))
    }

    /// Scopes as loaded from storage, trusted as written.
    pub fn from_stored(scopes: Vec<String>) -> Self {
        Self(scopes)
    }

    pub fn as_slice(&self) -> &[String] {
        &self.0
    }

    /// Whether these grants satisfy `required`.
    pub fn allows(&self, required: RequiredScope) -> bool {
        let object = required.object.as_str();
        self.0.iter().any(|grant| {
            if grant == "*" {
                return true;
            }
            match grant.split_once(':') {
                Some((granted_object, action)) if granted_object == object => {
                    action == "write" || (action == "read" && required.access == AccessKind::Read)
                }
                _ => false,
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scope(object: ScopeObject, access: AccessKind) -> RequiredScope {
        RequiredScope { object, access }
    }

    #[test]
    fn write_implies_read_but_not_the_reverse() {
        let grants = ScopeGrants::parse(&["survey:write", "plugin:read"]).unwrap();
        assert!(grants.allows(scope(ScopeObject::Survey, AccessKind::Read)));
        assert!(grants.allows(scope(ScopeObject::Survey, AccessKind::Write)));
        assert!(grants.allows(scope(ScopeObject::Plugin, AccessKind::Read)));
        assert!(!grants.allows(scope(ScopeObject::Plugin, AccessKind::Write)));
        assert!(!grants.allows(scope(ScopeObject::FeatureFlag, AccessKind::Read)));
    }

    #[test]
    fn star_grants_everything_and_empty_grants_nothing() {
        let all = ScopeGrants::parse(&["*"]).unwrap();
        let none = ScopeGrants::parse::<&str>(&[]).unwrap();
        for object in ScopeObject::ALL {
            assert!(all.allows(scope(object, AccessKind::Write)));
            assert!(!none.allows(scope(object, AccessKind::Read)));
        }
    }

    #[test]
    fn parsing_rejects_unknown_objects_and_actions() {
        assert!(ScopeGrants::parse(&["surveys:read"]).is_err());
        assert!(ScopeGrants::parse(&["survey:delete"]).is_err());
        assert!(ScopeGrants::parse(&["survey"]).is_err());
    }

    #[test]
    fn required_scope_displays_like_posthog() {
        assert_eq!(
            scope(ScopeObject::FeatureFlag, AccessKind::Write).to_string(),
            "feature_flag:write"
        );
    }
}

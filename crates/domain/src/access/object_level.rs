//! PostHog's `user_access_level` of an object, as its access control answers it without
//! per-object rules (which Burrow does not have): the creator and the organization's admins
//! and owners manage the object; every other member edits it (PostHog's default level).

use super::ProjectAccess;
use crate::tenancy::{MembershipLevel, UserId};

wire_enum! {
    /// What the caller may do with an object, PostHog's names.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum ObjectAccessLevel {
        Editor = "editor",
        Manager = "manager",
    }
}

impl ObjectAccessLevel {
    /// The level of `access`'s user on an object created by `creator`.
    pub fn of(access: &ProjectAccess, creator: Option<UserId>) -> Self {
        let created_it = creator == Some(access.principal.user.id);
        if created_it || access.level >= MembershipLevel::Admin {
            Self::Manager
        } else {
            Self::Editor
        }
    }
}

#[cfg(all(test, feature = "testing"))]
mod tests {
    use super::*;
    use crate::testing::caller_in_project;

    #[test]
    fn creators_admins_and_owners_manage_and_other_members_edit() {
        let member = caller_in_project(UserId(2), MembershipLevel::Member);
        assert_eq!(
            ObjectAccessLevel::of(&member, Some(UserId(2))),
            ObjectAccessLevel::Manager
        );
        assert_eq!(
            ObjectAccessLevel::of(&member, Some(UserId(3))),
            ObjectAccessLevel::Editor
        );
        assert_eq!(
            ObjectAccessLevel::of(&member, None),
            ObjectAccessLevel::Editor
        );
        for level in [MembershipLevel::Admin, MembershipLevel::Owner] {
            let admin = caller_in_project(UserId(2), level);
            assert_eq!(
                ObjectAccessLevel::of(&admin, Some(UserId(3))),
                ObjectAccessLevel::Manager
            );
        }
    }
}

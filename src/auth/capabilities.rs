//! Roles → capabilities and the record-level rules built on them (docs/api.md, "Roles and
//! visibility").
//! Every route asks this module; nothing else decides who may do what.

use crate::model::{Kind, Role, Status};

/// The WordPress capabilities almanac uses. Post-kind capabilities have the same level on
/// events, venues and organizers, so they are not parameterised by kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Capability {
    Read,
    ReadPrivatePosts,
    EditPosts,
    EditOthersPosts,
    EditPublishedPosts,
    EditPrivatePosts,
    PublishPosts,
    DeletePosts,
    DeleteOthersPosts,
    DeletePublishedPosts,
    DeletePrivatePosts,
    ManageCategories,
    UploadFiles,
    UnfilteredHtml,
}

impl Role {
    /// The capabilities each role has.
    pub(crate) fn has(self, cap: Capability) -> bool {
        use Capability::*;
        match self {
            Role::Administrator | Role::Editor => true,
            Role::Author => matches!(
                cap,
                Read | EditPosts
                    | EditPublishedPosts
                    | PublishPosts
                    | DeletePosts
                    | DeletePublishedPosts
                    | UploadFiles
            ),
            Role::Contributor => matches!(cap, Read | EditPosts | DeletePosts),
            Role::Subscriber => cap == Read,
        }
    }
}

/// Who is asking: anonymous, or an authenticated user with exactly one role.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Caller {
    Anonymous,
    User { id: u64, role: Role },
}

/// The author of visitors' proposals.
pub(crate) const VISITOR_ID: u64 = 0;

/// A visitor proposing an event (docs/pages.md, "Proposals from visitors"): a contributor who
/// is no user (ID 0), so what it writes awaits review and nobody may edit it as their own.
pub(crate) const VISITOR: Caller = Caller::User {
    id: VISITOR_ID,
    role: Role::Contributor,
};

/// The command line, run by whoever operates the data directory or the cluster: an
/// administrator who is no user and owns no record.
pub(crate) const OPERATOR: Caller = Caller::User {
    id: u64::MAX,
    role: Role::Administrator,
};

impl Caller {
    pub(crate) fn has(self, cap: Capability) -> bool {
        match self {
            Caller::Anonymous => false,
            Caller::User { role, .. } => role.has(cap),
        }
    }

    pub(crate) fn is_authenticated(self) -> bool {
        matches!(self, Caller::User { .. })
    }

    /// Whether the caller administers the site (webhooks, the index, users).
    pub(crate) fn administers(self) -> bool {
        matches!(
            self,
            Caller::User {
                role: Role::Administrator,
                ..
            }
        )
    }

    fn is(self, owner: u64) -> bool {
        matches!(self, Caller::User { id, .. } if id == owner)
    }

    /// Manage (create, update, delete) terms of a kind.
    pub(crate) fn may_manage_terms(self, kind: Kind) -> bool {
        match kind {
            Kind::Tag => self.has(Capability::EditPosts) && self.has(Capability::ManageCategories),
            _ => self.has(Capability::EditPosts) && self.has(Capability::PublishPosts),
        }
    }
}

/// What the record-level rules need to know about a post-kind record.
#[derive(Debug, Clone, Copy)]
pub(crate) struct PostAccess {
    pub owner: u64,
    /// The effective status (a `future` record whose date has come is `publish`).
    pub status: Status,
    /// For trashed records, the status before trashing.
    pub status_before_trash: Option<Status>,
}

impl PostAccess {
    /// The status the rules judge by: the pre-trash status for trashed records, else the
    /// effective status.
    fn working_status(&self) -> Status {
        match (self.status, self.status_before_trash) {
            (Status::Trash, Some(before)) => before,
            (status, _) => status,
        }
    }
}

/// The capabilities that one action (edit or delete) needs.
struct ActionCaps {
    own: Capability,
    own_published: Capability,
    others: Capability,
    others_private: Capability,
}

const EDIT: ActionCaps = ActionCaps {
    own: Capability::EditPosts,
    own_published: Capability::EditPublishedPosts,
    others: Capability::EditOthersPosts,
    others_private: Capability::EditPrivatePosts,
};

const DELETE: ActionCaps = ActionCaps {
    own: Capability::DeletePosts,
    own_published: Capability::DeletePublishedPosts,
    others: Capability::DeleteOthersPosts,
    others_private: Capability::DeletePrivatePosts,
};

fn may(caller: Caller, record: &PostAccess, caps: &ActionCaps) -> bool {
    if !caller.is_authenticated() {
        return false;
    }
    let status = record.working_status();
    let published = matches!(status, Status::Publish | Status::Future);
    if caller.is(record.owner) {
        return caller.has(if published {
            caps.own_published
        } else {
            caps.own
        });
    }
    caller.has(caps.others)
        && (!published || caller.has(caps.own_published))
        && (status != Status::Private || caller.has(caps.others_private))
}

/// Whether the caller may read the record.
pub(crate) fn can_read(caller: Caller, record: &PostAccess) -> bool {
    if record.status == Status::Publish {
        return true;
    }
    if !caller.is_authenticated() {
        return false;
    }
    if caller.is(record.owner) {
        return true;
    }
    match record.status {
        Status::Private => caller.has(Capability::ReadPrivatePosts),
        _ => can_edit(caller, record),
    }
}

/// Whether the caller may update the record.
pub(crate) fn can_edit(caller: Caller, record: &PostAccess) -> bool {
    may(caller, record, &EDIT)
}

/// Whether the caller may trash the record.
pub(crate) fn can_delete(caller: Caller, record: &PostAccess) -> bool {
    may(caller, record, &DELETE)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn user(id: u64, role: Role) -> Caller {
        Caller::User { id, role }
    }

    fn record(owner: u64, status: Status) -> PostAccess {
        PostAccess {
            owner,
            status,
            status_before_trash: None,
        }
    }

    #[test]
    fn capability_table_matches_the_contract() {
        use Capability::*;
        assert!(Role::Author.has(UploadFiles) && !Role::Author.has(UnfilteredHtml));
        assert!(Role::Contributor.has(DeletePosts) && !Role::Contributor.has(PublishPosts));
        assert!(!Role::Subscriber.has(EditPosts) && Role::Subscriber.has(Read));
        assert!(Role::Editor.has(ManageCategories) && !Role::Author.has(ManageCategories));
        assert!(!Caller::Anonymous.has(Read));
    }

    #[test]
    fn term_management_follows_the_derived_capabilities() {
        let who = |r| user(9, r);
        assert!(who(Role::Author).may_manage_terms(Kind::Category));
        assert!(!who(Role::Author).may_manage_terms(Kind::Tag));
        assert!(who(Role::Editor).may_manage_terms(Kind::Tag));
        assert!(!who(Role::Contributor).may_manage_terms(Kind::Category));
        assert!(!Caller::Anonymous.may_manage_terms(Kind::Category));
    }

    #[test]
    fn post_permission_matrix() {
        let contributor = user(2, Role::Contributor);
        let author = user(3, Role::Author);
        let editor = user(4, Role::Editor);
        let subscriber = user(5, Role::Subscriber);

        let own_draft = record(2, Status::Draft);
        assert!(can_edit(contributor, &own_draft) && can_delete(contributor, &own_draft));
        let own_published = record(2, Status::Publish);
        assert!(!can_edit(contributor, &own_published));
        assert!(can_read(contributor, &own_published));
        assert!(can_edit(author, &record(3, Status::Future)));

        let others_draft = record(1, Status::Draft);
        for caller in [contributor, author, subscriber, Caller::Anonymous] {
            assert!(!can_read(caller, &others_draft));
            assert!(!can_edit(caller, &others_draft));
        }
        assert!(can_read(editor, &others_draft) && can_delete(editor, &others_draft));
        assert!(!can_read(author, &record(1, Status::Private)));
        assert!(can_read(editor, &record(1, Status::Private)));
        assert!(can_read(Caller::Anonymous, &record(1, Status::Publish)));

        // Trashed records are judged by their status before the trash.
        let trashed_published = PostAccess {
            owner: 2,
            status: Status::Trash,
            status_before_trash: Some(Status::Publish),
        };
        assert!(can_read(contributor, &trashed_published));
        assert!(!can_edit(contributor, &trashed_published));
        assert!(!can_read(author, &trashed_published));
    }
}

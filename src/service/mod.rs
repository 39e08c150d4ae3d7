//! Use cases, free of warp and tantivy types. Each returns a [`ServiceError`] that the HTTP
//! layer maps once to the API's error body.

mod cascades;
pub(crate) mod changes;
pub mod events;
pub mod linked;
pub(crate) mod posts;
pub(crate) mod scheduled;
pub(crate) mod series;
pub(crate) mod sessions;
pub(crate) mod terms;
pub mod users;
pub(crate) mod webhooks;

use crate::auth::Caller;
use crate::model::{Kind, Language};
use crate::store::StoreError;
use crate::values::Invalid;
use chrono::NaiveDateTime;

/// A request's context as the use cases need it.
#[derive(Debug, Clone, Copy)]
pub struct Request {
    pub caller: Caller,
    /// The effective language (docs/api.md, "Languages and translation groups").
    pub language: Language,
    /// `translation_language` when it was sent.
    pub explicit_language: Option<Language>,
    pub now: NaiveDateTime,
}

#[derive(Debug)]
pub enum ServiceError {
    /// Parameters refused by reference checks (with any syntax errors found before).
    Invalid(Refusals),
    /// Route-level permission refused (401/403 `rest_forbidden` by caller).
    Forbidden,
    /// A `context` this caller may not use (401/403 `rest_forbidden_context` by caller).
    ForbiddenContext,
    /// An explicit `translation_language` whose group member does not exist.
    NoGroupMember(Kind),
    /// Event ID routes: no record with this ID (`rest-event-not-found`).
    EventNotFound,
    /// Event ID routes: the ID names a venue, organizer or image (`rest-invalid-event-id`).
    NotAnEvent,
    /// GET of a trashed event (`event-no-longer-available`).
    EventGone,
    /// GET of a locked password-protected event.
    PasswordProtected,
    /// A single GET of a record the caller may not read.
    NotAccessible(Kind),
    /// DELETE of a record already in the trash.
    InTrash(Kind),
    /// `author` set to another user without editor rights.
    CannotEditOthers,
    /// A translation group already has a member in this language.
    TranslationConflict {
        language: Language,
        /// The member holding the language, when the caller may read it.
        translation_id: Option<u64>,
    },
    /// A change feed token older than the journal's retention.
    ChangesTokenExpired,
    /// A list page past the end (post kinds).
    PageNotFound(Kind),
    /// term_exists with the existing term.
    TermExists(u64),
    DuplicateTermSlug,
    /// A category made its own ancestor.
    TermCycle,
    /// `parent` sent for a tag.
    NotHierarchical,
    Store(StoreError),
    Index(crate::index::IndexError),
}

impl From<crate::index::IndexError> for ServiceError {
    fn from(e: crate::index::IndexError) -> ServiceError {
        ServiceError::Index(e)
    }
}

impl From<StoreError> for ServiceError {
    fn from(e: StoreError) -> ServiceError {
        ServiceError::Store(e)
    }
}

pub(crate) type ServiceResult<T> = Result<T, ServiceError>;

/// The parameters refused so far, by name: the syntax errors the HTTP layer found, then the
/// use case's own checks (unknown references, forbidden values), all reported in one answer.
pub(crate) type Refusals = Vec<(String, Invalid)>;

/// Fails with every refusal at once, if there is any.
pub(crate) fn refuse_any(refusals: Refusals) -> ServiceResult<()> {
    if refusals.is_empty() {
        Ok(())
    } else {
        Err(ServiceError::Invalid(refusals))
    }
}

/// The permission of a read in the export form (`context=export`, docs/api.md, "The export
/// form"): only callers who may edit other users' records read it; checked once the
/// parameters and the translation-group member are settled, like every permission.
pub(crate) fn check_export(caller: Caller, export: bool) -> ServiceResult<()> {
    if export && !caller.has(crate::auth::Capability::EditOthersPosts) {
        Err(ServiceError::ForbiddenContext)
    } else {
        Ok(())
    }
}

/// Rebuilds the search index from the store while it keeps serving (docs/operations.md,
/// "Reindexing"); the counts of what was indexed.
pub(crate) fn rebuild_index(
    store: &crate::store::Store,
    index: &crate::index::SearchIndex,
) -> ServiceResult<crate::index::BuildSummary> {
    Ok(index.rebuild_live(store)?)
}

/// A page of a list.
#[derive(Debug)]
pub struct Page<T> {
    pub items: Vec<T>,
    pub total: usize,
    pub page: usize,
    pub per_page: usize,
}

impl<T> Page<T> {
    /// Cuts `all` (already filtered and ordered) to the requested page.
    pub(crate) fn of(all: Vec<T>, page: usize, per_page: usize) -> Page<T> {
        let total = all.len();
        let items = all
            .into_iter()
            .skip((page - 1).saturating_mul(per_page))
            .take(per_page)
            .collect();
        Page {
            items,
            total,
            page,
            per_page,
        }
    }

    /// A page read from the index: the page's items and the total of all pages.
    pub(crate) fn from_hits(items: Vec<T>, total: usize, page: usize, per_page: usize) -> Page<T> {
        Page {
            items,
            total,
            page,
            per_page,
        }
    }
}

/// Compares SHA-256 digests of both sides byte by byte without stopping early, so that the
/// time taken reveals neither the position of the first difference nor the stored length.
pub(crate) fn secret_eq(a: &[u8], b: &[u8]) -> bool {
    use sha2::{Digest, Sha256};
    let (a, b) = (Sha256::digest(a), Sha256::digest(b));
    a.iter()
        .zip(b.iter())
        .fold(0u8, |acc, (x, y)| acc | (x ^ y))
        == 0
}

//! What events, venues and organizers share: write fields
//! common to the three kinds, status and scheduling rules, dates, slugs, images, trash,
//! translation groups, visibility and the status filter of lists.

use crate::auth::capabilities::{self, PostAccess};
use crate::auth::{Caller, Capability};
use crate::model::post::{PostMeta, PostRecord};
use crate::model::{Kind, Language, Status};
use crate::service::Refusals;
use crate::service::{ServiceError, ServiceResult};
use crate::store::{PostIdKind, Reads, Store, StoreError, WriteTx};
use crate::values::datetime::DateTimeValue;
use crate::values::text;
use crate::values::{slug, Invalid, SubCode};
use chrono::NaiveDateTime;

/// How an `image` write changes the image link.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ImageChange {
    Remove,
    Id(u64),
    Url(String),
}

/// The write fields every post kind has, syntax-checked. `None` means "not sent".
#[derive(Debug, Clone, Default)]
pub(crate) struct PostWrite {
    /// Event title, venue or organizer name (already trimmed where the kind says so).
    pub title: Option<String>,
    pub author: Option<u64>,
    pub date: Option<DateTimeValue>,
    pub date_utc: Option<DateTimeValue>,
    pub description: Option<String>,
    pub excerpt: Option<String>,
    pub status: Option<Status>,
    pub image: Option<ImageChange>,
    /// `Some(0)` detaches the record into a group of its own (updates only).
    pub translation_of: Option<u64>,
}

/// Reference checks of the common fields; problems are appended to `invalid`.
pub(crate) fn check_references(
    tx: &impl Reads,
    kind: Kind,
    caller: Caller,
    write: &PostWrite,
    now: NaiveDateTime,
    invalid: &mut Refusals,
) -> ServiceResult<()> {
    if let Some(author) = write.author {
        if !tx.user_exists(author)? {
            invalid.push((
                "author".into(),
                Invalid::new(
                    SubCode::InvalidReference,
                    "must be the ID of an existing user.",
                ),
            ));
        }
    }
    match &write.image {
        Some(ImageChange::Id(id)) if tx.image(*id)?.is_none() => invalid.push((
            "image".into(),
            Invalid::new(
                SubCode::InvalidReference,
                "must be the ID of an existing image.",
            ),
        )),
        Some(ImageChange::Url(_)) if !caller.has(Capability::UploadFiles) => invalid.push((
            "image".into(),
            Invalid::new(
                SubCode::ForbiddenValue,
                "may be given as a URL only by users who may upload files.",
            ),
        )),
        _ => {}
    }
    if let Some(target) = write.translation_of.filter(|id| *id != 0) {
        let readable = match tx.post_kind_of(target)? {
            Some(PostIdKind::Record(k)) if k == kind => {
                let meta: Option<PostMeta> = load_meta(tx, kind, target)?;
                meta.is_some_and(|m| capabilities::can_read(caller, &access(&m, now)))
            }
            _ => false,
        };
        if !readable {
            invalid.push((
                "translation_of".into(),
                Invalid::new(
                    SubCode::InvalidReference,
                    format!("must be the ID of a {} you can read.", kind.name()),
                ),
            ));
        }
    }
    Ok(())
}

/// Loads just the common part of any post-kind record. Every post-kind record starts with its
/// [`PostMeta`], so the common part decodes from any of them.
fn load_meta(tx: &impl Reads, kind: Kind, id: u64) -> ServiceResult<Option<PostMeta>> {
    Ok(tx.get_record::<PostMeta>(kind, id)?)
}

/// The record-level view of a record for the capability rules.
pub(crate) fn access(meta: &PostMeta, now: NaiveDateTime) -> PostAccess {
    PostAccess {
        owner: meta.author,
        status: meta.effective_status(now),
        status_before_trash: meta.status_before_trash,
    }
}

pub(crate) fn can_read(caller: Caller, meta: &PostMeta, now: NaiveDateTime) -> bool {
    capabilities::can_read(caller, &access(meta, now))
}

/// Setting `author` to another user needs the right to edit others' records; checked by the
/// handler after the route permission.
pub(crate) fn check_author_change(caller: Caller, write: &PostWrite) -> ServiceResult<()> {
    match (write.author, caller) {
        (Some(author), Caller::User { id, .. })
            if author != id && !caller.has(Capability::EditOthersPosts) =>
        {
            Err(ServiceError::CannotEditOthers)
        }
        _ => Ok(()),
    }
}

/// The status a write asks for, after the contributor scale-back.
fn requested_status(caller: Caller, requested: Status) -> Status {
    if caller.has(Capability::PublishPosts) {
        return requested;
    }
    match requested {
        Status::Publish | Status::Future | Status::Private => Status::Pending,
        other => other,
    }
}

/// The scheduling rule: `publish` or `future` dated a minute ahead or more is `future`, else
/// `publish`.
fn schedule(status: Status, date_utc: NaiveDateTime, now: NaiveDateTime) -> Status {
    match status {
        Status::Publish | Status::Future if date_utc >= now + chrono::Duration::seconds(60) => {
            Status::Future
        }
        Status::Publish | Status::Future => Status::Publish,
        other => other,
    }
}

/// Date pairing: one given → the other from it (site time zone = UTC); both → as
/// given; neither → `None`.
fn paired_dates(write: &PostWrite) -> Option<(NaiveDateTime, NaiveDateTime)> {
    match (&write.date, &write.date_utc) {
        (Some(d), Some(u)) => Some((d.local, u.local)),
        // The site zone is UTC, so the paired value is the same wall clock (an event's `date` is
        // read in its time zone and `date_utc` takes the same value).
        (Some(d), None) => Some((d.local, d.local)),
        (None, Some(u)) => Some((u.local, u.local)),
        (None, None) => None,
    }
}

/// Text of titles, descriptions and excerpts: kept as given for callers with unfiltered_html,
/// cleaned by [`text::sanitize_html`] for the others (docs/api.md, "Text fields and HTML").
pub(crate) fn clean_html(caller: Caller, text_value: &str) -> String {
    if caller.has(Capability::UnfilteredHtml) {
        text_value.to_string()
    } else {
        text::sanitize_html(text_value)
    }
}

/// Creates the common part of a new record: ID, language, group, author, status, dates,
/// texts, slug (derived from the title) and image.
pub(crate) fn new_meta(
    tx: &mut WriteTx,
    kind: Kind,
    caller: Caller,
    write: &PostWrite,
    language: Language,
    requested_slug: Option<&str>,
    now: NaiveDateTime,
) -> ServiceResult<PostMeta> {
    let id = tx.next_id(kind.sequence())?;
    let caller_id = match caller {
        Caller::User { id, .. } => id,
        Caller::Anonymous => 0,
    };
    let (date, date_utc) = paired_dates(write).unwrap_or((now, now));
    let default_status = if caller.has(Capability::PublishPosts) {
        Status::Publish
    } else {
        Status::Draft
    };
    let status = requested_status(caller, write.status.unwrap_or(default_status));
    let title = write.title.clone().unwrap_or_default();
    let mut meta = PostMeta {
        id,
        language,
        group: id,
        author: write.author.unwrap_or(caller_id),
        status: schedule(status, date_utc, now),
        status_before_trash: None,
        slug: String::new(),
        slug_before_trash: None,
        date,
        date_utc,
        modified_utc: now,
        title: clean_html(caller, &title),
        description: clean_html(caller, write.description.as_deref().unwrap_or("")),
        excerpt: clean_html(caller, write.excerpt.as_deref().unwrap_or("")),
        image: None,
    };
    meta.image = resolve_image(tx, write.image.as_ref(), None)?;
    let candidate = slug::sanitize(requested_slug.unwrap_or(&title));
    meta.slug = claim_slug(tx, kind, language, &slug::or_id(candidate, id), id)?;
    tx.set_group_member(kind, id, language, id)?;
    Ok(meta)
}

/// Applies the common fields of an update (partial: absent fields unchanged).
pub(crate) fn apply_update(
    tx: &mut WriteTx,
    kind: Kind,
    meta: &mut PostMeta,
    caller: Caller,
    write: &PostWrite,
    now: NaiveDateTime,
) -> ServiceResult<()> {
    if let Some(title) = &write.title {
        meta.title = clean_html(caller, title);
    }
    if let Some(description) = &write.description {
        meta.description = clean_html(caller, description);
    }
    if let Some(excerpt) = &write.excerpt {
        meta.excerpt = clean_html(caller, excerpt);
    }
    if let Some(author) = write.author {
        meta.author = author;
    }
    if let Some((date, date_utc)) = paired_dates(write) {
        meta.date = date;
        meta.date_utc = date_utc;
    }
    meta.image = resolve_image(tx, write.image.as_ref(), meta.image)?;
    if let Some(requested) = write.status {
        let status = requested_status(caller, requested);
        if meta.status == Status::Trash {
            restore_slug(tx, kind, meta)?;
            meta.status_before_trash = None;
        }
        meta.status = status;
    }
    meta.status = schedule(meta.status, meta.date_utc, now);
    meta.modified_utc = now;
    Ok(())
}

pub(crate) fn resolve_image(
    tx: &mut WriteTx,
    change: Option<&ImageChange>,
    current: Option<u64>,
) -> ServiceResult<Option<u64>> {
    Ok(match change {
        None => current,
        Some(ImageChange::Remove) => None,
        Some(ImageChange::Id(id)) => Some(*id),
        Some(ImageChange::Url(url)) => Some(tx.image_for_url(url)?),
    })
}

/// Makes `candidate` unique among the kind's slugs in the language and records it.
pub(crate) fn claim_slug(
    tx: &mut WriteTx,
    kind: Kind,
    language: Language,
    candidate: &str,
    id: u64,
) -> ServiceResult<String> {
    let chosen = unique_slug(tx, kind, language, candidate, id)?;
    tx.set_slug(kind, language, &chosen, id)?;
    Ok(chosen)
}

/// `candidate`, made unique among the kind's slugs in the language (record `id` may keep its
/// own).
pub(crate) fn unique_slug(
    tx: &impl Reads,
    kind: Kind,
    language: Language,
    candidate: &str,
    id: u64,
) -> Result<String, StoreError> {
    let mut failure = None;
    let chosen = slug::make_unique(candidate, |s| match tx.slug_owner(kind, language, s) {
        Ok(owner) => owner.is_some_and(|o| o != id),
        Err(e) => {
            failure.get_or_insert(e);
            false
        }
    });
    match failure {
        Some(e) => Err(e),
        None => Ok(chosen),
    }
}

/// Moves a record to the trash: status and slug remembered, `__trashed` slug.
pub(crate) fn trash(
    tx: &mut WriteTx,
    kind: Kind,
    meta: &mut PostMeta,
    now: NaiveDateTime,
) -> ServiceResult<()> {
    tx.remove_slug(kind, meta.language, &meta.slug)?;
    let mut cut = meta.slug.clone();
    while cut.len() > 191 {
        cut.pop();
    }
    let trashed = format!("{cut}__trashed");
    meta.slug_before_trash = Some(std::mem::take(&mut meta.slug));
    meta.slug = claim_slug(tx, kind, meta.language, &trashed, meta.id)?;
    meta.status_before_trash = Some(meta.status);
    meta.status = Status::Trash;
    meta.modified_utc = now;
    Ok(())
}

/// Leaving the trash gives the remembered slug back, made unique if it was taken.
fn restore_slug(tx: &mut WriteTx, kind: Kind, meta: &mut PostMeta) -> ServiceResult<()> {
    if let Some(previous) = meta.slug_before_trash.take() {
        tx.remove_slug(kind, meta.language, &meta.slug)?;
        meta.slug = claim_slug(tx, kind, meta.language, &previous, meta.id)?;
    }
    Ok(())
}

/// `translation_of`: joins the target's group, or with 0 detaches into a new group.
pub(crate) fn join_group(
    tx: &mut WriteTx,
    kind: Kind,
    meta: &mut PostMeta,
    target: Option<u64>,
    target_group: Option<u64>,
) -> ServiceResult<()> {
    let Some(target) = target else {
        return Ok(());
    };
    let new_group = if target == 0 {
        meta.id
    } else {
        target_group.unwrap_or(target)
    };
    if new_group == meta.group {
        return Ok(());
    }
    if let Some((_, holder)) = tx
        .group_members(kind, new_group)?
        .into_iter()
        .find(|(l, id)| *l == meta.language && *id != meta.id)
    {
        return Err(ServiceError::TranslationConflict {
            language: meta.language,
            translation_id: Some(holder),
        });
    }
    tx.remove_group_member(kind, meta.group, meta.language)?;
    tx.set_group_member(kind, new_group, meta.language, meta.id)?;
    meta.group = new_group;
    Ok(())
}

/// Single-ID routes with an explicit language select the group member in that language.
pub(crate) fn group_member(
    rx: &impl Reads,
    kind: Kind,
    meta: &PostMeta,
    language: Option<Language>,
) -> ServiceResult<u64> {
    let Some(language) = language else {
        return Ok(meta.id);
    };
    if language == meta.language {
        return Ok(meta.id);
    }
    rx.group_members(kind, meta.group)?
        .into_iter()
        .find(|(l, _)| *l == language)
        .map(|(_, id)| id)
        .ok_or(ServiceError::NoGroupMember(kind))
}

/// The record of `kind` a single route names, by ID or by slug in `language`, if it exists and
/// `caller` may read it.
pub(crate) fn readable_target(
    store: &Store,
    kind: Kind,
    id: Option<u64>,
    slug: Option<&str>,
    language: Language,
    caller: Caller,
    now: NaiveDateTime,
) -> Option<PostMeta> {
    let rx = store.read().ok()?;
    let id = match (id, slug) {
        (Some(id), _) => id,
        (None, Some(slug)) => rx
            .slug_owner(kind, language, &crate::values::slug::sanitize(slug))
            .ok()??,
        (None, None) => return None,
    };
    rx.get_record::<PostMeta>(kind, id)
        .ok()?
        .filter(|meta| can_read(caller, meta, now))
}

/// The members of a record's group the caller may read (the record itself always).
pub(crate) fn visible_translations<R: PostRecord>(
    rx: &impl Reads,
    record: &R,
    caller: Caller,
    now: NaiveDateTime,
) -> ServiceResult<Vec<(Language, u64)>> {
    let meta = record.meta();
    let mut out = Vec::new();
    for (language, id) in rx.group_members(R::KIND, meta.group)? {
        if id == meta.id {
            out.push((language, id));
        } else if let Some(member) = rx.get_record::<R>(R::KIND, id)? {
            if can_read(caller, member.meta(), now) {
                out.push((language, id));
            }
        }
    }
    Ok(out)
}

/// The statuses a list shows, from the caller and the `status` filter.
pub(crate) fn status_set(
    caller: Caller,
    requested: Option<&[String]>,
) -> Result<Vec<Status>, Invalid> {
    let default = [
        Status::Publish,
        Status::Future,
        Status::Draft,
        Status::Pending,
        Status::Private,
    ];
    if !caller.has(Capability::EditPosts) {
        return match requested {
            None => Ok(vec![Status::Publish]),
            Some([one]) if one == "publish" => Ok(vec![Status::Publish]),
            Some(_) => Err(Invalid::new(
                SubCode::ForbiddenValue,
                "may only be publish for this caller.",
            )),
        };
    }
    match requested {
        None => Ok(default.to_vec()),
        Some([one]) if one == "any" => Ok(default.to_vec()),
        Some(items) => items
            .iter()
            .map(|s| {
                Status::parse(s).ok_or_else(|| {
                    Invalid::new(
                        SubCode::NotInEnum,
                        "must be a list of publish, future, draft, pending, private and trash, or any.",
                    )
                })
            })
            .collect(),
    }
}

/// Applies a `translation_of` write to a record, finding the target's group. A
/// conflict names the group's member in that language only to a caller who may read it.
pub(crate) fn join<R: PostRecord>(
    tx: &mut WriteTx,
    record: &mut R,
    target: Option<u64>,
    caller: Caller,
    now: NaiveDateTime,
) -> ServiceResult<()> {
    let target_group = match target.filter(|t| *t != 0) {
        Some(t) => tx.get_record::<PostMeta>(R::KIND, t)?.map(|m| m.group),
        None => None,
    };
    match join_group(tx, R::KIND, record.meta_mut(), target, target_group) {
        Err(ServiceError::TranslationConflict {
            language,
            translation_id: Some(holder),
        }) => {
            let readable =
                load_meta(tx, R::KIND, holder)?.is_some_and(|m| can_read(caller, &m, now));
            Err(ServiceError::TranslationConflict {
                language,
                translation_id: readable.then_some(holder),
            })
        }
        other => other,
    }
}

//! Event categories and event tags: one implementation for both kinds, which differ
//! only in hierarchy (categories have parents) and in who may manage them.

use crate::auth::Caller;
use crate::index::{Dependency, SearchIndex};
use crate::model::term::Term;
use crate::model::{Kind, Language};
use crate::service::Refusals;
use crate::service::Request;
use crate::service::{Page, ServiceError, ServiceResult};
use crate::store::{Reads, Store, StoreError, WriteTx};
use crate::values::search::SearchQuery;
use crate::values::{slug, text, Invalid, SubCode};

/// The order of an event's categories and tags in every representation: by name (ignoring
/// case), then ID.
pub(crate) fn event_order(a: &Term, b: &Term) -> std::cmp::Ordering {
    a.name
        .to_lowercase()
        .cmp(&b.name.to_lowercase())
        .then(a.id.cmp(&b.id))
}
use std::collections::HashMap;

/// Published events per term (`count`), from the index, for the given terms.
pub(crate) fn counts(
    index: &SearchIndex,
    kind: Kind,
    ids: &[u64],
    now: chrono::NaiveDateTime,
) -> ServiceResult<HashMap<u64, u64>> {
    Ok(index.term_counts(kind, ids, now.and_utc().timestamp())?)
}

/// Write fields; `None` = not sent.
#[derive(Debug, Clone, Default)]
pub(crate) struct TermWrite {
    pub name: Option<String>,
    pub description: Option<String>,
    pub slug: Option<String>,
    /// `Some(0)` = top level.
    pub parent: Option<u64>,
    pub translation_of: Option<u64>,
}

/// A term with what its representation needs besides the record.
#[derive(Debug, Clone)]
pub(crate) struct TermView {
    pub term: Term,
    pub count: u64,
    /// Slugs from the top-level ancestor down to the term (the category `url` path).
    pub path: Vec<String>,
    /// The categories above the term, nearest first.
    pub ancestors: Vec<u64>,
    pub translations: Vec<(Language, u64)>,
}

impl TermView {
    /// What the term's representation embeds besides its count, what the caller's key holds
    /// and the links: the term, its translation group and the categories above it (whose
    /// slugs make its `url`).
    pub(crate) fn dependencies(&self) -> Vec<Dependency> {
        let t = &self.term;
        let mut deps = vec![
            Dependency::Record(t.kind, t.id),
            Dependency::Group(t.kind, t.group),
        ];
        deps.extend(
            self.ancestors
                .iter()
                .map(|a| Dependency::Record(Kind::Category, *a)),
        );
        deps
    }
}

fn unknown(what: &str) -> Invalid {
    Invalid::new(
        SubCode::InvalidReference,
        format!("does not name an existing {what}."),
    )
}

/// The term with its live count (from `counts`, see [`counts`]), category path and group.
pub(crate) fn view(
    rx: &impl Reads,
    term: Term,
    counts: &HashMap<u64, u64>,
) -> ServiceResult<TermView> {
    let count = counts.get(&term.id).copied().unwrap_or(0);
    let mut path = vec![term.slug.clone()];
    let mut ancestors = Vec::new();
    let mut parent = term.parent;
    // Parents never form a cycle (updates refuse them); the bound only guards bad data.
    for _ in 0..64 {
        if parent == 0 {
            break;
        }
        match rx.get_record::<Term>(term.kind, parent)? {
            Some(p) => {
                path.insert(0, p.slug.clone());
                ancestors.push(p.id);
                parent = p.parent;
            }
            None => break,
        }
    }
    let translations = rx.group_members(term.kind, term.group)?;
    Ok(TermView {
        term,
        count,
        path,
        ancestors,
        translations,
    })
}

/// Checks the ID of a term route: unknown, deleted or other-kind IDs are invalid.
fn find(
    rx: &impl Reads,
    kind: Kind,
    id: u64,
    invalid: &mut Refusals,
) -> ServiceResult<Option<Term>> {
    let found = rx.get_record::<Term>(kind, id)?;
    if found.is_none() {
        invalid.push(("id".into(), unknown(kind.name())));
    }
    Ok(found)
}

/// An explicit language selects the group member (404 `rest_term_invalid`).
fn select_member(rx: &impl Reads, term: Term, explicit: Option<Language>) -> ServiceResult<Term> {
    let Some(language) = explicit.filter(|l| *l != term.language) else {
        return Ok(term);
    };
    let member = rx
        .group_members(term.kind, term.group)?
        .into_iter()
        .find(|(l, _)| *l == language);
    match member {
        Some((_, id)) => rx
            .get_record::<Term>(term.kind, id)?
            .ok_or(ServiceError::NoGroupMember(term.kind)),
        None => Err(ServiceError::NoGroupMember(term.kind)),
    }
}

/// Reference checks of the write fields (parent, translation_of) in the term's language.
fn check_write(
    rx: &impl Reads,
    kind: Kind,
    language: Language,
    write: &TermWrite,
    invalid: &mut Refusals,
) -> ServiceResult<()> {
    if kind == Kind::Category {
        if let Some(parent) = write.parent.filter(|p| *p != 0) {
            let ok = rx
                .get_record::<Term>(kind, parent)?
                .is_some_and(|p| p.language == language);
            if !ok {
                invalid.push(("parent".into(), unknown("category in this language")));
            }
        }
    }
    if let Some(target) = write.translation_of.filter(|t| *t != 0) {
        if rx.get_record::<Term>(kind, target)?.is_none() {
            invalid.push(("translation_of".into(), unknown(kind.name())));
        }
    }
    Ok(())
}

fn require_manage(caller: Caller, kind: Kind) -> ServiceResult<()> {
    if caller.may_manage_terms(kind) {
        Ok(())
    } else {
        Err(ServiceError::Forbidden)
    }
}

/// The term of a term route (`GET /categories/{id}`): checked, in the request's language.
pub(crate) fn get(
    store: &Store,
    kind: Kind,
    request: &Request,
    id: u64,
    mut invalid: Refusals,
) -> ServiceResult<Term> {
    let rx = store.read()?;
    let found = find(&rx, kind, id, &mut invalid)?;
    super::refuse_any(invalid)?;
    select_member(
        &rx,
        found.expect("checked above"),
        request.explicit_language,
    )
}

/// The view of a term found by [`get`], with `count` as its count.
pub(crate) fn describe(store: &Store, term: Term, count: u64) -> ServiceResult<TermView> {
    let id = term.id;
    view(&store.read()?, term, &HashMap::from([(id, count)]))
}

/// Terms of the kind and language whose name equals `name` (Unicode lower-case) under
/// `parent` (categories; siblings only).
fn same_name(terms: &[Term], kind: Kind, name: &str, parent: u64) -> Option<u64> {
    let lower = name.to_lowercase();
    terms
        .iter()
        .find(|t| t.name.to_lowercase() == lower && (kind == Kind::Tag || t.parent == parent))
        .map(|t| t.id)
}

/// A unique slug: candidate, then parent slugs appended up the hierarchy, then `-2`, `-3`, ...
fn unique_slug(
    tx: &WriteTx,
    kind: Kind,
    language: Language,
    candidate: &str,
    parent: u64,
    own: u64,
) -> ServiceResult<String> {
    let taken = |s: &str| -> ServiceResult<bool> {
        Ok(tx.slug_owner(kind, language, s)?.is_some_and(|o| o != own))
    };
    let mut current = candidate.to_string();
    if !taken(&current)? {
        return Ok(current);
    }
    let mut ancestor = parent;
    while ancestor != 0 {
        let Some(a) = tx.get_record::<Term>(kind, ancestor)? else {
            break;
        };
        current = format!("{current}-{}", a.slug);
        if !taken(&current)? {
            return Ok(current);
        }
        ancestor = a.parent;
    }
    let mut n = 2;
    loop {
        let next = slug::with_suffix(&current, n);
        if !taken(&next)? {
            return Ok(next);
        }
        n += 1;
    }
}

fn join_group(tx: &mut WriteTx, term: &mut Term, target: Option<u64>) -> ServiceResult<()> {
    let Some(target) = target else {
        return Ok(());
    };
    let new_group = if target == 0 {
        term.id
    } else {
        tx.get_record::<Term>(term.kind, target)?
            .map(|t| t.group)
            .unwrap_or(target)
    };
    if new_group == term.group {
        return Ok(());
    }
    if let Some((_, holder)) = tx
        .group_members(term.kind, new_group)?
        .into_iter()
        .find(|(l, id)| *l == term.language && *id != term.id)
    {
        return Err(ServiceError::TranslationConflict {
            language: term.language,
            // Terms have no status: every member is public.
            translation_id: Some(holder),
        });
    }
    tx.remove_group_member(term.kind, term.group, term.language)?;
    tx.set_group_member(term.kind, new_group, term.language, term.id)?;
    term.group = new_group;
    Ok(())
}

fn clean_description(caller: Caller, description: &str) -> String {
    crate::service::posts::clean_html(caller, description)
}

/// `POST /categories`, `POST /tags`.
pub(crate) fn create(
    store: &Store,
    index: &SearchIndex,
    kind: Kind,
    request: &Request,
    write: &TermWrite,
    mut invalid: Refusals,
) -> ServiceResult<TermView> {
    store.write(|tx| {
        check_write(tx, kind, request.language, write, &mut invalid)?;
        super::refuse_any(invalid)?;
        require_manage(request.caller, kind)?;
        if kind == Kind::Tag && write.parent.is_some() {
            return Err(ServiceError::NotHierarchical);
        }
        let name = write.name.clone().unwrap_or_default();
        let parent = write.parent.unwrap_or(0);
        let requested_slug = write
            .slug
            .as_deref()
            .map(slug::sanitize)
            .filter(|s| !s.is_empty());
        let siblings: Vec<Term> = tx
            .scan::<Term>(kind)?
            .into_iter()
            .filter(|t| t.language == request.language)
            .collect();
        // Duplicate names at the same level.
        if let Some(existing) = same_name(&siblings, kind, &name, parent) {
            let existing_slug = siblings
                .iter()
                .find(|t| t.id == existing)
                .map(|t| t.slug.clone());
            match &requested_slug {
                None => return Err(ServiceError::TermExists(existing)),
                Some(s) if Some(s) == existing_slug.as_ref() => {
                    return Err(ServiceError::TermExists(existing))
                }
                Some(s) => {
                    if let Some(holder) = siblings.iter().find(|t| &t.slug == s) {
                        if kind == Kind::Tag {
                            return Err(ServiceError::TermExists(existing));
                        }
                        if holder.parent == parent {
                            return Err(ServiceError::TermExists(holder.id));
                        }
                    }
                }
            }
        }
        let id = tx.next_id(kind.sequence())?;
        let candidate = requested_slug.unwrap_or_else(|| slug::sanitize(&name));
        let slug = if candidate.is_empty() {
            id.to_string()
        } else {
            unique_slug(tx, kind, request.language, &candidate, parent, id)?
        };
        let mut term = Term {
            id,
            kind,
            language: request.language,
            group: id,
            name,
            slug,
            description: clean_description(
                request.caller,
                write.description.as_deref().unwrap_or(""),
            ),
            parent,
        };
        tx.set_slug(kind, term.language, &term.slug, id)?;
        tx.set_group_member(kind, id, term.language, id)?;
        join_group(tx, &mut term, write.translation_of)?;
        tx.put_record(kind, id, &term)?;
        let counts = counts(index, kind, &[term.id], request.now)?;
        view(tx, term, &counts)
    })
}

/// `POST/PUT/PATCH /categories/{id}`, `/tags/{id}`.
pub(crate) fn update(
    store: &Store,
    index: &SearchIndex,
    kind: Kind,
    request: &Request,
    id: u64,
    write: &TermWrite,
    mut invalid: Refusals,
) -> ServiceResult<TermView> {
    store.write(|tx| {
        let found = find(tx, kind, id, &mut invalid)?;
        let language = found
            .as_ref()
            .map(|t| t.language)
            .unwrap_or(request.language);
        check_write(tx, kind, language, write, &mut invalid)?;
        super::refuse_any(invalid)?;
        let mut term = select_member(tx, found.expect("checked above"), request.explicit_language)?;
        require_manage(request.caller, kind)?;
        if kind == Kind::Tag && write.parent.is_some() {
            return Err(ServiceError::NotHierarchical);
        }
        let parent_changes = write.parent.is_some_and(|p| p != term.parent);
        if let Some(parent) = write.parent {
            // A category may not become its own ancestor.
            let mut ancestor = parent;
            while ancestor != 0 {
                if ancestor == term.id {
                    return Err(ServiceError::TermCycle);
                }
                ancestor = tx
                    .get_record::<Term>(kind, ancestor)?
                    .map(|a| a.parent)
                    .unwrap_or(0);
            }
            term.parent = parent;
        }
        if let Some(name) = &write.name {
            term.name = name.clone();
        }
        if let Some(description) = &write.description {
            term.description = clean_description(request.caller, description);
        }
        if let Some(requested) = &write.slug {
            let mut candidate = slug::sanitize(requested);
            let derived = candidate.is_empty();
            if derived {
                candidate = slug::sanitize(&term.name);
            }
            let taken = tx
                .slug_owner(kind, term.language, &candidate)?
                .is_some_and(|o| o != term.id);
            let new_slug = if taken && !parent_changes && !derived {
                return Err(ServiceError::DuplicateTermSlug);
            } else if candidate.is_empty() {
                term.id.to_string()
            } else {
                unique_slug(tx, kind, term.language, &candidate, term.parent, term.id)?
            };
            if new_slug != term.slug {
                tx.remove_slug(kind, term.language, &term.slug)?;
                tx.set_slug(kind, term.language, &new_slug, term.id)?;
                term.slug = new_slug;
            }
        }
        join_group(tx, &mut term, write.translation_of)?;
        tx.put_record(kind, term.id, &term)?;
        let counts = counts(index, kind, &[term.id], request.now)?;
        view(tx, term, &counts)
    })
}

/// `DELETE /categories/{id}`, `/tags/{id}`: permanent; children move up to the deleted
/// category's parent; the term leaves its group. Returns the term as it was.
pub(crate) fn delete(
    store: &Store,
    index: &SearchIndex,
    kind: Kind,
    request: &Request,
    id: u64,
    mut invalid: Refusals,
) -> ServiceResult<TermView> {
    store.write(|tx| {
        let found = find(tx, kind, id, &mut invalid)?;
        super::refuse_any(invalid)?;
        let term = select_member(tx, found.expect("checked above"), request.explicit_language)?;
        require_manage(request.caller, kind)?;
        let counts = counts(index, kind, &[term.id], request.now)?;
        let before = view(tx, term.clone(), &counts)?;
        super::cascades::forget_term(tx, index, kind, term.id, request.now)?;
        remove(tx, &term)?;
        Ok(before)
    })
}

/// Takes a term out of the store: its children move up to its parent; its slug and group
/// membership go. The events carrying it are the caller's to update.
pub(crate) fn remove(tx: &mut WriteTx, term: &Term) -> Result<(), StoreError> {
    let kind = term.kind;
    for mut child in tx
        .scan::<Term>(kind)?
        .into_iter()
        .filter(|t| t.parent == term.id)
    {
        child.parent = term.parent;
        tx.put_record(kind, child.id, &child)?;
    }
    tx.remove_slug(kind, term.language, &term.slug)?;
    tx.remove_group_member(kind, term.group, term.language)?;
    tx.remove_record(kind, term.id)
}

/// The parameters of `GET /categories` and `GET /tags`.
#[derive(Debug, Clone)]
pub(crate) struct TermListQuery {
    pub page: usize,
    pub per_page: usize,
    pub search: Option<String>,
    pub include: Option<Vec<u64>>,
    pub exclude: Option<Vec<u64>>,
    pub descending: bool,
    pub orderby: String,
    pub hide_empty: bool,
    pub parent: Option<u64>,
    pub slug: Option<String>,
    /// `post`/`event`: only terms this event carries (any status, whoever asks), with the
    /// name of the parameter that gave it (`event` wins over `post`) for error reports.
    pub event: Option<(&'static str, u64)>,
}

/// The selection and ordering of term lists. Term lists are small and not in
/// the search index: they are computed from the store.
pub(crate) fn list(
    store: &Store,
    index: &SearchIndex,
    kind: Kind,
    request: &Request,
    query: &TermListQuery,
    mut invalid: Refusals,
) -> ServiceResult<Page<TermView>> {
    let rx = store.read()?;
    let terms: Vec<Term> = rx
        .scan::<Term>(kind)?
        .into_iter()
        .filter(|t| t.language == request.language)
        .collect();
    let known = |ids: &[u64]| ids.iter().all(|id| terms.iter().any(|t| t.id == *id));
    for (name, ids) in [("include", &query.include), ("exclude", &query.exclude)] {
        if ids.as_deref().is_some_and(|ids| !known(ids)) {
            invalid.push((
                name.into(),
                unknown(&format!("{} in this language", kind.name())),
            ));
        }
    }
    if let Some(parent) = query.parent.filter(|p| *p != 0) {
        if !terms.iter().any(|t| t.id == parent) {
            invalid.push(("parent".into(), unknown("category in this language")));
        }
    }
    if let Some((name, id)) = query.event.as_ref() {
        let ok = rx
            .get_record::<crate::model::post::PostMeta>(Kind::Event, *id)?
            .is_some_and(|m| m.language == request.language);
        if !ok {
            invalid.push((name.to_string(), unknown("event in this language")));
        }
    }
    super::refuse_any(invalid)?;
    let search = query
        .search
        .as_deref()
        .map(|q| SearchQuery::parse(q, request.language))
        .filter(|q| !q.is_empty());
    let wanted_slug = query.slug.as_deref().map(slug::sanitize);
    let ids: Vec<u64> = terms.iter().map(|t| t.id).collect();
    let counts = counts(index, kind, &ids, request.now)?;
    let count_of = |id: u64| counts.get(&id).copied().unwrap_or(0);
    let carried: Option<Vec<u64>> = match query.event {
        Some((_, id)) => rx
            .get_record::<crate::model::event::Event>(Kind::Event, id)?
            .map(|e| {
                if kind == Kind::Category {
                    e.categories
                } else {
                    e.tags
                }
            }),
        None => None,
    };
    // With `hide_empty`, a category with count 0 stays when a descendant has a count.
    let has_counted_descendant = |id: u64| {
        let mut stack = vec![id];
        while let Some(current) = stack.pop() {
            for child in terms.iter().filter(|t| t.parent == current) {
                if count_of(child.id) > 0 {
                    return true;
                }
                stack.push(child.id);
            }
        }
        false
    };
    let mut selected: Vec<&Term> = terms
        .iter()
        .filter(|t| query.include.as_ref().is_none_or(|ids| ids.contains(&t.id)))
        .filter(|t| {
            query
                .exclude
                .as_ref()
                .is_none_or(|ids| !ids.contains(&t.id))
        })
        .filter(|t| {
            search
                .as_ref()
                .is_none_or(|q| q.matches(&[&t.name, &t.slug]))
        })
        .filter(|t| wanted_slug.as_ref().is_none_or(|s| &t.slug == s))
        .filter(|t| query.parent.is_none_or(|p| t.parent == p))
        .filter(|t| carried.as_ref().is_none_or(|ids| ids.contains(&t.id)))
        .filter(|t| {
            !query.hide_empty
                || count_of(t.id) > 0
                || (kind == Kind::Category && has_counted_descendant(t.id))
        })
        .collect();
    let position = |id: u64| {
        query
            .include
            .as_ref()
            .and_then(|ids| ids.iter().position(|i| *i == id))
    };
    selected.sort_by(|a, b| {
        let key = match query.orderby.as_str() {
            "slug" => a.slug.cmp(&b.slug),
            "description" => a
                .description
                .to_lowercase()
                .cmp(&b.description.to_lowercase()),
            "count" => count_of(a.id).cmp(&count_of(b.id)),
            "id" | "term_id" | "term_group" | "none" => a.id.cmp(&b.id),
            "parent" => a.parent.cmp(&b.parent),
            "include" if query.include.is_some() => position(a.id).cmp(&position(b.id)),
            _ => a.name.to_lowercase().cmp(&b.name.to_lowercase()),
        };
        let key = if query.descending { key.reverse() } else { key };
        key.then(a.id.cmp(&b.id))
    });
    let all = selected.into_iter().cloned().collect::<Vec<_>>();
    let page = Page::of(all, query.page, query.per_page);
    let items = page
        .items
        .into_iter()
        .map(|t| view(&rx, t, &counts))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Page {
        items,
        total: page.total,
        page: page.page,
        per_page: page.per_page,
    })
}

/// Term names are stored cleaned (tags removed, whitespace collapsed, trimmed).
/// Names are limited to 200 characters.
pub(crate) const MAX_NAME_CHARS: usize = 200;

pub(crate) fn clean_name(name: &str) -> String {
    text::clean_term_name(name)
}

/// Finds a term of the language by slug form, then by exact name, or creates it (an event
/// write naming a term). Returns its ID.
pub(crate) fn find_or_create(
    tx: &mut WriteTx,
    kind: Kind,
    language: Language,
    name: &str,
) -> ServiceResult<u64> {
    let name = clean_name(name);
    let wanted = slug::sanitize(&name);
    let terms: Vec<Term> = tx
        .scan::<Term>(kind)?
        .into_iter()
        .filter(|t| t.language == language)
        .collect();
    if let Some(t) = terms
        .iter()
        .find(|t| !wanted.is_empty() && t.slug == wanted)
        .or_else(|| terms.iter().find(|t| t.name == name))
    {
        return Ok(t.id);
    }
    let id = tx.next_id(kind.sequence())?;
    let slug = if wanted.is_empty() {
        id.to_string()
    } else {
        unique_slug(tx, kind, language, &wanted, 0, id)?
    };
    let term = Term {
        id,
        kind,
        language,
        group: id,
        name,
        slug,
        description: String::new(),
        parent: 0,
    };
    tx.set_slug(kind, language, &term.slug, id)?;
    tx.set_group_member(kind, id, language, id)?;
    tx.put_record(kind, id, &term)?;
    Ok(id)
}

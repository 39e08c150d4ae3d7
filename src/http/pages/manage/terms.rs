//! The editors' pages of categories and tags: a list (search, event counts, bulk delete) and a
//! form (name, slug, description, a category's parent), read and written as the terms' JSON
//! routes are.

use super::*;
use crate::http::resources::terms::{term_write, write_params};
use crate::model::Kind;
use crate::service::terms::{self, TermListQuery, TermView};

/// Terms per list page.
const TERMS_PER_PAGE: usize = 50;

/// The list path of `kind` under `/manage/`.
fn collection(kind: Kind) -> &'static str {
    match kind {
        Kind::Category => "categories",
        _ => "tags",
    }
}

pub(super) fn term_query(page: usize, per_page: usize, search: Option<String>) -> TermListQuery {
    TermListQuery {
        page,
        per_page,
        search,
        include: None,
        exclude: None,
        descending: false,
        orderby: "name".into(),
        hide_empty: false,
        parent: None,
        slug: None,
        event: None,
    }
}

pub(super) fn list_page(
    state: &AppState,
    ctx: &PageCtx,
    req: &ManageRequest,
    editor: &Editor,
    kind: Kind,
    now: NaiveDateTime,
) -> Result<Answer, ServiceError> {
    let t = ManageTexts::of(ctx.locale.language);
    let names = t.kind(kind);
    let asked = ListAsked::of(req);
    let (search, page_number) = (asked.search.clone(), asked.page);
    let request = request_of(ctx, editor, now);
    let query = term_query(page_number, TERMS_PER_PAGE, search.clone());
    let (items, total) = match terms::list(
        &state.store,
        &state.index,
        kind,
        &request,
        &query,
        Vec::new(),
    ) {
        Ok(page) => (page.items, page.total),
        Err(ServiceError::PageNotFound(_)) | Err(ServiceError::Invalid(_)) => (Vec::new(), 0),
        Err(e) => return Err(e),
    };
    let base = ctx_path(ctx, &format!("{}/", collection(kind)));
    let link = |n: usize| asked.link(&base, n);
    let pages = total.div_ceil(TERMS_PER_PAGE).max(1);
    let notice = notice(t, req);
    let html = layout(
        ctx,
        &head(ctx, names.plural),
        html! {
            (editor_bar(ctx, editor))
            h1 { (names.plural) }
            p { a.button href=(format!("{base}new")) { (names.new) } }
            @if let Some((text, role)) = &notice {
                p.notice role=(role) { (text) }
            }
            form.manage-filter method="get" action=(base) role="search" {
                p {
                    label for="s" { (t.search) }
                    input #s type="search" name="s" value=(search.clone().unwrap_or_default());
                }
                p { button type="submit" { (t.filter) } }
            }
            @if items.is_empty() {
                p { (t.nothing_here) }
            } @else {
                (bulk_table(
                    ctx,
                    editor,
                    &BulkList {
                        label: names.plural,
                        action: base.trim_end_matches('/').to_string(),
                        back: link(page_number),
                        columns: &[t.name, t.slug, t.events],
                        actions: &[("delete", t.delete)],
                    },
                    items.iter().map(|view| {
                        let cells = vec![
                            html! { (view.term.slug) },
                            html! { (ctx.locale.count(view.count as usize)) },
                        ];
                        (view.term.id, format!("{base}{}", view.term.id), view.term.name.clone(), cells)
                    }),
                ))
                (pager(t, names.plural, page_number, pages, &link))
            }
        },
    );
    Ok(page(StatusCode::OK, html))
}

/// Deletes the selected terms (terms have no trash), each by the API's rules.
pub(super) fn bulk(
    state: &AppState,
    ctx: &PageCtx,
    req: &ManageRequest,
    editor: &Editor,
    kind: Kind,
    now: NaiveDateTime,
) -> Result<Answer, ServiceError> {
    let request = request_of(ctx, editor, now);
    let action = req.field("action").unwrap_or("").to_string();
    bulk_each(
        ctx,
        req,
        &format!("{}/", collection(kind)),
        |id| match action.as_str() {
            "delete" => terms::delete(&state.store, &state.index, kind, &request, id, Vec::new())
                .map(|_| ()),
            _ => Err(ServiceError::Forbidden),
        },
    )
}

/// What the form shows: the values by parameter name.
struct TermValues {
    name: String,
    slug: String,
    description: String,
    parent: u64,
}

pub(super) fn form_page(
    state: &AppState,
    ctx: &PageCtx,
    req: &ManageRequest,
    editor: &Editor,
    kind: Kind,
    which: &str,
    now: NaiveDateTime,
) -> Result<Answer, ServiceError> {
    let request = request_of(ctx, editor, now);
    if !editor.caller().may_manage_terms(kind) {
        return Ok(refused(ctx, editor));
    }
    let id = match Which::of(which) {
        None => return Ok(not_found(ctx)),
        Some(Which::New) => {
            let values = TermValues {
                name: String::new(),
                slug: String::new(),
                description: String::new(),
                parent: 0,
            };
            return term_form(
                state,
                ctx,
                editor,
                &request,
                kind,
                None,
                &values,
                &[],
                false,
            );
        }
        Some(Which::Id(id)) => id,
    };
    let found = terms::get(&state.store, kind, &request, id, Vec::new());
    let term = match editable_or_page(found, ctx, editor)? {
        Ok(term) => term,
        Err(page) => return Ok(page),
    };
    let values = TermValues {
        name: term.name.clone(),
        slug: term.slug.clone(),
        description: term.description.clone(),
        parent: term.parent,
    };
    let saved = req.query_param("saved").is_some();
    term_form(
        state,
        ctx,
        editor,
        &request,
        kind,
        Some(id),
        &values,
        &[],
        saved,
    )
}

pub(super) fn save(
    state: &AppState,
    ctx: &PageCtx,
    req: &ManageRequest,
    editor: &Editor,
    kind: Kind,
    which: &str,
    now: NaiveDateTime,
) -> Result<Answer, ServiceError> {
    let t = ManageTexts::of(ctx.locale.language);
    let request = request_of(ctx, editor, now);
    let Some(id) = Which::of(which).map(|w| w.id()) else {
        return Ok(not_found(ctx));
    };
    let field = |name: &str| req.field(name).unwrap_or("").to_string();
    let values = TermValues {
        name: field("name"),
        slug: field("slug"),
        description: field("description"),
        parent: field("parent").parse().unwrap_or(0),
    };
    if values.name.trim().is_empty() {
        let errors = vec![("name".to_string(), t.required.to_string())];
        return term_form(
            state, ctx, editor, &request, kind, id, &values, &errors, false,
        );
    }
    let mut body = serde_json::Map::new();
    body.insert("name".into(), json!(values.name));
    if !values.slug.trim().is_empty() {
        body.insert("slug".into(), json!(values.slug.trim()));
    }
    if !values.description.is_empty() {
        body.insert("description".into(), json!(values.description));
    }
    if kind == Kind::Category {
        body.insert("parent".into(), json!(values.parent));
    }
    let raw = crate::values::form::RawParams::from_json_object(body);
    let mut params = match crate::http::params::validate(&write_params(kind, id.is_none()), &raw) {
        Ok(params) => params,
        Err(_) => {
            let errors = vec![(String::new(), t.form_expired.to_string())];
            return term_form(
                state, ctx, editor, &request, kind, id, &values, &errors, false,
            );
        }
    };
    let write = term_write(&mut params, kind);
    let invalid = params.invalid.clone();
    let written = match id {
        None => terms::create(&state.store, &state.index, kind, &request, &write, invalid),
        Some(id) => terms::update(
            &state.store,
            &state.index,
            kind,
            &request,
            id,
            &write,
            invalid,
        ),
    };
    after_write(
        written.map(|view| format!("{}/{}", collection(kind), view.term.id)),
        ctx,
        editor,
        |errors| {
            term_form(
                state, ctx, editor, &request, kind, id, &values, &errors, false,
            )
        },
    )
}

#[allow(clippy::too_many_arguments)]
fn term_form(
    state: &AppState,
    ctx: &PageCtx,
    editor: &Editor,
    request: &Request,
    kind: Kind,
    id: Option<u64>,
    values: &TermValues,
    errors: &[(String, String)],
    saved: bool,
) -> Result<Answer, ServiceError> {
    let t = ManageTexts::of(ctx.locale.language);
    let names = t.kind(kind);
    let title = if id.is_some() { names.edit } else { names.new };
    let action = match id {
        Some(id) => ctx_path(ctx, &format!("{}/{id}", collection(kind))),
        None => ctx_path(ctx, &format!("{}/new", collection(kind))),
    };
    let parents: Vec<TermView> = if kind == Kind::Category {
        terms::list(
            &state.store,
            &state.index,
            kind,
            request,
            &term_query(1, 100, None),
            Vec::new(),
        )?
        .items
        .into_iter()
        .filter(|v| Some(v.term.id) != id)
        .collect()
    } else {
        Vec::new()
    };
    let error = |field: &str| {
        errors
            .iter()
            .find(|(f, _)| f == field)
            .map(|(_, e)| e.as_str())
    };
    let known = ["name", "slug", "description", "parent"];
    let status = if errors.is_empty() {
        StatusCode::OK
    } else {
        StatusCode::UNPROCESSABLE_ENTITY
    };
    let described = |field: &str| error(field).map(|_| format!("{field}-error"));
    let html = layout(
        ctx,
        &head(ctx, title),
        html! {
            (editor_bar(ctx, editor))
            h1 { (title) }
            @if saved { p.notice role="status" { (t.saved) } }
            @if !errors.is_empty() {
                div.error role="alert" {
                    p { (t.form_has_errors) }
                    @for (field, message) in errors {
                        @if !known.contains(&field.as_str()) { p { (message) } }
                    }
                }
            }
            form.manage-form.event-form method="post" action=(action) {
                input type="hidden" name="form_token" value=(editor.session.form_token);
                p {
                    label for="name" { (t.name) }
                    input #name type="text" name="name" value=(values.name) required
                        aria-invalid=[error("name").map(|_| "true")] aria-describedby=[described("name")];
                    @if let Some(e) = error("name") { span.error id="name-error" { (e) } }
                }
                p {
                    label for="slug" { (t.slug) }
                    input #slug type="text" name="slug" value=(values.slug)
                        aria-invalid=[error("slug").map(|_| "true")] aria-describedby=[described("slug")];
                    @if let Some(e) = error("slug") { span.error id="slug-error" { (e) } }
                }
                p {
                    label for="description" { (t.description) }
                    textarea #description name="description" rows="4" { (values.description) }
                    @if let Some(e) = error("description") { span.error { (e) } }
                }
                @if kind == Kind::Category {
                    p {
                        label for="parent" { (t.parent) }
                        select #parent name="parent" aria-describedby=[described("parent")] {
                            option value="0" { (t.none) }
                            @for p in &parents {
                                option value=(p.term.id) selected[p.term.id == values.parent] { (p.term.name) }
                            }
                        }
                        @if let Some(e) = error("parent") { span.error id="parent-error" { (e) } }
                    }
                }
                p { button type="submit" { (t.save) } }
            }
        },
    );
    Ok(page(status, html))
}

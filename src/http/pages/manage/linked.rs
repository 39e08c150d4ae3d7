//! The editors' pages of venues and organizers: a list (search, status, bulk trash and
//! restore) and a form, generic over the two kinds. As for events, the form's fields are read
//! by the JSON routes' parameter code and written by the same service calls.

use super::*;
use crate::http::resources::linked::{self as resource, LinkedResource};
use crate::service::linked;

/// The list of `R` records: `/manage/venues/`, `/manage/organizers/`.
pub(super) fn list_page<R: LinkedResource>(
    state: &AppState,
    ctx: &PageCtx,
    req: &ManageRequest,
    editor: &Editor,
    now: NaiveDateTime,
) -> Result<Answer, ServiceError> {
    let t = ManageTexts::of(ctx.locale.language);
    let names = t.kind(R::KIND);
    let asked = ListAsked::of(req);
    let (status, search, page_number) = (asked.status, asked.search.clone(), asked.page);
    let query = linked::ListQuery {
        page: page_number,
        per_page: PER_PAGE,
        search: search.clone(),
        status: Some(statuses(status)),
        ..linked::ListQuery::default()
    };
    let request = request_of(ctx, editor, now);
    let (items, total) =
        match linked::list::<R>(&state.store, &state.index, &request, &query, Vec::new()) {
            Ok(page) => (page.items, page.total),
            Err(ServiceError::PageNotFound(_))
            | Err(ServiceError::Invalid(_))
            | Err(ServiceError::Forbidden) => (Vec::new(), 0),
            Err(e) => return Err(e),
        };
    let base = ctx_path(ctx, &format!("{}/", R::COLLECTION));
    let link = |n: usize| asked.link(&base, n);
    let pages = total.div_ceil(PER_PAGE).max(1);
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
            (filter_form(ctx, &base, status, search.as_deref(), None))
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
                        columns: &[t.name, t.status, t.last_change],
                        actions: &[("trash", t.trash), ("restore", t.restore)],
                    },
                    items.iter().map(|record| {
                        let meta = record.meta();
                        let cells = vec![html! { (t.status(meta.status)) }, changed(ctx, meta.modified_utc)];
                        (meta.id, format!("{base}{}", meta.id), meta.title.clone(), cells)
                    }),
                ))
                (pager(t, names.plural, page_number, pages, &link))
            }
        },
    );
    Ok(page(StatusCode::OK, html))
}

/// Trash or restore the selected records, each by the API's rules.
pub(super) fn bulk<R: LinkedResource>(
    state: &AppState,
    ctx: &PageCtx,
    req: &ManageRequest,
    editor: &Editor,
    now: NaiveDateTime,
) -> Result<Answer, ServiceError>
where
    R::Fields: Default,
{
    let request = request_of(ctx, editor, now);
    let action = req.field("action").unwrap_or("").to_string();
    bulk_each(
        ctx,
        req,
        &format!("{}/", R::COLLECTION),
        |id| match action.as_str() {
            "trash" => linked::delete::<R>(
                &state.store,
                &state.index,
                &request,
                &linked::Target::Id(id),
                Vec::new(),
            )
            .map(|_| ()),
            "restore" => linked::restore::<R>(&state.store, &request, id).map(|_| ()),
            _ => Err(ServiceError::Forbidden),
        },
    )
}

/// The form of a new record (`which` = `new`) or of the record `which`.
pub(super) fn form_page<R: LinkedResource>(
    state: &AppState,
    ctx: &PageCtx,
    req: &ManageRequest,
    editor: &Editor,
    which: &str,
    now: NaiveDateTime,
) -> Result<Answer, ServiceError> {
    let request = request_of(ctx, editor, now);
    let id = match Which::of(which) {
        None => return Ok(not_found(ctx)),
        Some(Which::New) => {
            let mut values = serde_json::Map::new();
            values.insert("status".into(), json!("publish"));
            values.insert("show_map".into(), json!(true));
            values.insert("show_map_link".into(), json!(true));
            return Ok(record_form::<R>(ctx, editor, None, &values, &[], false));
        }
        Some(Which::Id(id)) => id,
    };
    let record: R =
        match editable_or_page(linked::editable(&state.store, &request, id), ctx, editor)? {
            Ok(record) => record,
            Err(page) => return Ok(page),
        };
    let view = linked::view(&state.store, record, request.caller, now)?;
    let links = crate::http::links::Links::new(state.public_url.clone(), None);
    let shown = view.record.represent(&crate::http::render::LinkedContext {
        links: &links,
        now,
        image: view.image.clone(),
        translations: view.translations.clone(),
        json_ld: false,
    });
    let mut values = shown.as_object().cloned().unwrap_or_default();
    // The stored text, as the export form gives it, not the rendered paragraphs.
    values.insert("description".into(), json!(view.record.meta().description));
    values.insert("status".into(), json!(view.record.meta().status.as_str()));
    let saved = req.query_param("saved").is_some();
    Ok(record_form::<R>(ctx, editor, Some(id), &values, &[], saved))
}

/// Creates or updates the record from the form.
pub(super) fn save<R: LinkedResource>(
    state: &AppState,
    ctx: &PageCtx,
    req: &ManageRequest,
    editor: &Editor,
    which: &str,
    now: NaiveDateTime,
) -> Result<Answer, ServiceError> {
    let t = ManageTexts::of(ctx.locale.language);
    let mut request = request_of(ctx, editor, now);
    let Some(id) = Which::of(which).map(|w| w.id()) else {
        return Ok(not_found(ctx));
    };
    if let Some(id) = id {
        let found = linked::editable::<R>(&state.store, &request, id);
        match editable_or_page(found, ctx, editor)? {
            Ok(record) => request.language = record.meta().language,
            Err(page) => return Ok(page),
        }
    }
    // The form's values as the parameters of a JSON body.
    let mut values = serde_json::Map::new();
    let mut names: Vec<&str> = vec![R::NAME_FIELD, "description", "status"];
    let specs = resource::write_params::<R>(id.is_none());
    names.extend(field_names::<R>());
    for name in &names {
        let given = req.field(name).unwrap_or("").to_string();
        let value = if is_flag(name) {
            json!(given == "true")
        } else if is_coordinate(name) {
            given
                .trim()
                .parse::<f64>()
                .map_or(json!(given.trim()), |n| json!(n))
        } else {
            json!(given)
        };
        values.insert((*name).to_string(), value);
    }
    let name_missing = values
        .get(R::NAME_FIELD)
        .and_then(Value::as_str)
        .is_none_or(|n| n.trim().is_empty());
    if name_missing {
        let errors = vec![(R::NAME_FIELD.to_string(), t.required.to_string())];
        return Ok(record_form::<R>(ctx, editor, id, &values, &errors, false));
    }
    let raw = crate::values::form::RawParams::from_json_object(values.clone());
    let params = match crate::http::params::validate(&specs, &raw) {
        Ok(params) => params,
        Err(_) => {
            let errors = vec![(String::new(), t.form_expired.to_string())];
            return Ok(record_form::<R>(ctx, editor, id, &values, &errors, false));
        }
    };
    let (params, write, fields) = resource::write::<R>(&params);
    let invalid = params.invalid.clone();
    let written = match id {
        None => linked::create::<R>(&state.store, &request, &write, &fields, invalid),
        Some(id) => linked::update::<R>(
            &state.store,
            &request,
            &linked::Target::Id(id),
            &write,
            &fields,
            invalid,
        ),
    };
    after_write(
        written.map(|record| format!("{}/{}", R::COLLECTION, record.meta().id)),
        ctx,
        editor,
        |errors| Ok(record_form::<R>(ctx, editor, id, &values, &errors, false)),
    )
}

/// The form of a record of `R` with `values` (by parameter name) and `errors`.
fn record_form<R: LinkedResource>(
    ctx: &PageCtx,
    editor: &Editor,
    id: Option<u64>,
    values: &serde_json::Map<String, Value>,
    errors: &[(String, String)],
    saved: bool,
) -> Answer {
    let t = ManageTexts::of(ctx.locale.language);
    let names = t.kind(R::KIND);
    let title = if id.is_some() { names.edit } else { names.new };
    let action = match id {
        Some(id) => ctx_path(ctx, &format!("{}/{id}", R::COLLECTION)),
        None => ctx_path(ctx, &format!("{}/new", R::COLLECTION)),
    };
    let text = |name: &str| match values.get(name) {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Number(n)) => n.to_string(),
        _ => String::new(),
    };
    let error = |field: &str| {
        errors
            .iter()
            .find(|(f, _)| f == field)
            .map(|(_, e)| e.as_str())
    };
    let fields: Vec<&'static str> = field_names::<R>();
    let status = if errors.is_empty() {
        StatusCode::OK
    } else {
        StatusCode::UNPROCESSABLE_ENTITY
    };
    let statuses = [
        Status::Publish,
        Status::Draft,
        Status::Pending,
        Status::Private,
    ];
    let input = |name: &str, label: &str, kind: &str, required: bool| {
        let described = error(name).map(|_| format!("{name}-error"));
        html! {
            p {
                label for=(name) { (label) }
                input id=(name) name=(name) type=(kind) value=(text(name)) required[required]
                    aria-invalid=[error(name).map(|_| "true")] aria-describedby=[described];
                @if let Some(e) = error(name) { span.error id=(format!("{name}-error")) { (e) } }
            }
        }
    };
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
                        @if field.is_empty() || !(fields.contains(&field.as_str()) || field == R::NAME_FIELD || field == "description" || field == "status") {
                            p { (message) }
                        }
                    }
                }
            }
            form.manage-form.event-form method="post" action=(action) {
                input type="hidden" name="form_token" value=(editor.session.form_token);
                (input(R::NAME_FIELD, t.name, "text", true))
                p {
                    label for="description" { (t.description) }
                    textarea #description name="description" rows="6" { (text("description")) }
                    @if let Some(e) = error("description") { span.error { (e) } }
                }
                @for name in &fields {
                    @if is_flag(name) {
                        @let on = values.get(*name).and_then(Value::as_bool).unwrap_or(false);
                        p.check {
                            input id=(name) type="checkbox" name=(name) value="true" checked[on];
                            label for=(name) { (t.field_label(name)) }
                        }
                    } @else {
                        (input(name, t.field_label(name), if *name == "website" { "url" } else if *name == "email" { "email" } else { "text" }, false))
                    }
                }
                p {
                    label for="status" { (t.status) }
                    select #status name="status" {
                        @for s in statuses {
                            option value=(s.as_str()) selected[text("status") == s.as_str()] { (t.status(s)) }
                        }
                    }
                    @if let Some(e) = error("status") { span.error { (e) } }
                }
                p { button type="submit" { (t.save) } }
            }
        },
    );
    page(status, html)
}

/// The kind's own fields, in the order of its parameters.
fn field_names<R: LinkedResource>() -> Vec<&'static str> {
    R::field_params().iter().map(|p| p.name).collect()
}

fn is_flag(name: &str) -> bool {
    matches!(name, "show_map" | "show_map_link")
}

fn is_coordinate(name: &str) -> bool {
    matches!(name, "geo_lat" | "geo_lng")
}

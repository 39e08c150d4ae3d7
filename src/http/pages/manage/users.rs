//! The administrators' page of users: the list, adding a user with a role, resetting a
//! password — what `almanac user` does, in the browser, by the same service functions.

use super::*;
use crate::model::Role;
use crate::service::users;

/// `/manage/users/`: the users, and the form that adds one.
pub(super) fn page_of(
    state: &AppState,
    ctx: &PageCtx,
    editor: &Editor,
    outcome: Option<(&str, String)>,
    kept: (&str, &str),
    status: StatusCode,
) -> Result<Answer, ServiceError> {
    let t = ManageTexts::of(ctx.locale.language);
    if !users::may_manage(editor.caller()) {
        return Ok(refused(ctx, editor));
    }
    let all = users::list(&state.store).map_err(user_failure)?;
    let (field_error, notice) = match &outcome {
        Some(("notice", text)) => (None, Some(text.as_str())),
        Some((field, text)) => (Some((*field, text.as_str())), None),
        None => (None, None),
    };
    let error = |field: &str| field_error.filter(|(f, _)| *f == field).map(|(_, e)| e);
    let action = ctx_path(ctx, "users");
    let html = layout(
        ctx,
        &head(ctx, t.users),
        html! {
            (editor_bar(ctx, editor))
            h1 { (t.users) }
            @if let Some(text) = notice { p.notice role="status" { (text) } }
            div.table-scroll tabindex="0" role="region" aria-label=(t.users) {
                table.manage-events {
                    caption.vh { (t.users) }
                    thead { tr { th scope="col" { (t.user_name) } th scope="col" { (t.role) } th scope="col" { (t.reset_password) } } }
                    tbody {
                        @for user in &all {
                            tr {
                                th scope="row" { (user.name) }
                                td { (t.role_name(user.role)) }
                                td {
                                    form method="post" action=(action) {
                                        input type="hidden" name="form_token" value=(editor.session.form_token);
                                        input type="hidden" name="action" value="reset";
                                        input type="hidden" name="name" value=(user.name);
                                        button type="submit" aria-label=(super::super::locale::fill(t.reset_password_of, "name", &user.name)) { (t.reset_password) }
                                    }
                                }
                            }
                        }
                    }
                }
            }
            h2 { (t.add_user) }
            form.manage-form method="post" action=(action) {
                input type="hidden" name="form_token" value=(editor.session.form_token);
                input type="hidden" name="action" value="add";
                p {
                    label for="name" { (t.user_name) }
                    input #name type="text" name="name" value=(kept.0) required autocomplete="off"
                        aria-invalid=[error("name").map(|_| "true")] aria-describedby=[error("name").map(|_| "name-error")];
                    @if let Some(e) = error("name") { span.error id="name-error" { (e) } }
                }
                p {
                    label for="role" { (t.role) }
                    select #role name="role" {
                        @for role in Role::ALL {
                            option value=(role.as_str()) selected[kept.1 == role.as_str()] { (t.role_name(role)) }
                        }
                    }
                }
                p {
                    label for="password" { (t.password) }
                    input #password type="password" name="password" required autocomplete="new-password"
                        aria-invalid=[error("password").map(|_| "true")] aria-describedby=[error("password").map(|_| "password-error")];
                    @if let Some(e) = error("password") { span.error id="password-error" { (e) } }
                }
                p { button type="submit" { (t.add_user) } }
            }
        },
    );
    Ok(page(status, html))
}

/// Adds a user or resets a password, for administrators.
pub(super) fn change(
    state: &AppState,
    ctx: &PageCtx,
    req: &ManageRequest,
    editor: &Editor,
) -> Result<Answer, ServiceError> {
    let t = ManageTexts::of(ctx.locale.language);
    if !users::may_manage(editor.caller()) {
        return Ok(refused(ctx, editor));
    }
    let name = req.field("name").unwrap_or("").trim().to_string();
    let role = req.field("role").unwrap_or("").to_string();
    match req.field("action") {
        Some("add") => {
            let Some(parsed) = Role::parse(&role) else {
                return page_of(
                    state,
                    ctx,
                    editor,
                    Some(("role", t.required.to_string())),
                    (&name, &role),
                    StatusCode::UNPROCESSABLE_ENTITY,
                );
            };
            match users::add(
                &state.store,
                &name,
                parsed,
                req.field("password").unwrap_or(""),
            ) {
                Ok(user) => {
                    state.refresh_users();
                    let text = super::super::locale::fill(t.user_added, "name", &user.name);
                    page_of(
                        state,
                        ctx,
                        editor,
                        Some(("notice", text)),
                        ("", ""),
                        StatusCode::OK,
                    )
                }
                Err(users::UserError::Store(e)) => Err(ServiceError::Store(e)),
                Err(e @ users::UserError::InvalidPassword) => page_of(
                    state,
                    ctx,
                    editor,
                    Some(("password", e.to_string())),
                    (&name, &role),
                    StatusCode::UNPROCESSABLE_ENTITY,
                ),
                Err(e) => page_of(
                    state,
                    ctx,
                    editor,
                    Some(("name", e.to_string())),
                    (&name, &role),
                    StatusCode::UNPROCESSABLE_ENTITY,
                ),
            }
        }
        Some("reset") => {
            let password = crate::auth::password::generate();
            match users::set_password(&state.store, &name, &password) {
                Ok(user) => {
                    state.refresh_users();
                    let text = super::super::locale::fill(t.password_reset, "name", &user.name)
                        .replace("{password}", &password);
                    page_of(
                        state,
                        ctx,
                        editor,
                        Some(("notice", text)),
                        ("", ""),
                        StatusCode::OK,
                    )
                }
                Err(users::UserError::Store(e)) => Err(ServiceError::Store(e)),
                Err(_) => Ok(not_found(ctx)),
            }
        }
        _ => Ok(not_found(ctx)),
    }
}

fn user_failure(e: users::UserError) -> ServiceError {
    match e {
        users::UserError::Store(e) => ServiceError::Store(e),
        other => ServiceError::Store(crate::store::StoreError::UnknownUser(other.to_string())),
    }
}

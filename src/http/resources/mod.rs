//! The resource routes: one module per resource family, each contributing its routes to the
//! route table.

pub mod linked;
pub mod terms;

use crate::http::params::Params;
use crate::http::Context;
use crate::service::linked::Request;
use crate::values::Invalid;

/// The use-case view of a request.
pub fn request(ctx: &Context) -> Request {
    Request {
        caller: ctx.caller,
        language: ctx.language,
        explicit_language: ctx.params.translation_language(),
        now: chrono::Utc::now().naive_utc(),
    }
}

/// The syntax errors found so far, handed to the use case that adds its reference checks.
pub fn invalid(params: &Params) -> Vec<(String, Invalid)> {
    params.invalid.clone()
}

//! The value rules shared by every route (docs/api.md, "Values"): how request values are parsed,
//! coerced and checked. Pure functions, no I/O; the HTTP layer maps [`Invalid`] to
//! `rest_invalid_param` with its `data.params` / `data.details` entries.

pub mod cost;
pub mod datetime;
pub mod form;
pub mod language;
pub(crate) mod recurrence;
pub mod scalars;
pub mod search;
pub mod slug;
pub mod text;
pub mod timezone;

mod invalid;
pub use invalid::*;

//! The refusal of one value, shared by every validator.

use std::fmt;

/// The sub-codes of `rest_invalid_param` (docs/api.md, "Errors").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SubCode {
    InvalidType,
    NotInEnum,
    OutOfBounds,
    InvalidFormat,
    Empty,
    TooLong,
    TooManyItems,
    InvalidCharacters,
    InvalidReference,
    ForbiddenValue,
    InvalidLinkedPostId,
}

impl SubCode {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            SubCode::InvalidType => "rest_invalid_type",
            SubCode::NotInEnum => "rest_not_in_enum",
            SubCode::OutOfBounds => "rest_out_of_bounds",
            SubCode::InvalidFormat => "rest_invalid_format",
            SubCode::Empty => "rest_empty",
            SubCode::TooLong => "rest_too_long",
            SubCode::TooManyItems => "rest_too_many_items",
            SubCode::InvalidCharacters => "rest_invalid_characters",
            SubCode::InvalidReference => "rest_invalid_reference",
            SubCode::ForbiddenValue => "rest_forbidden_value",
            SubCode::InvalidLinkedPostId => "invalid-linked-post-id",
        }
    }
}

/// Why one value was refused. `reason` completes a sentence that starts with the parameter
/// name, e.g. `must be an integer of at least 1.`; the HTTP layer prefixes the name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invalid {
    pub code: SubCode,
    pub reason: String,
}

impl Invalid {
    pub(crate) fn new(code: SubCode, reason: impl Into<String>) -> Invalid {
        Invalid {
            code,
            reason: reason.into(),
        }
    }
}

impl fmt::Display for Invalid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.reason, self.code.as_str())
    }
}

/// Any string value, unless a field says otherwise.
pub const MAX_STRING_BYTES: usize = 65_535;
/// Items in one list parameter.
pub const MAX_LIST_ITEMS: usize = 1000;

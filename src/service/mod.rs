//! Use cases, free of warp and tantivy types.

pub mod users;

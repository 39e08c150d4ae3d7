//! Records of the term kinds (event categories and event tags).

use super::{Kind, Language};
use serde::{Deserialize, Serialize};

/// A category or tag. Tags always have `parent` 0.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Term {
    pub id: u64,
    pub kind: Kind,
    pub language: Language,
    /// Translation group: the ID of the group's founding record.
    pub group: u64,
    pub name: String,
    pub slug: String,
    pub description: String,
    pub parent: u64,
}

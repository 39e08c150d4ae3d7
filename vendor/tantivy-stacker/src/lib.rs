// Carried by almanac with one change: a memory arena's page grows as it is used instead of
// being allocated (and zeroed) whole, so a segment writer for a handful of documents does not
// clear several MiB. Lints are the upstream crate's business.
#![allow(warnings, clippy::all)]
#![cfg_attr(all(feature = "unstable", test), feature(test))]

#[cfg(all(test, feature = "unstable"))]
extern crate test;

mod arena_hashmap;
mod expull;
#[cfg(not(feature = "compare_hash_only"))]
mod fastcmp;
mod fastcpy;
mod memory_arena;
mod shared_arena_hashmap;

pub use self::arena_hashmap::ArenaHashMap;
pub use self::expull::ExpUnrolledLinkedList;
pub use self::memory_arena::{Addr, MemoryArena};
pub use self::shared_arena_hashmap::{SharedArenaHashMap, compute_table_memory_size};

/// When adding an element in a `ArenaHashMap`, we get a unique id associated to the given key.
pub type UnorderedId = u32;

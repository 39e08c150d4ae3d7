#![recursion_limit = "256"]
//! almanac: a search-centric events calendar API server, compatible with The Events Calendar's
//! REST API v1 under the namespace `cal/events/v1`.
//!
//! Layers, top to bottom (arrows point down only):
//! `http` (warp, routing, parameters, errors, links) → `service` (use cases) →
//! `auth`, `store` (redb) → `model` (plain domain types) and `values` (value grammars).
//! In cluster mode `cluster` (PostgreSQL) is the log the store writes through. `metrics`
//! sits below them all: every layer records what happens in it there.

pub mod auth;
pub mod cli;
pub mod cluster;
pub mod config;
pub mod datadir;
mod delivery;
pub mod generate;
pub mod http;
pub mod index;
pub mod metrics;
pub mod model;
mod priority;
pub mod server;
pub mod service;
pub mod store;
pub mod transfer;
pub mod values;

/// The version reported by `--version` and `/healthz`.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

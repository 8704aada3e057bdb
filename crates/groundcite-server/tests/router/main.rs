//! Router tests without a socket: every endpoint, its errors, tenancy,
//! traces, metrics and streaming, against an in-memory SQLite store and a
//! scripted generator (the providers crate tests the real wire formats).
//! One test binary; a module per endpoint group.

mod common;

mod answer;
mod ask;
mod auth;
mod chat;
mod documents;
mod errors;
mod ops;
mod parse_convert;
mod verify;
mod web;

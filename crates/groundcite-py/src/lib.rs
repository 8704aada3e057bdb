//! # groundcite-py
//!
//! The Python bindings of groundcite: the extension module
//! `groundcite._native` of the `groundcite` wheel, built by maturin from
//! `python/pyproject.toml`. It holds no verification logic: every decision
//! is `groundcite-core`'s (the matching rule, the verifier, prose and native
//! conversion, schemas and lint) or `groundcite-batch`'s (a batch in
//! parallel, in input order).
//!
//! ## Key pieces
//! - [`api`]: each Python function in plain Rust over JSON text, with the
//!   CLI's argument rules (`verify`, `parse`, `convert`, `schema`, `lint`,
//!   one batch item); tested by `cargo test` without Python.
//! - [`input::BadInput`]: bad input with the argument's name, line, column
//!   and JSON path, raised in Python as `groundcite.InputError` (a
//!   `ValueError`); [`input::Failure::CitationFormat`] becomes
//!   `groundcite.CitationFormatError` (the CLI's exit code 3).
//! - `py` (private): the `#[pyfunction]`s; the GIL is released around every
//!   verification, and `verify_many` verifies on several threads.
//!
//! ## Guarantees
//! - Input never panics the interpreter: text arrives as `str` (UTF-8,
//!   lone surrogates refused) or `bytes` (checked), and is parsed by
//!   serde_json with its recursion limit.
//! - Outputs are the CLI's bytes: compact contract v1 JSON, the same error
//!   messages and paths.
//!
//! ## Example
//! ```
//! use groundcite_py::api::{Rules, Stamping, verify};
//!
//! let chunks = r#"[{"chunk_id": "r#1", "content": "Refunds are available within 30 days."}]"#;
//! let answer = r#"{"answerable": true, "claims": [{"text": "Refunds within 30 days.",
//!     "citations": [{"chunk_id": "r#1", "quote": "within 30 days"}]}]}"#;
//! let rules = Rules::parse("default", "strict")?;
//! let contract = verify(answer, chunks, rules, Stamping::default())?;
//! assert!(contract.answerable);
//! # Ok::<(), groundcite_py::input::BadInput>(())
//! ```

#![deny(unsafe_code)]

// Verification allocates many small, short-lived JSON trees and strings on
// the worker threads; mimalloc serves them faster than glibc's malloc, as
// in the CLI. Only Rust's own allocations: Python objects stay on CPython's
// allocator.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

pub mod api;
pub mod input;
mod py;
mod stamp;

//! groundcite's application layer: where settings become backends and runs
//! become results. The CLI (`groundcite`) and the service only translate
//! their inputs into this crate.
//!
//! - [`FileConfig`] is `groundcite.toml`, typed: every fixed-value setting
//!   is an enum of [`values`] (serde and clap spell it the same), found by
//!   [`config::discover`] (`--config`, `GROUNDCITE_CONFIG`,
//!   `./groundcite.toml`, the user configuration directory).
//! - [`ProviderFlags`] and [`RetrievalFlags`] are the flags every command
//!   that asks a model or retrieves shares.
//! - [`Settings`] is the one resolver: for every setting, flag >
//!   environment (through [`Env`], so tests need not touch the process) >
//!   file > default. [`Settings::backend`] builds the provider backend (the
//!   embedded model with the `local` feature, Amazon Bedrock with
//!   `bedrock`); [`with_custom_schema`] puts a caller's schema on it.
//! - [`ask`] resolves retrieval, the gate, the embedding model, the index
//!   directory and the trace store; [`eval`] runs a suite through the
//!   pipeline ([`eval::run_suite`]).
//! - [`SettingsError`] is every way a setting can be unusable, each a
//!   sentence naming what to change.
//!
//! Traces are shaped by `groundcite_store::TraceBuilder`; the pipeline
//! itself is `groundcite_ask`; verification is `groundcite_core`.

pub mod ask;
mod backend;
pub mod config;
mod env;
mod error;
pub mod eval;
mod flags;
pub mod retriever;
pub mod values;

pub use backend::{Local, PROVIDER_ENV, Settings, default_max_tokens, with_custom_schema};
pub use config::FileConfig;
pub use env::{Env, MapEnv, ProcessEnv};
pub use error::SettingsError;
pub use flags::{ProviderFlags, RetrievalFlags};
pub use values::{ProviderName, Quotes, RetrievalMode};

/// The features this build has, for `--version`.
pub fn features() -> Vec<&'static str> {
    let mut f = Vec::new();
    if cfg!(feature = "local") {
        f.push("local");
    }
    if cfg!(feature = "bedrock") {
        f.push("bedrock");
    }
    f
}

#[cfg(test)]
mod precedence;

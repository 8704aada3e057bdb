//! Durable trace store of groundcite.
//!
//! Every request the service or CLI handles can be recorded as a
//! [`TraceRecord`]: the question, the chunks, the prompt, the model's raw
//! output byte for byte, the contract returned, and the options needed to
//! re-verify it later. The store keeps them in a SQLite file (the embedded
//! default: one machine, no server) or in PostgreSQL (many stateless
//! replicas sharing one database), behind one async API.
//!
//! # Key types
//!
//! - [`Store`]: opened from a URL ([`Store::open`]); `insert`, `get`,
//!   `list_recent`, `purge_older_than`, and [`Store::commit`], the
//!   service's group commit (concurrent commits share one transaction and
//!   one disk sync; a SQLite file is written by a dedicated thread), and
//!   [`Store::commit_alone`] for a caller with nothing else to run (it
//!   commits on its own thread when that writer is idle).
//! - [`TraceRecord`]: one trace; [`TraceSummary`]: one line of a listing.
//! - [`TraceChunks`]: a trace's chunks, each kept as its JSON text;
//!   [`JsonText`]: its contract, kept as the text sent to the client.
//! - [`StoreError`]: every failure, never carrying a database password
//!   ([`redact_store_url`] is how URLs are shown).
//!
//! # Guarantees
//!
//! - **Committed before acknowledged.** [`Store::insert`] returns only after
//!   the commit, and SQLite runs with `synchronous=FULL` so that commit
//!   survives `kill -9` and power loss (see [`Store::open`]).
//! - **Exact round trip.** What `insert` is given, `get` returns, equal
//!   field by field; `created_at` is kept to the millisecond.
//! - **Tenant isolation.** `get` and `list_recent` with `Some(tenant)` see
//!   only that tenant's traces.
//!
//! # Schema
//!
//! Two tables, `groundcite_traces` and `groundcite_chunk_packs`, plus
//! `groundcite_schema_migrations` (prefixed so they can share a PostgreSQL
//! database with other applications).
//!
//! Chunks are not stored in the trace row. Retrievers return the same
//! chunks again and again, and chunks were ~90% of a trace's bytes (a 53 KB
//! request of 20 chunks against a ~5 KB contract). A trace's chunks that
//! this process stored within the last hour are referenced where they are
//! (found by their exact text in a per-process cache of at most 32 MiB of
//! text, [`Store::set_chunk_cache_bytes`]); the rest go into one new pack row (a JSON array of chunk texts). The
//! trace keeps, per chunk in order, the pack, the index in it and the
//! SHA-256 of the text, checked on every read. Packs are only appended (no
//! random-keyed index: an earlier design keyed each chunk by its hash and
//! wrote ~3x the pages when chunks never repeat), and the reuse cache is
//! per process, so replicas may each store a chunk once. A pack carries
//! `last_used_ms`; [`Store::purge_older_than`] deletes those no kept trace
//! can use. Rows written before packs keep their chunks in the `chunks`
//! column and read back the same.
//!
//! `created_at` is an integer of milliseconds since the Unix
//! epoch, indexed alone and with `tenant`. JSON fields are stored as their
//! serialized text (TEXT in both backends rather than JSONB, so key order
//! and number spelling come back exactly; cast to `jsonb` to query them in
//! PostgreSQL). `question` and `raw_output` are stored as UTF-8 bytes
//! (BLOB / BYTEA) so that any string round-trips, NUL included. Migrations
//! are plain SQL under `migrations/<backend>/`, applied at open (see
//! `src/migrate.rs`).
//!
//! # Features and TLS
//!
//! sqlx is built with SQLite bundled (no system library), the pure-Rust
//! PostgreSQL driver, and rustls (ring provider, system roots) for
//! PostgreSQL TLS, negotiated per the URL's `sslmode`.
//!
//! # Example
//!
//! ```
//! use groundcite_store::{Store, TraceRecord};
//!
//! # async fn demo() -> Result<(), groundcite_store::StoreError> {
//! let store = Store::open("sqlite::memory:").await?;
//!
//! let mut record = TraceRecord::new("0190b6b0-7c1e-7f3a-9d2e-1234567890ab", "verify");
//! record.tenant = Some("acme".into());
//! record.raw_output = Some(r#"{"answerable": false, "claims": []}"#.into());
//! store.insert(&record).await?;
//!
//! let back = store.get(&record.trace_id, Some("acme")).await?;
//! assert_eq!(back.as_ref(), Some(&record));
//! assert_eq!(store.get(&record.trace_id, Some("other")).await?, None);
//! store.close().await;
//! # Ok(())
//! # }
//! # tokio::runtime::Builder::new_current_thread()
//! #     .enable_all()
//! #     .build()
//! #     .expect("runtime")
//! #     .block_on(demo())
//! #     .expect("demo");
//! ```

mod batch;
mod builder;
mod chunks;
mod error;
mod ids;
mod json;
mod migrate;
mod options;
mod record;
mod reverify;
mod store;
mod text;
mod url;
mod writer;

pub use builder::TraceBuilder;
pub use chunks::{ChunkParseError, TraceChunks};
pub use error::StoreError;
pub use groundcite_core::{TraceIdError, validate_trace_id};
pub use ids::{new_trace_id, now_rfc3339};
pub use options::{Timings, TraceOptions};
pub use record::{MAX_TRACE_ID_LEN, TraceRecord, TraceSummary, schema_hash};
pub use reverify::{Reverified, ReverifyError, reverify};
pub use store::{Durability, Store};
pub use text::JsonText;
pub use url::redact_store_url;

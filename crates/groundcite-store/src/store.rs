//! [`Store`]: one async API over a SQLite or PostgreSQL pool.

use std::collections::HashMap;
use std::fmt::{self, Write as _};
use std::str::FromStr;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use jiff::Timestamp;
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use sqlx::sqlite::{SqliteConnectOptions, SqlitePoolOptions, SqliteSynchronous};
use sqlx::{Connection, PgConnection, PgPool, Row, SqlitePool};

use crate::chunks::{ChunkRef, HASH_LEN, TraceChunks, chunk_hash, json_array};
use crate::error::StoreError;
use crate::migrate;
use crate::record::{Columns, StoredRow, SummaryRow, TraceRecord, TraceSummary, validate_trace_id};
use crate::url::{Location, parse_location, redact_url, url_password};
use crate::writer::{Committer, CommitterSlot, SharedSlot};

/// How long a SQLite connection waits for another writer's lock before
/// failing with "database is locked".
pub(crate) const SQLITE_BUSY_TIMEOUT: Duration = Duration::from_secs(5);
/// Connections to a SQLite file: readers run in parallel under WAL; writers
/// take turns on the one write lock.
const SQLITE_MAX_CONNECTIONS: u32 = 8;
/// Connections to PostgreSQL per store (per replica).
const POSTGRES_MAX_CONNECTIONS: u32 = 10;
/// How long an operation waits for a free pooled connection.
const ACQUIRE_TIMEOUT: Duration = Duration::from_secs(10);
/// A chunk this process stored is referenced again, instead of stored
/// again, for this long after the time its pack is kept until.
const PACK_REUSE_MS: i64 = 3_600_000;
/// [`Store::purge_older_than`] deletes packs not needed for this long
/// before its cutoff: the reuse window, and as much again for clock skew
/// between replicas.
const PACK_GRACE_MS: i64 = 2 * PACK_REUSE_MS;
/// Most bytes of chunk text the reuse cache holds (its memory is about
/// this plus ~100 bytes a chunk); when full it starts over.
const PACK_CACHE_BYTES: usize = 32 << 20;
/// Pack IDs per `SELECT` (far below both backends' parameter limits).
const IDS_PER_STATEMENT: usize = 256;

/// The durable trace store: a SQLite file (the embedded default), a private
/// in-memory SQLite database (tests), or a PostgreSQL database shared by
/// many replicas.
///
/// Cheap to clone: clones share one connection pool, and every method
/// takes `&self` and draws a connection from it.
///
/// `Debug` shows the backend and the URL with its password redacted.
#[derive(Clone)]
pub struct Store {
    pool: Pool,
    /// The URL as given, password redacted.
    url: String,
    /// The chunks this process stored recently, by text (see
    /// [`Store::insert_many`]).
    packs: Arc<Mutex<PackCache>>,
    /// [`Store::commit`]'s batching writer, started on first use.
    slot: SharedSlot,
}

/// Where a chunk this process stored lives, until when its pack is kept
/// (the pack's `last_used_ms`), and the SHA-256 its references carry.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Cached {
    pack_id: i64,
    index: u32,
    kept_until_ms: i64,
    hash: [u8; HASH_LEN],
}

impl Cached {
    /// Whether a trace that needs its chunks kept until `keep_ms` may
    /// reference this copy: the pack must be kept at least until
    /// `keep_ms - PACK_REUSE_MS`, which is what the purge relies on.
    fn usable_until(&self, keep_ms: i64) -> bool {
        self.kept_until_ms >= keep_ms.saturating_sub(PACK_REUSE_MS)
    }
}

/// Chunks this process stored recently, keyed by their exact text.
///
/// By text, not by hash: a lookup is a fast keyed hash and one comparison
/// of the bytes, so a chunk seen before costs no SHA-256 and a reference is
/// only ever made to a chunk with the very same text (no collision to
/// reason about). The price is the text kept in memory, bounded by
/// [`PACK_CACHE_BYTES`].
pub(crate) struct PackCache {
    by_text: HashMap<Box<str>, Cached, ahash::RandomState>,
    bytes: usize,
    budget: usize,
}

impl Default for PackCache {
    fn default() -> Self {
        PackCache {
            by_text: HashMap::default(),
            bytes: 0,
            budget: PACK_CACHE_BYTES,
        }
    }
}

impl PackCache {
    fn get(&self, text: &str) -> Option<&Cached> {
        self.by_text.get(text)
    }

    /// Remembers committed chunks; starts over when the budget would be
    /// exceeded.
    fn remember<'a>(&mut self, stored: impl IntoIterator<Item = (&'a str, Cached)>) {
        for (text, place) in stored {
            if let Some(old) = self.by_text.get_mut(text) {
                *old = place;
                continue;
            }
            if text.len() > self.budget {
                // Larger than the whole budget (or caching is off): not kept.
                continue;
            }
            if self.bytes + text.len() > self.budget {
                self.clear();
            }
            self.bytes += text.len();
            self.by_text.insert(text.into(), place);
        }
    }

    fn clear(&mut self) {
        self.by_text.clear();
        self.bytes = 0;
    }
}

/// Chunks of one `insert_many` call, borrowed from its records.
pub(crate) type BatchPlaces<'a> = HashMap<&'a str, Cached, ahash::RandomState>;

#[derive(Clone)]
enum Pool {
    Sqlite(SqlitePool),
    Postgres(PgPool),
}

/// Durability settings as the database reports them, from
/// [`Store::durability`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Durability {
    /// SQLite's `journal_mode` (`"wal"` for a file, `"memory"` for
    /// `sqlite::memory:`); `None` for PostgreSQL.
    pub journal_mode: Option<String>,
    /// SQLite's `synchronous` (`"full"`), or PostgreSQL's
    /// `synchronous_commit` (`"on"` unless the server was told otherwise).
    pub synchronous: String,
}

// Column lists as macros so the SQL below can be `concat!`ed at compile time.
macro_rules! record_columns {
    () => {
        "trace_id, created_at_ms, tenant, kind, question, chunks, prompt, schema_hash, \
         raw_output, contract, warnings, provider, model, provider_request_id, options, \
         timings, error, chunk_refs, stop_reason, input_tokens, output_tokens, answer_form"
    };
}
macro_rules! summary_columns {
    () => {
        "trace_id, created_at_ms, tenant, kind, question, provider, model, answerable"
    };
}

// `$n` placeholders work in both backends (sqlx maps them for SQLite).

/// A taken ID inserts nothing (0 rows) instead of aborting the transaction
/// the other records of a batch share.
pub(crate) const INSERT_OR_SKIP: &str = concat!(
    "INSERT INTO groundcite_traces (",
    record_columns!(),
    ", answerable) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, \
     $16, $17, $18, $19, $20, $21, $22, $23) ON CONFLICT (trace_id) DO NOTHING"
);
pub(crate) const INSERT_PACK: &str = "INSERT INTO groundcite_chunk_packs (body, last_used_ms) VALUES ($1, $2) \
     RETURNING pack_id";
const GET_ANY: &str = concat!(
    "SELECT ",
    record_columns!(),
    " FROM groundcite_traces WHERE trace_id = $1"
);
const GET_TENANT: &str = concat!(
    "SELECT ",
    record_columns!(),
    " FROM groundcite_traces WHERE trace_id = $1 AND tenant = $2"
);
const LIST_ANY: &str = concat!(
    "SELECT ",
    summary_columns!(),
    " FROM groundcite_traces ORDER BY created_at_ms DESC, trace_id DESC LIMIT $1"
);
const LIST_TENANT: &str = concat!(
    "SELECT ",
    summary_columns!(),
    " FROM groundcite_traces WHERE tenant = $1 ORDER BY created_at_ms DESC, trace_id DESC \
     LIMIT $2"
);
const PURGE: &str = "DELETE FROM groundcite_traces WHERE created_at_ms < $1";
const PURGE_PACKS: &str = "DELETE FROM groundcite_chunk_packs WHERE last_used_ms < $1";
const EXISTS: &str = "SELECT 1 FROM groundcite_traces WHERE trace_id = $1";

/// `SELECT` of the packs whose ID is one of `n` parameters.
fn select_packs_sql(n: usize) -> String {
    let mut sql =
        String::from("SELECT pack_id, body FROM groundcite_chunk_packs WHERE pack_id IN (");
    for i in 1..=n {
        let sep = if i == 1 { "" } else { ", " };
        let _ = write!(sql, "{sep}${i}");
    }
    sql.push(')');
    sql
}

/// Binds [`Columns`] in `INSERT` order (the record's columns, then
/// `answerable`); expanded once per backend.
macro_rules! bind_columns {
    ($query:expr, $c:expr) => {
        $query
            .bind($c.trace_id)
            .bind($c.created_at_ms)
            .bind($c.tenant)
            .bind($c.kind)
            .bind($c.question)
            .bind(&$c.chunks)
            .bind(&$c.prompt)
            .bind($c.schema_hash)
            .bind($c.raw_output)
            .bind(&$c.contract)
            .bind(&$c.warnings)
            .bind($c.provider)
            .bind($c.model)
            .bind($c.provider_request_id)
            .bind(&$c.options)
            .bind(&$c.timings)
            .bind(&$c.error)
            .bind(&$c.chunk_refs)
            .bind($c.stop_reason)
            .bind($c.input_tokens)
            .bind($c.output_tokens)
            .bind($c.answer_form)
            .bind($c.answerable)
    };
}

/// Row readers, generated once per backend's row type.
macro_rules! row_readers {
    ($module:ident, $row:ty) => {
        mod $module {
            use super::{Row, StoredRow, SummaryRow};

            pub(super) fn record(row: &$row) -> Result<StoredRow, sqlx::Error> {
                Ok(StoredRow {
                    trace_id: row.try_get("trace_id")?,
                    created_at_ms: row.try_get("created_at_ms")?,
                    tenant: row.try_get("tenant")?,
                    kind: row.try_get("kind")?,
                    question: row.try_get("question")?,
                    chunks: row.try_get("chunks")?,
                    chunk_refs: row.try_get("chunk_refs")?,
                    prompt: row.try_get("prompt")?,
                    schema_hash: row.try_get("schema_hash")?,
                    raw_output: row.try_get("raw_output")?,
                    contract: row.try_get("contract")?,
                    warnings: row.try_get("warnings")?,
                    provider: row.try_get("provider")?,
                    model: row.try_get("model")?,
                    provider_request_id: row.try_get("provider_request_id")?,
                    options: row.try_get("options")?,
                    timings: row.try_get("timings")?,
                    error: row.try_get("error")?,
                    stop_reason: row.try_get("stop_reason")?,
                    input_tokens: row.try_get("input_tokens")?,
                    output_tokens: row.try_get("output_tokens")?,
                    answer_form: row.try_get("answer_form")?,
                })
            }

            pub(super) fn summary(row: &$row) -> Result<SummaryRow, sqlx::Error> {
                Ok(SummaryRow {
                    trace_id: row.try_get("trace_id")?,
                    created_at_ms: row.try_get("created_at_ms")?,
                    tenant: row.try_get("tenant")?,
                    kind: row.try_get("kind")?,
                    question: row.try_get("question")?,
                    provider: row.try_get("provider")?,
                    model: row.try_get("model")?,
                    answerable: row.try_get("answerable")?,
                })
            }
        }
    };
}
row_readers!(sqlite_rows, sqlx::sqlite::SqliteRow);
row_readers!(postgres_rows, sqlx::postgres::PgRow);

/// Runs `$body` with `$pool` bound to the backend's pool and `$rows` to its
/// row readers; the body is compiled once per backend.
macro_rules! on_pool {
    ($store:expr, |$pool:ident| $body:expr) => {
        match &$store.pool {
            Pool::Sqlite($pool) => $body,
            Pool::Postgres($pool) => $body,
        }
    };
    ($store:expr, |$pool:ident, $rows:ident| $body:expr) => {
        match &$store.pool {
            Pool::Sqlite($pool) => {
                use sqlite_rows as $rows;
                $body
            }
            Pool::Postgres($pool) => {
                use postgres_rows as $rows;
                $body
            }
        }
    };
}

impl Store {
    /// Opens (creating if needed) the store at `url` and brings its schema
    /// up to date.
    ///
    /// Accepted URLs:
    /// - `sqlite:PATH`, `sqlite://PATH` (`sqlite:///abs/path` is absolute),
    ///   or a plain file path: a SQLite file, created with its parent
    ///   directories if missing. The path is taken literally (no
    ///   percent-decoding, no `?parameters`).
    /// - `sqlite::memory:`: a private in-memory database held by a single
    ///   connection, gone at [`close`](Store::close). For tests.
    /// - `postgres://…` or `postgresql://…`: a PostgreSQL database, with the
    ///   usual libpq-style URL parameters (`sslmode=`, `application_name=`…).
    ///
    /// SQLite files are opened with `journal_mode=WAL` (readers never block
    /// the writer), `synchronous=FULL`, `busy_timeout` 5 s and foreign keys
    /// on. `synchronous=FULL` because a trace is acknowledged only once
    /// committed, and must then survive `kill -9` *and* power loss: under
    /// WAL the default `NORMAL` survives a process crash but may lose the
    /// last commits if the machine dies, since it skips the fsync of the WAL
    /// at each commit. `FULL` pays one fsync per insert for that guarantee.
    ///
    /// PostgreSQL commits are durable as long as the server keeps
    /// `synchronous_commit=on` (its default; see [`Store::durability`]).
    /// TLS is negotiated per `sslmode` (default `prefer`) with rustls and
    /// the system's root certificates.
    ///
    /// Migrations run in one locked transaction, so several processes may
    /// open the same database at once; a database migrated by a newer
    /// groundcite is refused ([`StoreError::SchemaTooNew`]).
    pub async fn open(url: &str) -> Result<Store, StoreError> {
        let shown = redact_url(url);
        let store = match parse_location(url)? {
            Location::SqliteMemory => {
                let pool = open_sqlite_memory()
                    .await
                    .map_err(|e| open_error("sqlite", &shown, e.to_string()))?;
                Store {
                    pool: Pool::Sqlite(pool),
                    url: shown,
                    packs: Arc::default(),
                    slot: Arc::default(),
                }
            }
            Location::SqliteFile(path) => {
                let pool = open_sqlite_file(&path)
                    .await
                    .map_err(|message| open_error("sqlite", &shown, message))?;
                Store {
                    pool: Pool::Sqlite(pool),
                    url: shown,
                    packs: Arc::default(),
                    slot: Arc::new(CommitterSlot {
                        sqlite_file: Some(path),
                        ..CommitterSlot::default()
                    }),
                }
            }
            Location::Postgres(pg_url) => {
                let pool = open_postgres(&pg_url).await.map_err(|e| {
                    let mut message = e.to_string();
                    if let Some(password) = url_password(&pg_url) {
                        message = message.replace(password, "****");
                    }
                    open_error("postgres", &shown, message)
                })?;
                Store {
                    pool: Pool::Postgres(pool),
                    url: shown,
                    packs: Arc::default(),
                    slot: Arc::default(),
                }
            }
        };
        let migrated = match &store.pool {
            Pool::Sqlite(pool) => migrate::sqlite(pool).await,
            Pool::Postgres(pool) => migrate::postgres(pool).await,
        };
        if let Err(error) = migrated {
            store.close().await;
            return Err(error);
        }
        Ok(store)
    }

    /// Sets how many bytes of chunk text this process keeps to recognise
    /// chunks it has stored before (default 32 MiB; 0 turns the reuse off,
    /// and every trace's chunks are then written anew). Memory, not
    /// correctness: a chunk not found in the cache is stored again.
    pub fn set_chunk_cache_bytes(&self, bytes: usize) {
        let mut packs = self.packs.lock().unwrap_or_else(PoisonError::into_inner);
        packs.budget = bytes;
        if packs.bytes > bytes {
            packs.clear();
        }
    }

    /// `"sqlite"` or `"postgres"`.
    pub fn backend(&self) -> &'static str {
        match self.pool {
            Pool::Sqlite(_) => "sqlite",
            Pool::Postgres(_) => "postgres",
        }
    }

    /// The URL the store was opened with, password redacted: safe to log.
    pub fn redacted_url(&self) -> &str {
        &self.url
    }

    /// Stores `record`. When this returns `Ok`, the trace is committed
    /// (durably, see [`Store::open`]); respond to the client only after.
    ///
    /// Errors: [`StoreError::InvalidTraceId`] and
    /// [`StoreError::InvalidRecord`] before touching the database;
    /// [`StoreError::Duplicate`] if the id is taken (no trace written).
    pub async fn insert(&self, record: &TraceRecord) -> Result<(), StoreError> {
        // The trace and its chunks commit together.
        let mut results = self.insert_many(&[record]).await;
        results.pop().unwrap_or(Ok(()))
    }

    /// Stores `record` like [`Store::insert`], in one transaction with the
    /// records of concurrent calls (group commit: one disk sync for all).
    /// The service's path: when this returns `Ok`, the trace is committed.
    ///
    /// A SQLite file is written by a dedicated thread with its own
    /// connection (statements run without a thread hop each); other stores
    /// batch in a task on the current Tokio runtime. Either starts on the
    /// first call and stops when the last clone of the store is dropped.
    pub async fn commit(&self, record: TraceRecord) -> Result<(), StoreError> {
        self.committer().commit(record).await
    }

    /// [`Store::commit`] for a caller that knows no other work is waiting
    /// on its thread (a service with one request in flight). With a SQLite
    /// file whose writer is idle, the transaction runs on the calling
    /// thread, blocking it for the disk sync but sparing the hop to the
    /// writer thread and back; otherwise this is [`Store::commit`]. Same
    /// guarantee: when this returns `Ok`, the trace is committed.
    pub async fn commit_alone(&self, record: TraceRecord) -> Result<(), StoreError> {
        self.committer().commit_alone(record).await
    }

    /// The committer, started on first use.
    fn committer(&self) -> &Committer {
        self.slot
            .committer
            .get_or_init(|| Committer::start(self, self.slot.sqlite_file.as_deref()))
    }

    /// The reuse cache, for the writer thread.
    pub(crate) fn packs(&self) -> Arc<Mutex<PackCache>> {
        Arc::clone(&self.packs)
    }

    /// This store without its committer (for the batching task, which must
    /// not keep the committer's queue open).
    pub(crate) fn without_committer(&self) -> Store {
        Store {
            pool: self.pool.clone(),
            url: self.url.clone(),
            packs: Arc::clone(&self.packs),
            slot: Arc::default(),
        }
    }

    /// Stores several records in one transaction (one commit, one disk
    /// sync: group commit for a busy service) and returns one result per
    /// record, in order. When this returns, every `Ok` record is committed.
    ///
    /// A record that fails validation or whose ID is taken gets its own
    /// error ([`StoreError::InvalidTraceId`], [`StoreError::InvalidRecord`],
    /// [`StoreError::Duplicate`]) without affecting the others; a database
    /// failure fails them all.
    ///
    /// Chunks: a record's chunks that this process stored in the last hour
    /// (the same text) are referenced where they are; the others
    /// go into one new pack row for the record. Retrievers return the same
    /// chunks again and again, and they are most of a trace's bytes; a
    /// stream of chunks never seen before costs one appended row, as
    /// storing them in the trace row would.
    pub async fn insert_many(&self, records: &[&TraceRecord]) -> Vec<Result<(), StoreError>> {
        let (mut results, mut encoded) = encode_all(records);
        if encoded.is_empty() {
            return results;
        }
        let mut plan = PackPlan::new(&self.packs, &encoded);
        let outcome: Result<Vec<(usize, u64)>, sqlx::Error> = on_pool!(self, |pool| {
            async {
                let mut tx = pool.begin().await?;
                let mut affected = Vec::with_capacity(encoded.len());
                for (k, (i, columns)) in encoded.iter_mut().enumerate() {
                    let step = plan.step(k, columns);
                    let pack_id = match step.pack_body() {
                        Some(body) => Some(
                            sqlx::query_scalar(INSERT_PACK)
                                .bind(body)
                                .bind(columns.keep_ms)
                                .fetch_one(&mut *tx)
                                .await?,
                        ),
                        None => None,
                    };
                    plan.finish(step, pack_id, columns)
                        .map_err(|m| sqlx::Error::Protocol(m.into()))?;
                    let done = bind_columns!(sqlx::query(INSERT_OR_SKIP), columns)
                        .execute(&mut *tx)
                        .await?;
                    affected.push((*i, done.rows_affected()));
                }
                tx.commit().await?;
                Ok(affected)
            }
            .await
        });
        let outcome = outcome.map_err(|e| e.to_string());
        settle(&self.packs, plan, outcome, records, &encoded, &mut results);
        results
    }

    /// The trace `trace_id`, if stored and visible.
    ///
    /// With `tenant: Some(t)`, only a trace recorded for tenant `t` is
    /// visible (another tenant's trace, or one without a tenant, reads as
    /// `None`). `None` sees every trace: for the local CLI and operators,
    /// never for a multi-tenant request path.
    pub async fn get(
        &self,
        trace_id: &str,
        tenant: Option<&str>,
    ) -> Result<Option<TraceRecord>, StoreError> {
        validate_trace_id(trace_id)?;
        let row = on_pool!(self, |pool, rows| {
            let query = match tenant {
                Some(tenant) => sqlx::query(GET_TENANT).bind(trace_id).bind(tenant),
                None => sqlx::query(GET_ANY).bind(trace_id),
            };
            query
                .fetch_optional(pool)
                .await
                .and_then(|row| row.as_ref().map(rows::record).transpose())
        })
        .map_err(|error| StoreError::database("get", error))?;
        let Some(row) = row else {
            return Ok(None);
        };
        let Some(refs) = row.chunk_refs()? else {
            return row.decode(None).map(Some);
        };
        match self.load_chunks(&row.trace_id, &refs).await? {
            Some(chunks) => row.decode(Some(chunks)).map(Some),
            // A pack can only go missing when a purge removed this trace
            // between the two reads: then the trace is gone, as a second
            // look confirms. Anything else is corruption.
            None if !self.exists(&row.trace_id).await? => Ok(None),
            None => Err(StoreError::Corrupt {
                trace_id: row.trace_id,
                reason: "a chunk pack the trace references is missing".to_owned(),
            }),
        }
    }

    /// The chunks `refs` point at, in order, each checked against its
    /// hash; `None` if a pack is missing.
    async fn load_chunks(
        &self,
        trace_id: &str,
        refs: &[ChunkRef],
    ) -> Result<Option<TraceChunks>, StoreError> {
        let corrupt = |reason: String| StoreError::Corrupt {
            trace_id: trace_id.to_owned(),
            reason,
        };
        let mut ids: Vec<i64> = refs.iter().map(|r| r.pack_id).collect();
        ids.sort_unstable();
        ids.dedup();
        let mut packs: HashMap<i64, Vec<Box<serde_json::value::RawValue>>> =
            HashMap::with_capacity(ids.len());
        for group in ids.chunks(IDS_PER_STATEMENT) {
            let sql = select_packs_sql(group.len());
            let rows: Vec<(i64, String)> = on_pool!(self, |pool| {
                let mut query = sqlx::query_as(sql.as_str());
                for id in group {
                    query = query.bind(*id);
                }
                query.fetch_all(pool).await
            })
            .map_err(|error| StoreError::database("get", error))?;
            for (id, body) in rows {
                let texts = serde_json::from_str(&body)
                    .map_err(|e| corrupt(format!("chunk pack {id} is not a JSON array: {e}")))?;
                packs.insert(id, texts);
            }
        }
        let mut texts = Vec::with_capacity(refs.len());
        for r in refs {
            let Some(pack) = packs.get(&r.pack_id) else {
                return Ok(None);
            };
            let text = usize::try_from(r.index)
                .ok()
                .and_then(|i| pack.get(i))
                .ok_or_else(|| {
                    corrupt(format!(
                        "chunk pack {} has no element {}",
                        r.pack_id, r.index
                    ))
                })?;
            if crate::chunks::chunk_hash(text.get()) != r.hash {
                return Err(corrupt(format!(
                    "element {} of chunk pack {} does not match its hash",
                    r.index, r.pack_id
                )));
            }
            texts.push(text.clone());
        }
        Ok(Some(TraceChunks::from_raw(texts)))
    }

    /// Whether a trace `trace_id` is stored (any tenant).
    async fn exists(&self, trace_id: &str) -> Result<bool, StoreError> {
        on_pool!(self, |pool| sqlx::query(EXISTS)
            .bind(trace_id)
            .fetch_optional(pool)
            .await
            .map(|row| row.is_some()))
        .map_err(|error| StoreError::database("get", error))
    }

    /// The `limit` most recent traces, newest first, restricted to `tenant`
    /// when it is `Some` (as in [`Store::get`]).
    pub async fn list_recent(
        &self,
        tenant: Option<&str>,
        limit: u32,
    ) -> Result<Vec<TraceSummary>, StoreError> {
        let limit = i64::from(limit);
        let rows = on_pool!(self, |pool, rows| {
            let query = match tenant {
                Some(tenant) => sqlx::query(LIST_TENANT).bind(tenant).bind(limit),
                None => sqlx::query(LIST_ANY).bind(limit),
            };
            query
                .fetch_all(pool)
                .await
                .and_then(|all| all.iter().map(rows::summary).collect::<Result<Vec<_>, _>>())
        })
        .map_err(|error| StoreError::database("list", error))?;
        rows.into_iter().map(SummaryRow::decode).collect()
    }

    /// Deletes every trace created strictly before `cutoff`, of every
    /// tenant (retention), and returns how many were deleted.
    ///
    /// Also deletes the chunk packs whose `last_used_ms` is more than two
    /// hours before `cutoff` (or before now, if `cutoff` is later). No kept
    /// trace can reference one: a trace references a pack only while the
    /// pack is kept until at least an hour before the later of the trace's
    /// `created_at` and the time it was stored (see
    /// [`Store::insert_many`]), so every trace referencing such a pack was
    /// created before the cutoff and goes in the same transaction.
    pub async fn purge_older_than(&self, cutoff: Timestamp) -> Result<u64, StoreError> {
        let cutoff_ms = cutoff.as_millisecond();
        let pack_cutoff_ms = cutoff_ms
            .min(Timestamp::now().as_millisecond())
            .saturating_sub(PACK_GRACE_MS);
        let deleted = on_pool!(self, |pool| {
            async {
                let mut tx = pool.begin().await?;
                let deleted = sqlx::query(PURGE)
                    .bind(cutoff_ms)
                    .execute(&mut *tx)
                    .await?
                    .rows_affected();
                sqlx::query(PURGE_PACKS)
                    .bind(pack_cutoff_ms)
                    .execute(&mut *tx)
                    .await?;
                tx.commit().await?;
                Ok(deleted)
            }
            .await
        })
        .map_err(|error| StoreError::database("purge", error))?;
        // Entries of deleted packs are already too old to be reused; start
        // over anyway rather than rely on that.
        self.packs
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clear();
        Ok(deleted)
    }

    /// A trivial round trip (`SELECT 1`): the database answers.
    pub async fn ping(&self) -> Result<(), StoreError> {
        on_pool!(self, |pool| sqlx::query("SELECT 1")
            .execute(pool)
            .await
            .map(|_| ()))
        .map_err(|error| StoreError::database("ping", error))
    }

    /// The durability settings the database reports for this store's
    /// connections, for a health check or `doctor` command.
    pub async fn durability(&self) -> Result<Durability, StoreError> {
        let db = |error| StoreError::database("durability", error);
        match &self.pool {
            Pool::Sqlite(pool) => {
                let mut conn = pool.acquire().await.map_err(db)?;
                let journal_mode: String = sqlx::query_scalar("PRAGMA journal_mode")
                    .fetch_one(&mut *conn)
                    .await
                    .map_err(db)?;
                let synchronous: i64 = sqlx::query_scalar("PRAGMA synchronous")
                    .fetch_one(&mut *conn)
                    .await
                    .map_err(db)?;
                let synchronous = match synchronous {
                    0 => "off".to_owned(),
                    1 => "normal".to_owned(),
                    2 => "full".to_owned(),
                    3 => "extra".to_owned(),
                    other => other.to_string(),
                };
                Ok(Durability {
                    journal_mode: Some(journal_mode.to_ascii_lowercase()),
                    synchronous,
                })
            }
            Pool::Postgres(pool) => {
                let synchronous: String = sqlx::query_scalar("SHOW synchronous_commit")
                    .fetch_one(pool)
                    .await
                    .map_err(db)?;
                Ok(Durability {
                    journal_mode: None,
                    synchronous,
                })
            }
        }
    }

    /// Waits for in-flight operations, then closes every connection, for
    /// this handle and all its clones. An in-memory store's data is gone
    /// afterwards.
    pub async fn close(self) {
        match self.pool {
            Pool::Sqlite(pool) => pool.close().await,
            Pool::Postgres(pool) => pool.close().await,
        }
    }
}

impl fmt::Debug for Store {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Store")
            .field("backend", &self.backend())
            .field("url", &self.url)
            .finish_non_exhaustive()
    }
}

fn open_error(backend: &'static str, url: &str, message: String) -> StoreError {
    StoreError::Open {
        backend,
        url: url.to_owned(),
        message,
    }
}

/// One connection, never recycled: an in-memory database lives exactly as
/// long as its last connection.
async fn open_sqlite_memory() -> Result<SqlitePool, sqlx::Error> {
    let options = SqliteConnectOptions::from_str("sqlite::memory:")?
        .foreign_keys(true)
        .busy_timeout(SQLITE_BUSY_TIMEOUT);
    SqlitePoolOptions::new()
        .max_connections(1)
        .min_connections(1)
        .idle_timeout(None)
        .max_lifetime(None)
        .acquire_timeout(ACQUIRE_TIMEOUT)
        .connect_with(options)
        .await
}

/// One result per record of a batch.
pub(crate) type Results = Vec<Result<(), StoreError>>;
/// A valid record's index in its batch, and its columns.
pub(crate) type Encoded<'a> = (usize, Columns<'a>);

/// Validates and encodes each record: the encoded ones with their index,
/// and one result per record (`Ok` until the database says otherwise).
pub(crate) fn encode_all<'a>(records: &[&'a TraceRecord]) -> (Results, Vec<Encoded<'a>>) {
    let mut results = Vec::with_capacity(records.len());
    let mut encoded = Vec::with_capacity(records.len());
    for (i, r) in records.iter().enumerate() {
        match Columns::encode(r) {
            Ok(c) => {
                encoded.push((i, c));
                results.push(Ok(()));
            }
            Err(e) => results.push(Err(e)),
        }
    }
    (results, encoded)
}

/// After the transaction: remembers the committed packs and turns the
/// outcome into per-record results (0 rows: the ID was taken).
pub(crate) fn settle(
    packs: &Mutex<PackCache>,
    plan: PackPlan<'_>,
    outcome: Result<Vec<(usize, u64)>, String>,
    records: &[&TraceRecord],
    encoded: &[(usize, Columns<'_>)],
    results: &mut [Result<(), StoreError>],
) {
    match outcome {
        Ok(affected) => {
            // Only committed packs are remembered.
            packs
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .remember(plan.stored);
            for (i, n) in affected {
                if n == 0 {
                    results[i] = Err(StoreError::Duplicate {
                        trace_id: records[i].trace_id.clone(),
                    });
                }
            }
        }
        Err(message) => {
            for (i, _) in encoded {
                results[*i] = Err(StoreError::database(
                    "insert",
                    sqlx::Error::Protocol(message.clone()),
                ));
            }
        }
    }
}

/// Where the chunks of one batch of records go: referenced where this
/// process stored them (the cache, or an earlier record of the batch), or
/// into one new pack per record. Shared by both insert paths, which differ
/// only in how they run the SQL.
pub(crate) struct PackPlan<'a> {
    /// Per record, per chunk: the cache's entry, looked up before the
    /// transaction so the lock is not held across it (one hash per chunk:
    /// a chunk seen before costs nothing more).
    known: Vec<Vec<Option<Cached>>>,
    /// Chunks stored by this batch, for the records after the one that
    /// stored them.
    stored: BatchPlaces<'a>,
}

/// One record's chunks: the places found, and the texts still to store.
pub(crate) struct PlanStep<'a> {
    places: Vec<Option<Cached>>,
    fresh: BatchPlaces<'a>,
    fresh_texts: Vec<&'a str>,
}

impl PlanStep<'_> {
    /// The new pack's body (a JSON array), if the record needs one.
    pub(crate) fn pack_body(&self) -> Option<String> {
        (!self.fresh_texts.is_empty()).then(|| json_array(self.fresh_texts.iter().copied()))
    }
}

impl<'a> PackPlan<'a> {
    pub(crate) fn new(packs: &Mutex<PackCache>, encoded: &[(usize, Columns<'a>)]) -> Self {
        let cache = packs.lock().unwrap_or_else(PoisonError::into_inner);
        let known = encoded
            .iter()
            .map(|(_, c)| {
                c.chunk_texts
                    .iter()
                    .map(|&t| cache.get(t).copied())
                    .collect()
            })
            .collect();
        PackPlan {
            known,
            stored: BatchPlaces::default(),
        }
    }

    /// Plans record `k` of the batch.
    pub(crate) fn step(&self, k: usize, columns: &Columns<'a>) -> PlanStep<'a> {
        let keep_ms = columns.keep_ms;
        let usable = |c: Option<&Cached>| c.filter(|c| c.usable_until(keep_ms)).copied();
        let places: Vec<Option<Cached>> = self.known[k]
            .iter()
            .zip(&columns.chunk_texts)
            .map(|(known, text)| usable(known.as_ref()).or_else(|| usable(self.stored.get(text))))
            .collect();
        let mut fresh = BatchPlaces::default();
        let mut fresh_texts: Vec<&str> = Vec::new();
        for (&text, place) in columns.chunk_texts.iter().zip(&places) {
            if place.is_none() && !fresh.contains_key(text) {
                let place = Cached {
                    pack_id: 0, // set once the pack row exists
                    index: u32::try_from(fresh_texts.len()).unwrap_or(u32::MAX),
                    kept_until_ms: keep_ms,
                    hash: chunk_hash(text),
                };
                fresh.insert(text, place);
                fresh_texts.push(text);
            }
        }
        PlanStep {
            places,
            fresh,
            fresh_texts,
        }
    }

    /// Completes record `step` once its pack (if any) is `pack_id`: fills
    /// the record's `chunk_refs`.
    pub(crate) fn finish(
        &mut self,
        step: PlanStep<'a>,
        pack_id: Option<i64>,
        columns: &mut Columns<'a>,
    ) -> Result<(), &'static str> {
        let PlanStep {
            mut places,
            mut fresh,
            ..
        } = step;
        if let Some(pack_id) = pack_id {
            for place in fresh.values_mut() {
                place.pack_id = pack_id;
            }
            for (&text, place) in columns.chunk_texts.iter().zip(&mut places) {
                if place.is_none() {
                    *place = fresh.get(text).copied();
                }
            }
            self.stored.extend(fresh);
        }
        columns.chunk_refs.clear();
        for place in places {
            let place = place.ok_or("a chunk was neither reused nor stored")?;
            ChunkRef {
                pack_id: place.pack_id,
                index: place.index,
                hash: place.hash,
            }
            .encode_into(&mut columns.chunk_refs);
        }
        Ok(())
    }
}

async fn open_sqlite_file(path: &std::path::Path) -> Result<SqlitePool, String> {
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        tokio::fs::create_dir_all(parent)
            .await
            .map_err(|e| format!("cannot create directory {}: {e}", parent.display()))?;
    }
    // journal_mode is not set per connection: switching to WAL needs an
    // exclusive lock that busy_timeout does not wait for. It is set once
    // below, with retries, and persists in the file.
    let options = SqliteConnectOptions::new()
        .filename(path)
        .create_if_missing(true)
        .synchronous(SqliteSynchronous::Full)
        .busy_timeout(SQLITE_BUSY_TIMEOUT)
        .foreign_keys(true);
    let pool = SqlitePoolOptions::new()
        .max_connections(SQLITE_MAX_CONNECTIONS)
        .acquire_timeout(ACQUIRE_TIMEOUT)
        .connect_with(options)
        .await
        .map_err(|e| e.to_string())?;
    if let Err(message) = enable_wal(&pool).await {
        pool.close().await;
        return Err(message);
    }
    Ok(pool)
}

/// Switches the file to WAL (a no-op when it already is), retrying while
/// another process holds a lock, for up to the busy timeout.
async fn enable_wal(pool: &SqlitePool) -> Result<(), String> {
    let deadline = Instant::now() + SQLITE_BUSY_TIMEOUT;
    loop {
        let result: Result<String, _> = sqlx::query_scalar("PRAGMA journal_mode = WAL")
            .fetch_one(pool)
            .await;
        match result {
            Ok(mode) if mode.eq_ignore_ascii_case("wal") => return Ok(()),
            Ok(mode) => {
                return Err(format!(
                    "SQLite refused WAL mode (journal_mode is {mode:?}); \
                     is the file on a network filesystem?"
                ));
            }
            Err(error) if is_sqlite_busy(&error) && Instant::now() < deadline => {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            Err(error) => return Err(error.to_string()),
        }
    }
}

/// `SQLITE_BUSY` or `SQLITE_LOCKED`, extended codes included.
fn is_sqlite_busy(error: &sqlx::Error) -> bool {
    let sqlx::Error::Database(db) = error else {
        return false;
    };
    db.code()
        .and_then(|code| code.parse::<i32>().ok())
        .is_some_and(|code| matches!(code & 0xff, 5 | 6))
}

async fn open_postgres(url: &str) -> Result<PgPool, sqlx::Error> {
    let options = PgConnectOptions::from_str(url)?;
    // One direct connection first: a refused connection or a bad password
    // fails at once with the server's reason, where the pool would retry
    // until its acquire timeout and then report only "timed out".
    PgConnection::connect_with(&options).await?.close().await?;
    PgPoolOptions::new()
        .max_connections(POSTGRES_MAX_CONNECTIONS)
        .acquire_timeout(ACQUIRE_TIMEOUT)
        .connect_with(options)
        .await
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The server awaits these futures on a multi-threaded runtime, and
    /// sqlx's higher-ranked executor bounds make `Send` easy to lose.
    #[allow(dead_code)]
    fn futures_are_send(store: Store, record: &TraceRecord) {
        fn send<T: Send>(_: T) {}
        send(Store::open(""));
        send(store.insert(record));
        send(store.get("", None));
        send(store.list_recent(None, 1));
        send(store.purge_older_than(Timestamp::UNIX_EPOCH));
        send(store.durability());
        send(store.close());
    }

    #[test]
    fn pack_cache_keeps_to_its_byte_budget() {
        let place = |pack_id| Cached {
            pack_id,
            index: 0,
            kept_until_ms: 0,
            hash: [0; HASH_LEN],
        };
        let mut cache = PackCache {
            budget: 10,
            ..PackCache::default()
        };
        cache.remember([("abcd", place(1)), ("efgh", place(2))]);
        assert_eq!(cache.bytes, 8);
        // A text already held is updated, not counted again.
        cache.remember([("abcd", place(3))]);
        assert_eq!(
            (cache.bytes, cache.get("abcd").map(|c| c.pack_id)),
            (8, Some(3))
        );
        // Over budget: start over with the newcomer.
        cache.remember([("ijkl", place(4))]);
        assert_eq!(cache.bytes, 4);
        assert!(cache.get("abcd").is_none() && cache.get("efgh").is_none());
        assert_eq!(cache.get("ijkl").map(|c| c.pack_id), Some(4));
        // Exact text only.
        assert!(cache.get("ijk").is_none() && cache.get("ijkl ").is_none());
        // A text over the whole budget is not kept, and keeps the others.
        cache.remember([("0123456789a", place(5))]);
        assert_eq!(cache.bytes, 4);
        assert!(cache.get("0123456789a").is_none());
        // Budget 0: caching is off.
        let mut off = PackCache {
            budget: 0,
            ..PackCache::default()
        };
        off.remember([("a", place(6))]);
        assert_eq!((off.bytes, off.get("a").map(|c| c.pack_id)), (0, None));
    }

    #[tokio::test]
    async fn the_chunk_cache_budget_is_a_setting() {
        let store = Store::open("sqlite::memory:").await.expect("open");
        store.packs.lock().expect("lock").remember([(
            "abcd",
            Cached {
                pack_id: 1,
                index: 0,
                kept_until_ms: 0,
                hash: [0; HASH_LEN],
            },
        )]);
        // Shrinking below what is held drops it; growing keeps it.
        store.set_chunk_cache_bytes(100);
        assert_eq!(store.packs.lock().expect("lock").bytes, 4);
        store.set_chunk_cache_bytes(3);
        let packs = store.packs.lock().expect("lock");
        assert_eq!((packs.budget, packs.bytes), (3, 0));
        assert!(packs.get("abcd").is_none());
    }

    #[test]
    fn store_is_send_and_sync() {
        fn check<T: Send + Sync>() {}
        check::<Store>();
    }
}

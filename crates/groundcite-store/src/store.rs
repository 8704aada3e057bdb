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

use crate::batch::{
    INSERT_OR_SKIP, INSERT_PACK, PACK_REUSE_MS, PackCache, PackPlan, Results, encode_all,
    record_columns, settle,
};
use crate::chunks::{ChunkRef, TraceChunks};
use crate::error::StoreError;
use crate::migrate;
use crate::record::{StoredRow, SummaryRow, TraceRecord, TraceSummary, check_trace_id};
use crate::url::{Location, parse_location, redact_store_url, url_password};
use crate::writer::{Committer, CommitterSlot, InsertMany, SQLITE_BUSY_TIMEOUT, SharedSlot};

/// Connections to a SQLite file: readers run in parallel under WAL; writers
/// take turns on the one write lock.
const SQLITE_MAX_CONNECTIONS: u32 = 8;
/// Connections to PostgreSQL per store (per replica).
const POSTGRES_MAX_CONNECTIONS: u32 = 10;
/// How long an operation waits for a free pooled connection.
const ACQUIRE_TIMEOUT: Duration = Duration::from_secs(10);
/// [`Store::purge_older_than`] deletes packs not needed for this long
/// before its cutoff: the reuse window, and as much again for clock skew
/// between replicas.
const PACK_GRACE_MS: i64 = 2 * PACK_REUSE_MS;
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

// The summary's column list as a macro so the SQL below can be `concat!`ed
// at compile time (the record's is shared with the inserts, in `batch`).
macro_rules! summary_columns {
    () => {
        "trace_id, created_at_ms, tenant, kind, question, provider, model, answerable"
    };
}

// `$n` placeholders work in both backends (sqlx maps them for SQLite).

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
        let shown = redact_store_url(url);
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
        self.packs
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .set_budget(bytes);
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
        self.slot.committer.get_or_init(|| {
            Committer::start(
                Arc::clone(&self.packs),
                self.slot.sqlite_file.as_deref(),
                || self.without_committer(),
            )
        })
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
    pub async fn insert_many(&self, records: &[&TraceRecord]) -> Results {
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
        check_trace_id(trace_id)?;
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

impl InsertMany for Store {
    fn insert_many<'a>(
        &'a self,
        records: &'a [&'a TraceRecord],
    ) -> impl Future<Output = Results> + Send + 'a {
        Store::insert_many(self, records)
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
    use crate::batch::Cached;
    use crate::chunks::HASH_LEN;

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

    #[tokio::test]
    async fn the_writer_connection_syncs_every_commit() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("t.db");
        let store = Store::open(&format!("sqlite://{}", path.display()))
            .await
            .expect("open");
        let conn = crate::writer::open_writer(&path).expect("writer connection");
        let pragma = |name: &str| -> String {
            conn.query_row(&format!("PRAGMA {name}"), [], |row| {
                row.get::<_, rusqlite::types::Value>(0)
            })
            .map(|v| match v {
                rusqlite::types::Value::Integer(n) => n.to_string(),
                rusqlite::types::Value::Text(t) => t,
                other => format!("{other:?}"),
            })
            .unwrap_or_default()
        };
        assert_eq!(pragma("journal_mode"), "wal");
        assert_eq!(pragma("synchronous"), "2"); // FULL
        assert_eq!(pragma("busy_timeout"), "5000");
        assert_eq!(pragma("foreign_keys"), "1");
        store.close().await;
    }

    #[test]
    fn store_is_send_and_sync() {
        fn check<T: Send + Sync>() {}
        check::<Store>();
    }
}

//! [`Store::commit`](crate::Store::commit)'s group commit: concurrent commits share one
//! transaction and one disk sync.
//!
//! A SQLite file gets a dedicated writer thread with its own connection,
//! running each batch's statements synchronously: through sqlx every
//! statement is a round trip to a worker thread (two thread wake-ups), and
//! a batch of n traces is n + 2 statements or more, which at low
//! concurrency cost about as much as the fsync itself. PostgreSQL and
//! in-memory stores batch in a task over the pool, as before.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::{mpsc, oneshot};

use crate::batch::{INSERT_OR_SKIP, INSERT_PACK, PackCache, PackPlan, Results, encode_all, settle};
use crate::error::StoreError;
use crate::record::{Columns, TraceRecord};

/// How long a SQLite connection (the pool's, and the writer thread's)
/// waits for another writer's lock before failing with "database is locked".
pub(crate) const SQLITE_BUSY_TIMEOUT: Duration = Duration::from_secs(5);
/// Most traces per transaction.
const MAX_BATCH: usize = 64;

type Pending = (TraceRecord, oneshot::Sender<Result<(), StoreError>>);

/// The insert the batching task runs over the pool: [`Store::insert_many`](crate::Store::insert_many)
/// of a store without a committer. A trait so that this module, which the
/// store uses, does not depend on the store in turn.
pub(crate) trait InsertMany: Send + Sync + 'static {
    /// Inserts `records` in one transaction; one result per record.
    fn insert_many<'a>(
        &'a self,
        records: &'a [&'a TraceRecord],
    ) -> impl Future<Output = Results> + Send + 'a;
}

/// Where [`Store::commit`](crate::Store::commit) sends records; made on first use, in the
/// caller's runtime.
pub(crate) enum Committer {
    /// The writer thread of a SQLite file, and the connection it shares
    /// with [`Committer::commit_alone`].
    Thread(std::sync::mpsc::Sender<Pending>, Arc<Writer>),
    /// A task batching over the pool (PostgreSQL, in-memory SQLite).
    Task(mpsc::Sender<Pending>),
}

impl Committer {
    /// Starts the committer of a store with the reuse cache `packs`: a
    /// thread writing `sqlite_file`, else a task inserting through the
    /// store `pool` makes. The thread or task ends when the last clone of
    /// the store is dropped (it holds no clone itself, and `pool` must not
    /// hold the committer).
    pub(crate) fn start<P: InsertMany>(
        packs: Arc<Mutex<PackCache>>,
        sqlite_file: Option<&Path>,
        pool: impl FnOnce() -> P,
    ) -> Committer {
        // Failing to open the file a second time is unexpected (the pool
        // has it open); commits then still work, through the pool.
        if let Some(conn) = sqlite_file.and_then(|path| open_writer(path).ok()) {
            let (queue, rx) = std::sync::mpsc::channel();
            let writer = Arc::new(Writer {
                conn: Mutex::new(conn),
                packs,
            });
            let thread_writer = Arc::clone(&writer);
            let spawned = std::thread::Builder::new()
                .name("groundcite-trace-writer".into())
                .spawn(move || run_thread(&thread_writer, rx));
            if spawned.is_ok() {
                return Committer::Thread(queue, writer);
            }
        }
        let (queue, mut rx) = mpsc::channel::<Pending>(4 * MAX_BATCH);
        let pool_store = pool();
        tokio::spawn(async move {
            let mut batch: Vec<Pending> = Vec::with_capacity(MAX_BATCH);
            while let Some(first) = rx.recv().await {
                batch.push(first);
                fill(&mut batch, || rx.try_recv().ok());
                let records: Vec<&TraceRecord> = batch.iter().map(|(r, _)| r).collect();
                let results = pool_store.insert_many(&records).await;
                answer(&mut batch, results);
            }
        });
        Committer::Task(queue)
    }

    /// Queues `record` and waits for its transaction.
    pub(crate) async fn commit(&self, record: TraceRecord) -> Result<(), StoreError> {
        let (done, wait) = oneshot::channel();
        let sent = match self {
            Committer::Thread(queue, _) => queue.send((record, done)).is_ok(),
            Committer::Task(queue) => queue.send((record, done)).await.is_ok(),
        };
        let gone = || StoreError::InvalidRecord {
            field: "trace_id",
            reason: "could not be written: the trace writer has stopped",
        };
        if !sent {
            return Err(gone());
        }
        wait.await.map_err(|_| gone())?
    }

    /// [`Committer::commit`] for a caller with nothing else to do: when the
    /// SQLite writer is idle, the transaction runs on the calling thread.
    /// That saves the hop to the writer thread and back, two wake-ups that
    /// at one client cost about as much as the statements. It blocks the
    /// thread for the disk sync, which is why it is only for a caller that
    /// knows no other work waits on it; when the writer is busy, the
    /// record is queued as usual and shares the next transaction.
    pub(crate) async fn commit_alone(&self, record: TraceRecord) -> Result<(), StoreError> {
        if let Committer::Thread(_, writer) = self
            && let Ok(mut conn) = writer.conn.try_lock()
        {
            // One result per record; were it missing, nothing is known
            // to be committed.
            return insert_sync(&mut conn, &writer.packs, &[&record])
                .pop()
                .unwrap_or(Err(StoreError::InvalidRecord {
                    field: "trace_id",
                    reason: "could not be written: the writer returned no result",
                }));
        }
        self.commit(record).await
    }
}

/// What the writer thread and [`Committer::commit_alone`] share.
pub(crate) struct Writer {
    conn: Mutex<rusqlite::Connection>,
    packs: Arc<Mutex<PackCache>>,
}

/// The writer thread's connection: the same durability settings as the
/// pool's (`synchronous=FULL`, busy timeout; the file is already WAL).
pub(crate) fn open_writer(path: &Path) -> rusqlite::Result<rusqlite::Connection> {
    let conn = rusqlite::Connection::open_with_flags(
        path,
        rusqlite::OpenFlags::SQLITE_OPEN_READ_WRITE | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    conn.busy_timeout(SQLITE_BUSY_TIMEOUT)?;
    conn.pragma_update(None, "synchronous", "FULL")?;
    conn.pragma_update(None, "foreign_keys", true)?;
    Ok(conn)
}

fn run_thread(writer: &Writer, rx: std::sync::mpsc::Receiver<Pending>) {
    let mut batch: Vec<Pending> = Vec::with_capacity(MAX_BATCH);
    while let Ok(first) = rx.recv() {
        batch.push(first);
        fill(&mut batch, || rx.try_recv().ok());
        let records: Vec<&TraceRecord> = batch.iter().map(|(r, _)| r).collect();
        // A poisoned lock only means a panic elsewhere; the connection is
        // still usable (a transaction cut short rolls back).
        let mut conn = writer.conn.lock().unwrap_or_else(|e| e.into_inner());
        let results = insert_sync(&mut conn, &writer.packs, &records);
        drop(conn);
        answer(&mut batch, results);
    }
}

/// Adds to `batch` what is already queued (`next` never waits), up to
/// [`MAX_BATCH`]: the records that arrived during the last commit.
fn fill(batch: &mut Vec<Pending>, mut next: impl FnMut() -> Option<Pending>) {
    while batch.len() < MAX_BATCH {
        match next() {
            Some(p) => batch.push(p),
            None => break,
        }
    }
}

/// Answers each caller of `batch` (which is left empty) with its result.
fn answer(batch: &mut Vec<Pending>, results: Results) {
    for ((_, done), result) in batch.drain(..).zip(results) {
        // A caller that went away (client disconnected) needs no answer.
        let _ = done.send(result);
    }
}

/// [`Store::insert_many`](crate::Store::insert_many) on the writer thread's connection: the same
/// plan, the same SQL, one transaction.
pub(crate) fn insert_sync(
    conn: &mut rusqlite::Connection,
    packs: &Mutex<PackCache>,
    records: &[&TraceRecord],
) -> Results {
    let (mut results, mut encoded) = encode_all(records);
    if encoded.is_empty() {
        return results;
    }
    let mut plan = PackPlan::new(packs, &encoded);
    let outcome = run_batch(conn, &mut plan, &mut encoded);
    settle(packs, plan, outcome, records, &encoded, &mut results);
    results
}

fn run_batch<'a>(
    conn: &mut rusqlite::Connection,
    plan: &mut PackPlan<'a>,
    encoded: &mut [(usize, Columns<'a>)],
) -> Result<Vec<(usize, u64)>, String> {
    let db = |e: rusqlite::Error| e.to_string();
    // IMMEDIATE: take the write lock now (waiting up to the busy timeout)
    // rather than fail on upgrading a read lock mid-transaction.
    let tx = conn
        .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
        .map_err(db)?;
    let mut affected = Vec::with_capacity(encoded.len());
    for (k, (i, c)) in encoded.iter_mut().enumerate() {
        let step = plan.step(k, c);
        let pack_id = match step.pack_body() {
            Some(body) => Some(
                tx.prepare_cached(INSERT_PACK)
                    .and_then(|mut s| {
                        s.query_row(rusqlite::params![body, c.keep_ms], |row| row.get(0))
                    })
                    .map_err(db)?,
            ),
            None => None,
        };
        plan.finish(step, pack_id, c).map_err(str::to_owned)?;
        let n = tx
            .prepare_cached(INSERT_OR_SKIP)
            .and_then(|mut s| {
                s.execute(rusqlite::params![
                    c.trace_id,
                    c.created_at_ms,
                    c.tenant,
                    c.kind,
                    c.question,
                    c.chunks,
                    c.prompt,
                    c.schema_hash,
                    c.raw_output,
                    c.contract,
                    c.warnings,
                    c.provider,
                    c.model,
                    c.provider_request_id,
                    c.options,
                    c.timings,
                    c.error,
                    c.chunk_refs,
                    c.stop_reason,
                    c.input_tokens,
                    c.output_tokens,
                    c.answer_form,
                    c.answerable,
                ])
            })
            .map_err(db)?;
        affected.push((*i, n as u64));
    }
    tx.commit().map_err(db)?;
    Ok(affected)
}

/// What a [`Store`](crate::Store) keeps for its committer: started on first use.
#[derive(Default)]
pub(crate) struct CommitterSlot {
    pub sqlite_file: Option<PathBuf>,
    pub committer: std::sync::OnceLock<Committer>,
}

pub(crate) type SharedSlot = Arc<CommitterSlot>;

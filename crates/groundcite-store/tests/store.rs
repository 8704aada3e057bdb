//! Behaviour of the trace store against real databases: SQLite files and
//! memory always, PostgreSQL when `GROUNDCITE_TEST_POSTGRES_URL` is set.

use std::path::Path;

use groundcite_store::{JsonText, Store, StoreError, TraceChunks, TraceRecord};
use jiff::Timestamp;
use serde_json::{Value, json};

fn new_id() -> String {
    uuid::Uuid::now_v7().to_string()
}

fn at_ms(ms: i64) -> Timestamp {
    Timestamp::from_millisecond(ms).expect("timestamp in range")
}

fn chunks(value: Value) -> TraceChunks {
    TraceChunks::from_value(&value).expect("a JSON array")
}

/// Direct SQL on the store's database, to look behind the API.
enum Raw {
    Sqlite(sqlx::SqlitePool),
    Postgres(sqlx::PgPool),
}

impl Raw {
    async fn sqlite(dir: &Path) -> Raw {
        let url = format!("sqlite://{}", dir.join("traces.db").display());
        Raw::Sqlite(sqlx::SqlitePool::connect(&url).await.expect("raw sqlite"))
    }

    /// The chunks stored in packs that contain `marker`, one list per pack.
    async fn packed_chunks_containing(&self, marker: &str) -> Vec<Vec<Value>> {
        let sql = format!(
            "SELECT body FROM groundcite_chunk_packs WHERE body LIKE '%{marker}%' ORDER BY pack_id"
        );
        let bodies: Vec<String> = match self {
            Raw::Sqlite(pool) => sqlx::query_scalar(&sql).fetch_all(pool).await,
            Raw::Postgres(pool) => sqlx::query_scalar(&sql).fetch_all(pool).await,
        }
        .expect("packs");
        bodies
            .iter()
            .map(|b| serde_json::from_str(b).expect("a pack is a JSON array"))
            .collect()
    }

    async fn execute(&self, sql: &str) {
        match self {
            Raw::Sqlite(pool) => sqlx::query(sql).execute(pool).await.map(drop),
            Raw::Postgres(pool) => sqlx::query(sql).execute(pool).await.map(drop),
        }
        .expect(sql);
    }
}

/// About `bytes` bytes of deterministic text from all over Unicode (ASCII,
/// controls other than NUL, accents, CJK, astral emoji), never NUL.
fn arbitrary_text(bytes: usize) -> String {
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut text = String::with_capacity(bytes + 4);
    while text.len() < bytes {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let pick = (state >> 32) as u32;
        let c = match pick % 6 {
            0 | 1 => char::from_u32(0x20 + pick % 0x5f),
            2 => char::from_u32(1 + pick % 0x1f),
            3 => char::from_u32(0xa0 + pick % 0x700),
            4 => char::from_u32(0x4e00 + pick % 0x5000),
            _ => char::from_u32(0x1f300 + pick % 0x300),
        };
        text.push(c.unwrap_or('?'));
    }
    text
}

/// A record with every field set, unicode throughout, a 1 MB raw output.
fn full_record(tenant: &str) -> TraceRecord {
    let mut record = TraceRecord::new(new_id(), "answer");
    record.created_at = at_ms(1_760_000_000_123);
    record.tenant = Some(tenant.to_owned());
    record.question = Some("Wie setze ich mein Passwort zurück? 🔑 «ça va» 日本語".into());
    record.chunks = chunks(json!([
        {"id": "kb-1", "title": "Passwörter", "content": "Öffnen Sie „Einstellungen“ → Sicherheit.\n\tZeile 2"},
        {"id": "kb-2", "content": "中文内容 with \"quotes\" and \\ backslashes", "score": 0.8125, "n": -3}
    ]));
    record.prompt = Some(json!([
        {"role": "system", "content": "Answer only from the sources."},
        {"role": "user", "content": "Question: …"}
    ]));
    record.schema_hash = Some("sha256:0f1e2d".into());
    record.raw_output = Some(arbitrary_text(1 << 20));
    record.contract = Some(JsonText::from_value(
        &json!({"version": 1, "answerable": true, "claims": [{"text": "Öffnen", "citations": []}]}),
    ));
    record.warnings = vec!["quote_normalized".into(), "claims_dropped".into()];
    record.provider = Some("openai".into());
    record.model = Some("gpt-4.1-mini".into());
    record.provider_request_id = Some("req_abc123".into());
    // Unknown keys are kept, in their order.
    record.options = serde_json::from_value(
        json!({"match_profile": "lenient", "claim_policy": "drop", "z_first": 1, "a_second": 2}),
    )
    .expect("options");
    record.options.stream = Some(true);
    record.timings =
        serde_json::from_value(json!({"retrieve_ms": 12, "generate_ms": 840.5, "verify_ms": 1.5}))
            .expect("timings");
    record.error = Some(json!({"code": "rate_limited", "message": "slow down"}));
    record
}

async fn open_file(dir: &Path) -> Store {
    Store::open(&format!("sqlite:{}", dir.join("traces.db").display()))
        .await
        .expect("open sqlite file")
}

// ---- checks shared by every backend -------------------------------------

async fn check_roundtrip(store: &Store) {
    let tenant = format!("t-{}", new_id());
    let record = full_record(&tenant);
    store.insert(&record).await.expect("insert");
    let back = store.get(&record.trace_id, None).await.expect("get");
    let back = back.expect("stored");
    assert_eq!(back, record);
    assert_eq!(
        back.raw_output.as_deref().map(str::as_bytes),
        record.raw_output.as_deref().map(str::as_bytes)
    );
    // Key order survives (serde_json keeps insertion order).
    assert_eq!(back.options.to_string(), record.options.to_string());
    let listed = store.list_recent(Some(&tenant), 10).await.expect("list");
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].trace_id, record.trace_id);
    assert_eq!(listed[0].created_at, record.created_at);
    assert_eq!(listed[0].question, record.question);
    assert_eq!(listed[0].answerable, Some(true));
    assert_eq!(listed[0].model.as_deref(), Some("gpt-4.1-mini"));

    // Strings PostgreSQL TEXT could not hold still round-trip.
    let mut nul = TraceRecord::new(new_id(), "verify");
    nul.question = Some("a\0b".into());
    nul.raw_output = Some("\0{\"answerable\": true}\0".into());
    nul.chunks = chunks(json!([{"content": "x\u{0}y"}]));
    store.insert(&nul).await.expect("insert NUL");
    assert_eq!(
        store.get(&nul.trace_id, None).await.expect("get"),
        Some(nul)
    );
}

/// A chunk is stored once however many traces use it, and every trace
/// reads back its own chunks in its own order.
async fn check_chunk_packs(store: &Store, raw: &Raw) {
    let marker = new_id();
    let chunk =
        |id: &str, text: &str| json!({"chunk_id": id, "content": format!("{marker} {text}")});
    let (a, b, c, d, e) = (
        chunk("a", "alpha ✓ \"quoted\""),
        chunk("b", "beta"),
        chunk("c", "gamma 🦀"),
        chunk("d", "delta"),
        chunk("e", "epsilon"),
    );
    let mut first = TraceRecord::new(new_id(), "verify");
    first.chunks = chunks(json!([a, b, a]));
    let mut second = TraceRecord::new(new_id(), "verify");
    second.tenant = Some("other".into());
    second.chunks = chunks(json!([c, b]));
    let mut third = TraceRecord::new(new_id(), "verify");
    third.chunks = chunks(json!([b, d]));
    let mut fourth = TraceRecord::new(new_id(), "verify");
    fourth.chunks = chunks(json!([d, e]));
    let mut empty = TraceRecord::new(new_id(), "verify");
    empty.chunks = TraceChunks::new();
    store.insert(&first).await.expect("insert first");
    store.insert(&second).await.expect("insert second");
    let batch = store.insert_many(&[&third, &fourth, &empty]).await;
    assert!(batch.iter().all(Result::is_ok), "{batch:?}");
    for record in [&first, &second, &third, &fourth, &empty] {
        let back = store.get(&record.trace_id, None).await.expect("get");
        assert_eq!(back.as_ref(), Some(record));
    }
    // One pack per record with chunks not stored before, each chunk once.
    assert_eq!(
        raw.packed_chunks_containing(&marker).await,
        vec![vec![a, b], vec![c], vec![d], vec![e]]
    );
}

async fn check_tenant_isolation(store: &Store) {
    let (a, b) = (format!("a-{}", new_id()), format!("b-{}", new_id()));
    let mut in_a = TraceRecord::new(new_id(), "ask");
    in_a.tenant = Some(a.clone());
    let mut in_b = TraceRecord::new(new_id(), "ask");
    in_b.tenant = Some(b.clone());
    let untenanted = TraceRecord::new(new_id(), "ask");
    for record in [&in_a, &in_b, &untenanted] {
        store.insert(record).await.expect("insert");
    }
    let get = |id: &str, tenant: Option<&str>| {
        let id = id.to_owned();
        let tenant = tenant.map(str::to_owned);
        async move { store.get(&id, tenant.as_deref()).await.expect("get") }
    };
    assert_eq!(get(&in_a.trace_id, Some(&a)).await, Some(in_a.clone()));
    assert_eq!(get(&in_b.trace_id, Some(&a)).await, None);
    assert_eq!(get(&in_a.trace_id, Some(&b)).await, None);
    assert_eq!(get(&untenanted.trace_id, Some(&a)).await, None);
    assert_eq!(get(&in_b.trace_id, None).await, Some(in_b.clone()));
    assert_eq!(
        get(&untenanted.trace_id, None).await,
        Some(untenanted.clone())
    );

    let ids = |list: Vec<groundcite_store::TraceSummary>| -> Vec<String> {
        list.into_iter().map(|s| s.trace_id).collect()
    };
    let listed_a = store.list_recent(Some(&a), 100).await.expect("list a");
    assert_eq!(ids(listed_a), vec![in_a.trace_id.clone()]);
    let listed_all = ids(store.list_recent(None, 10_000).await.expect("list all"));
    for record in [&in_a, &in_b, &untenanted] {
        assert!(listed_all.contains(&record.trace_id));
    }
}

async fn check_duplicate(store: &Store) {
    let mut record = TraceRecord::new(new_id(), "ask");
    record.question = Some("first".into());
    store.insert(&record).await.expect("insert");
    let mut again = record.clone();
    again.question = Some("second".into());
    match store.insert(&again).await {
        Err(StoreError::Duplicate { trace_id }) => assert_eq!(trace_id, record.trace_id),
        other => panic!("expected Duplicate, got {other:?}"),
    }
    assert_eq!(
        store.get(&record.trace_id, None).await.expect("get"),
        Some(record)
    );
}

/// `Store::commit` and `Store::commit_alone` from many tasks at once:
/// each caller gets its own result (a taken ID, a bad record), the rest
/// all land with their chunks, and a chunk shared by every record is
/// stored once.
async fn check_commit(store: &Store, raw: Option<&Raw>) {
    let marker = new_id();
    let shared = json!({"chunk_id": "s", "content": format!("{marker} shared \"by\" all ✓")});
    let full = full_record("acme");
    store
        .commit(full.clone())
        .await
        .expect("commit a full record");
    assert_eq!(
        store.get(&full.trace_id, None).await.expect("get"),
        Some(full.clone())
    );

    let mut records = Vec::new();
    for i in 0..40 {
        let mut r = TraceRecord::new(new_id(), "verify");
        r.question = Some(format!("question {i}"));
        let own = json!({"chunk_id": format!("own-{i}"), "content": format!("{marker} own {i}")});
        r.chunks = chunks(json!([shared, own]));
        records.push(r);
    }
    let mut taken = records[3].clone();
    taken.question = Some("a second record under a taken ID".into());
    let mut invalid = TraceRecord::new(new_id(), "verify");
    invalid.tenant = Some("nul\0tenant".into());
    let mut tasks = Vec::new();
    for (i, r) in records.iter().cloned().enumerate() {
        let store = store.clone();
        // Half commit on their own thread when the writer is free, half
        // queue: the two paths share one connection and one cache.
        tasks.push(tokio::spawn(async move {
            if i % 2 == 0 {
                store.commit_alone(r).await
            } else {
                store.commit(r).await
            }
        }));
    }
    for (i, task) in tasks.into_iter().enumerate() {
        let result = task.await.expect("task");
        assert!(result.is_ok(), "record {i}: {result:?}");
    }
    match store.commit(taken.clone()).await {
        Err(StoreError::Duplicate { trace_id }) => assert_eq!(trace_id, records[3].trace_id),
        other => panic!("expected Duplicate, got {other:?}"),
    }
    match store.commit_alone(taken).await {
        Err(StoreError::Duplicate { trace_id }) => assert_eq!(trace_id, records[3].trace_id),
        other => panic!("expected Duplicate, got {other:?}"),
    }
    assert!(matches!(
        store.commit_alone(invalid.clone()).await,
        Err(StoreError::InvalidRecord {
            field: "tenant",
            ..
        })
    ),);
    assert!(matches!(
        store.commit(invalid).await,
        Err(StoreError::InvalidRecord {
            field: "tenant",
            ..
        })
    ),);
    for r in &records {
        assert_eq!(
            store.get(&r.trace_id, None).await.expect("get").as_ref(),
            Some(r)
        );
    }
    if let Some(raw) = raw {
        let packed: Vec<Value> = raw.packed_chunks_containing(&marker).await.concat();
        assert_eq!(packed.len(), 41, "each chunk once: {packed:?}");
        assert_eq!(packed.iter().filter(|c| **c == shared).count(), 1);
    }
}

// ---- SQLite ---------------------------------------------------------------

/// A batch commits its good records and reports the bad ones one by one.
async fn check_batch(store: &Store) {
    let a = full_record("acme");
    let mut b = full_record("acme");
    b.trace_id = new_id();
    let mut taken = full_record("acme");
    taken.trace_id = a.trace_id.clone();
    let mut invalid = full_record("acme");
    invalid.trace_id = "not valid!".into();
    let results = store.insert_many(&[&a, &taken, &invalid, &b]).await;
    assert!(results[0].is_ok(), "{:?}", results[0]);
    assert!(
        matches!(results[1], Err(StoreError::Duplicate { .. })),
        "{:?}",
        results[1]
    );
    assert!(
        matches!(results[2], Err(StoreError::InvalidTraceId { .. })),
        "{:?}",
        results[2]
    );
    assert!(results[3].is_ok(), "{:?}", results[3]);
    for r in [&a, &b] {
        let got = store.get(&r.trace_id, Some("acme")).await.expect("get");
        assert_eq!(got.as_ref(), Some(r));
    }
    // The duplicate wrote nothing over the first record.
    assert!(store.insert_many(&[]).await.is_empty());
}

#[tokio::test]
async fn sqlite_batches_commit_good_records_and_report_bad_ones() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = open_file(dir.path()).await;
    check_batch(&store).await;
    store.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sqlite_file_commits_from_many_tasks_through_its_writer_thread() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = open_file(dir.path()).await;
    check_commit(&store, Some(&Raw::sqlite(dir.path()).await)).await;
    // Another store on the same file (another replica, the CLI) reads it all.
    let other = open_file(dir.path()).await;
    assert_eq!(other.list_recent(None, 100).await.expect("list").len(), 41);
    drop(store);
    other.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn memory_store_commits_from_many_tasks() {
    // A private database: no second connection can look at its packs.
    let store = Store::open("sqlite::memory:").await.expect("open");
    check_commit(&store, None).await;
}

#[tokio::test]
async fn sqlite_stores_each_chunk_once() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = open_file(dir.path()).await;
    check_chunk_packs(&store, &Raw::sqlite(dir.path()).await).await;
    store.close().await;
}

#[tokio::test]
async fn purge_collects_the_packs_no_kept_trace_uses() {
    let dir = tempfile::tempdir().expect("tempdir");
    let now = Timestamp::now().as_millisecond();
    let day = 86_400_000;
    let x = json!({"chunk_id": "x", "content": "only-in-the-old-trace"});
    let y = json!({"chunk_id": "y", "content": "shared-by-both"});

    // A trace stored ten days ago by another process: its pack was last
    // needed then.
    let earlier = open_file(dir.path()).await;
    let mut old = TraceRecord::new("old", "verify");
    old.created_at = at_ms(now - 10 * day);
    old.chunks = chunks(json!([x, y]));
    earlier.insert(&old).await.expect("insert old");
    earlier.close().await;
    let raw = Raw::sqlite(dir.path()).await;
    raw.execute(&format!(
        "UPDATE groundcite_chunk_packs SET last_used_ms = {}",
        now - 10 * day
    ))
    .await;

    // Today one of its chunks comes again: stored again, in today's pack.
    let store = open_file(dir.path()).await;
    let mut new = TraceRecord::new("new", "verify");
    new.chunks = chunks(json!([y]));
    store.insert(&new).await.expect("insert new");
    // Within the hour, using it again stores nothing.
    let mut again = TraceRecord::new("again", "verify");
    again.chunks = chunks(json!([y]));
    store.insert(&again).await.expect("insert again");
    assert_eq!(
        raw.packed_chunks_containing("shared-by-both").await.len(),
        2
    );

    // Retention of one day: the old trace goes, and its pack with it.
    assert_eq!(
        store
            .purge_older_than(at_ms(now - day))
            .await
            .expect("purge"),
        1
    );
    assert!(
        raw.packed_chunks_containing("only-in-the-old-trace")
            .await
            .is_empty()
    );
    assert_eq!(
        raw.packed_chunks_containing("shared-by-both").await,
        vec![vec![y]]
    );
    assert_eq!(store.get("old", None).await.expect("get"), None);
    for record in [&new, &again] {
        let back = store.get(&record.trace_id, None).await.expect("get");
        assert_eq!(back.as_ref(), Some(record));
    }
    store.close().await;
}

#[tokio::test]
async fn rows_from_before_chunk_packs_still_read() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = open_file(dir.path()).await;
    let raw = Raw::sqlite(dir.path()).await;
    // As version 1 of the schema wrote it: chunks inline, no chunk_refs.
    raw.execute(
        "INSERT INTO groundcite_traces (trace_id, created_at_ms, kind, chunks, warnings, options, timings) \
         VALUES ('v1', 1000, 'verify', '[{\"chunk_id\":\"a\",\"content\":\"x\"}]', '[]', '{}', '{}')",
    )
    .await;
    let back = store.get("v1", None).await.expect("get").expect("stored");
    assert_eq!(
        back.chunks,
        chunks(json!([{"chunk_id": "a", "content": "x"}]))
    );
    store.close().await;
}

#[tokio::test]
async fn missing_mangled_or_altered_chunks_or_contracts_are_corruption() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = open_file(dir.path()).await;
    let raw = Raw::sqlite(dir.path()).await;
    for id in ["gone", "short", "altered", "contract"] {
        let mut record = TraceRecord::new(id, "verify");
        record.chunks = chunks(json!([{"chunk_id": id, "content": format!("text of {id}")}]));
        record.contract = Some(JsonText::from_value(&json!({"answerable": true})));
        store.insert(&record).await.expect("insert");
    }
    // A contract that is no longer JSON (the text is what the client got).
    raw.execute("UPDATE groundcite_traces SET contract = '{\"answerable\": tru' WHERE trace_id = 'contract'")
        .await;
    raw.execute("DELETE FROM groundcite_chunk_packs WHERE body LIKE '%text of gone%'")
        .await;
    raw.execute("UPDATE groundcite_traces SET chunk_refs = X'0102' WHERE trace_id = 'short'")
        .await;
    raw.execute(
        "UPDATE groundcite_chunk_packs SET body = replace(body, 'text of altered', 'text of changed')",
    )
    .await;
    for id in ["gone", "short", "altered", "contract"] {
        let err = store.get(id, None).await.expect_err("corrupt");
        assert!(
            matches!(&err, StoreError::Corrupt { trace_id, .. } if trace_id == id),
            "{err:?}"
        );
    }
    store.close().await;
}

#[tokio::test]
async fn sqlite_file_roundtrips_a_full_record() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = open_file(dir.path()).await;
    assert_eq!(store.backend(), "sqlite");
    check_roundtrip(&store).await;
    store.close().await;
}

#[tokio::test]
async fn sqlite_file_is_wal_with_full_sync() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = open_file(dir.path()).await;
    let durability = store.durability().await.expect("durability");
    assert_eq!(durability.journal_mode.as_deref(), Some("wal"));
    assert_eq!(durability.synchronous, "full");
    store.close().await;
}

#[tokio::test]
async fn reopening_keeps_data_and_reapplies_nothing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let record = full_record("acme");
    let store = open_file(dir.path()).await;
    store.insert(&record).await.expect("insert");
    store.close().await;
    for _ in 0..3 {
        let store = open_file(dir.path()).await;
        assert_eq!(
            store.get(&record.trace_id, None).await.expect("get"),
            Some(record.clone())
        );
        assert_eq!(store.list_recent(None, 10).await.expect("list").len(), 1);
        store.close().await;
    }
}

#[tokio::test]
async fn duplicate_trace_id_is_refused() {
    let store = Store::open("sqlite::memory:").await.expect("open");
    check_duplicate(&store).await;
}

#[tokio::test]
async fn tenants_see_only_their_traces() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = open_file(dir.path()).await;
    check_tenant_isolation(&store).await;
    store.close().await;
}

#[tokio::test]
async fn invalid_records_are_refused_before_the_database() {
    let store = Store::open("sqlite::memory:").await.expect("open");
    let long = "x".repeat(129);
    for bad in [
        "",
        "has space",
        "slash/es",
        "ünïcode",
        "nul\0",
        long.as_str(),
    ] {
        let record = TraceRecord::new(bad, "ask");
        assert!(
            matches!(
                store.insert(&record).await,
                Err(StoreError::InvalidTraceId(_))
            ),
            "{bad:?}"
        );
        assert!(
            matches!(
                store.get(bad, None).await,
                Err(StoreError::InvalidTraceId(_))
            ),
            "{bad:?}"
        );
    }
    let mut no_kind = TraceRecord::new(new_id(), "");
    assert!(matches!(
        store.insert(&no_kind).await,
        Err(StoreError::InvalidRecord { field: "kind", .. })
    ));
    no_kind.kind = "ask".into();
    no_kind.model = Some("gpt\0".into());
    assert!(matches!(
        store.insert(&no_kind).await,
        Err(StoreError::InvalidRecord { field: "model", .. })
    ));
    assert!(store.list_recent(None, 10).await.expect("list").is_empty());
}

#[tokio::test]
async fn purge_removes_only_older_traces() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = open_file(dir.path()).await;
    let mut ids = Vec::new();
    for (i, ms) in [1_000, 2_000, 2_999, 3_000, 4_000].into_iter().enumerate() {
        let mut record = TraceRecord::new(format!("p{i}"), "ask");
        record.created_at = at_ms(ms);
        store.insert(&record).await.expect("insert");
        ids.push(record.trace_id);
    }
    assert_eq!(
        store.purge_older_than(at_ms(3_000)).await.expect("purge"),
        3
    );
    let left: Vec<String> = store
        .list_recent(None, 10)
        .await
        .expect("list")
        .into_iter()
        .map(|s| s.trace_id)
        .collect();
    assert_eq!(left, vec!["p4".to_owned(), "p3".to_owned()]);
    assert_eq!(
        store.purge_older_than(at_ms(3_000)).await.expect("purge"),
        0
    );
    store.close().await;
}

#[tokio::test]
async fn list_recent_is_newest_first_and_limited() {
    let store = Store::open("sqlite::memory:").await.expect("open");
    for ms in [5_000, 1_000, 3_000] {
        let mut record = TraceRecord::new(format!("t{ms}"), "ask");
        record.created_at = at_ms(ms);
        store.insert(&record).await.expect("insert");
    }
    let listed = store.list_recent(None, 2).await.expect("list");
    let ids: Vec<&str> = listed.iter().map(|s| s.trace_id.as_str()).collect();
    assert_eq!(ids, ["t5000", "t3000"]);
    assert_eq!(listed[0].answerable, None);
    assert!(store.list_recent(None, 0).await.expect("list").is_empty());
}

#[tokio::test]
async fn concurrent_inserts_all_land() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = std::sync::Arc::new(open_file(dir.path()).await);
    let mut tasks = Vec::new();
    for task in 0..8 {
        let store = store.clone();
        tasks.push(tokio::spawn(async move {
            for n in 0..50 {
                let mut record = TraceRecord::new(format!("c{task}-{n}"), "ask");
                record.raw_output = Some(format!("output {task} {n}"));
                store.insert(&record).await.expect("insert");
            }
        }));
    }
    for task in tasks {
        task.await.expect("task");
    }
    assert_eq!(
        store.list_recent(None, 1_000).await.expect("list").len(),
        400
    );
    let probe = store
        .get("c7-49", None)
        .await
        .expect("get")
        .expect("stored");
    assert_eq!(probe.raw_output.as_deref(), Some("output 7 49"));
}

#[tokio::test]
async fn simultaneous_opens_of_a_new_file_all_succeed() {
    let dir = tempfile::tempdir().expect("tempdir");
    let url = format!(
        "sqlite://{}",
        dir.path().join("nested/dir/new.db").display()
    );
    let mut tasks = Vec::new();
    for task in 0..4 {
        let url = url.clone();
        tasks.push(tokio::spawn(async move {
            let store = Store::open(&url).await.expect("open");
            store
                .insert(&TraceRecord::new(format!("o{task}"), "ask"))
                .await
                .expect("insert");
            store.close().await;
        }));
    }
    for task in tasks {
        task.await.expect("task");
    }
    let store = Store::open(&url).await.expect("open");
    assert_eq!(store.list_recent(None, 10).await.expect("list").len(), 4);
}

#[tokio::test]
async fn plain_path_opens_sqlite_and_creates_parents() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("a/b/traces.db");
    let store = Store::open(path.to_str().expect("utf-8 path"))
        .await
        .expect("open");
    assert_eq!(store.backend(), "sqlite");
    assert!(path.exists());
    let debug = format!("{store:?}");
    assert!(
        debug.contains("sqlite") && debug.contains("traces.db"),
        "{debug}"
    );
}

#[tokio::test]
async fn memory_store_is_one_database() {
    let store = std::sync::Arc::new(Store::open("sqlite::memory:").await.expect("open"));
    check_roundtrip(&store).await;
    check_tenant_isolation(&store).await;
    let mut tasks = Vec::new();
    for task in 0..4 {
        let store = store.clone();
        tasks.push(tokio::spawn(async move {
            for n in 0..10 {
                let record = TraceRecord::new(format!("m{task}-{n}"), "ask");
                store.insert(&record).await.expect("insert");
            }
        }));
    }
    for task in tasks {
        task.await.expect("task");
    }
    assert!(store.get("m3-9", None).await.expect("get").is_some());
    // Two memory stores do not share data.
    let other = Store::open("sqlite::memory:").await.expect("open");
    assert!(other.list_recent(None, 10).await.expect("list").is_empty());
}

#[tokio::test]
async fn bad_urls_are_refused_and_passwords_never_shown() {
    let err = Store::open("mysql://app:hunter2@db/traces")
        .await
        .expect_err("mysql");
    assert!(matches!(err, StoreError::InvalidUrl { .. }), "{err:?}");
    assert!(!format!("{err} {err:?}").contains("hunter2"), "{err}");

    // Nothing listens on port 1: the connection is refused.
    let err = Store::open("postgres://app:hunter2@127.0.0.1:1/traces?sslmode=disable")
        .await
        .expect_err("refused");
    assert!(
        matches!(
            err,
            StoreError::Open {
                backend: "postgres",
                ..
            }
        ),
        "{err:?}"
    );
    let shown = format!("{err} {err:?}");
    assert!(!shown.contains("hunter2"), "{shown}");
    assert!(shown.contains("app:****@127.0.0.1:1"), "{shown}");
}

#[tokio::test]
async fn unopenable_sqlite_paths_are_open_errors() {
    let dir = tempfile::tempdir().expect("tempdir");
    // The path is a directory.
    let err = Store::open(dir.path().to_str().expect("utf-8 path"))
        .await
        .expect_err("directory");
    assert!(
        matches!(
            err,
            StoreError::Open {
                backend: "sqlite",
                ..
            }
        ),
        "{err:?}"
    );
    // A parent is a file.
    let file = dir.path().join("file");
    std::fs::write(&file, "not a directory").expect("write");
    let err = Store::open(&format!("sqlite:{}/sub/traces.db", file.display()))
        .await
        .expect_err("parent is a file");
    assert!(
        matches!(
            err,
            StoreError::Open {
                backend: "sqlite",
                ..
            }
        ),
        "{err:?}"
    );
    assert!(err.to_string().contains("cannot create directory"), "{err}");
}

// ---- PostgreSQL -------------------------------------------------------------

#[tokio::test]
async fn postgres_roundtrip_isolation_and_duplicates() {
    let Ok(url) = std::env::var("GROUNDCITE_TEST_POSTGRES_URL") else {
        println!("skipped: set GROUNDCITE_TEST_POSTGRES_URL");
        return;
    };
    let store = Store::open(&url).await.expect("open postgres");
    assert_eq!(store.backend(), "postgres");
    if let Some(password) = url
        .split_once("://")
        .and_then(|(_, rest)| rest.rsplit_once('@'))
        .and_then(|(userinfo, _)| userinfo.split_once(':'))
        .map(|(_, password)| password)
        .filter(|password| !password.is_empty())
    {
        assert!(!format!("{store:?}").contains(password));
    }
    check_roundtrip(&store).await;
    check_chunk_packs(
        &store,
        &Raw::Postgres(sqlx::PgPool::connect(&url).await.expect("raw postgres")),
    )
    .await;
    check_tenant_isolation(&store).await;
    check_duplicate(&store).await;
    check_batch(&store).await;
    check_commit(
        &store,
        Some(&Raw::Postgres(
            sqlx::PgPool::connect(&url).await.expect("raw postgres"),
        )),
    )
    .await;
    assert_eq!(
        store.durability().await.expect("durability").journal_mode,
        None
    );
    store.close().await;

    // Reopening (migrations already applied) from several tasks at once.
    let mut tasks = Vec::new();
    for _ in 0..4 {
        let url = url.clone();
        tasks.push(tokio::spawn(async move {
            Store::open(&url).await.expect("reopen").close().await;
        }));
    }
    for task in tasks {
        task.await.expect("task");
    }

    // Retention, on timestamps no other test uses.
    let store = Store::open(&url).await.expect("reopen");
    let mut old = TraceRecord::new(new_id(), "ask");
    old.created_at = at_ms(315_532_800_000); // 1980
    let mut newer = TraceRecord::new(new_id(), "ask");
    newer.created_at = at_ms(631_152_000_000); // 1990
    store.insert(&old).await.expect("insert");
    store.insert(&newer).await.expect("insert");
    assert!(
        store
            .purge_older_than(at_ms(473_385_600_000))
            .await
            .expect("purge")
            >= 1
    );
    assert_eq!(store.get(&old.trace_id, None).await.expect("get"), None);
    assert!(
        store
            .get(&newer.trace_id, None)
            .await
            .expect("get")
            .is_some()
    );
    assert!(
        store
            .purge_older_than(at_ms(946_684_800_000))
            .await
            .expect("purge")
            >= 1
    );
    store.close().await;
}

//! Retrieval from a search service instead of the index: a scripted
//! retriever (floors, duplicates, the gate) and, when
//! `GROUNDCITE_TEST_POSTGRES_URL` is set (scripts/test sets it),
//! PostgreSQL full-text search over a real table.

use std::sync::Mutex;

use groundcite_ask::{
    AskSettings, GateMode, PostgresColumns, PostgresRetriever, Retriever, RetrieverError, Verdict,
    retrieve_external,
};
use groundcite_core::Chunk;

fn chunk(id: &str, content: &str, score: f64) -> Chunk {
    Chunk {
        chunk_id: id.into(),
        content: content.into(),
        source_title: Some(format!("Title of {id}")),
        source_url: None,
        page_number: None,
        score: Some(score),
    }
}

struct Scripted {
    hits: Vec<Chunk>,
    floor: f64,
    asked: Mutex<Vec<(String, usize)>>,
}

impl Retriever for Scripted {
    fn name(&self) -> &'static str {
        "scripted"
    }
    fn search(&self, question: &str, limit: usize) -> Result<Vec<Chunk>, RetrieverError> {
        self.asked
            .lock()
            .expect("lock")
            .push((question.to_string(), limit));
        Ok(self.hits.clone())
    }
    fn score_floor(&self) -> f64 {
        self.floor
    }
}

fn scripted(hits: Vec<Chunk>, floor: f64) -> Scripted {
    Scripted {
        hits,
        floor,
        asked: Mutex::new(Vec::new()),
    }
}

#[test]
fn hits_below_the_floor_and_repeated_ids_are_dropped_and_sentences_ranked_from_the_hits() {
    let r = scripted(
        vec![
            chunk(
                "kb/refunds#3",
                "Refunds are paid within 5 business days. Our office is in Leeds.",
                9.0,
            ),
            chunk("kb/refunds#3", "A duplicate of the same chunk.", 8.0),
            chunk("kb/shipping#1", "Standard shipping takes 3 to 5 days.", 4.0),
            chunk("kb/careers#7", "We are hiring refund specialists.", 0.5),
        ],
        1.0,
    );
    let settings = AskSettings::with_gate(GateMode::Retrieval);
    let got =
        retrieve_external(&r, None, "how soon are refunds paid?", &settings).expect("retrieve");
    let asked = r.asked.lock().expect("lock").clone();
    assert_eq!(asked, vec![("how soon are refunds paid?".to_string(), 10)]);
    let ids: Vec<&str> = got
        .chunks
        .chunks()
        .iter()
        .map(|c| c.chunk_id.as_str())
        .collect();
    assert_eq!(
        ids,
        ["kb/refunds#3", "kb/shipping#1"],
        "floor and duplicate dropped"
    );
    assert_eq!(
        got.candidates[0].text,
        "Refunds are paid within 5 business days."
    );
    assert_eq!(got.candidates[0].chunk_id, "kb/refunds#3");
    let e = got.signals.external.as_ref().expect("external signals");
    assert_eq!(
        (e.retriever.as_str(), e.hits, e.best_score, e.floor),
        ("scripted", 2, Some(9.0), 1.0)
    );
    assert_eq!(got.signals.bm25_max, None, "a service's score is not BM25");
    assert_eq!(got.verdict, Verdict::Pass);
    // The fields the service gave, nothing invented.
    assert_eq!(
        got.chunks.chunks().iter().next().expect("chunk").source_url,
        None
    );
}

#[test]
fn nothing_at_or_above_the_floor_is_refused_by_the_retrieval_gate() {
    let r = scripted(vec![chunk("a", "Something unrelated entirely.", 0.2)], 1.0);
    let settings = AskSettings::with_gate(GateMode::Retrieval);
    let got =
        retrieve_external(&r, None, "Do you ship to Antarctica?", &settings).expect("retrieve");
    assert!(got.chunks.is_empty());
    match &got.verdict {
        Verdict::Refuse(why) => assert!(
            why.contains("no document") || why.contains("floor"),
            "{why}"
        ),
        Verdict::Pass => panic!("passed with nothing retrieved"),
    }
    let none = scripted(Vec::new(), 0.0);
    let got = retrieve_external(&none, None, "anything", &settings).expect("retrieve");
    assert!(!got.gate_passed());
}

#[test]
fn the_evidence_gate_reads_word_coverage_without_an_embedding_model() {
    let r = scripted(
        vec![chunk("a", "Refunds are paid within 5 business days.", 3.0)],
        0.0,
    );
    let settings = AskSettings::with_gate(GateMode::Evidence);
    let good = retrieve_external(&r, None, "when are refunds paid", &settings).expect("retrieve");
    assert!(good.gate_passed(), "{:?}", good.verdict);
    let bad = retrieve_external(
        &r,
        None,
        "can I open a mortgage with a guarantor",
        &settings,
    )
    .expect("retrieve");
    assert!(!bad.gate_passed(), "{:?}", bad.signals);
}

#[test]
fn postgres_settings_that_are_not_plain_identifiers_are_refused_without_connecting() {
    let cols = PostgresColumns {
        table: "chunks; DROP TABLE traces".into(),
        ..PostgresColumns::default()
    };
    let e = PostgresRetriever::new("postgres://u:hunter2@127.0.0.1:1/db", &cols, 0.0)
        .expect_err("refused");
    assert!(e.to_string().contains("not a plain SQL identifier"), "{e}");
    let cols = PostgresColumns {
        language: "english'".into(),
        ..PostgresColumns::default()
    };
    assert!(PostgresRetriever::new("postgres://127.0.0.1:1/db", &cols, 0.0).is_err());
    let e =
        PostgresRetriever::new("not a url", &PostgresColumns::default(), 0.0).expect_err("bad url");
    assert!(e.to_string().contains("bad database URL"), "{e}");
    // Unreachable: a clear error naming the retriever, no password.
    let r = PostgresRetriever::new(
        "postgres://u:hunter2@127.0.0.1:1/db",
        &PostgresColumns::default(),
        0.0,
    )
    .expect("lazy");
    let e = r.search("refunds", 5).expect_err("unreachable");
    assert!(e.to_string().starts_with("postgres: "), "{e}");
    assert!(
        !e.to_string().contains("hunter2") && !format!("{r:?}").contains("hunter2"),
        "{e} {r:?}"
    );
}

#[test]
fn postgres_full_text_search_over_a_real_table() {
    let Ok(url) = std::env::var("GROUNDCITE_TEST_POSTGRES_URL") else {
        println!("skipped: set GROUNDCITE_TEST_POSTGRES_URL");
        return;
    };
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("rt");
    let table = format!("kb_chunks_{}", std::process::id());
    rt.block_on(async {
        use sqlx::Connection;
        let mut c = sqlx::PgConnection::connect(&url).await.expect("connect");
        sqlx::query(&format!(
            "CREATE TABLE {table} (id int PRIMARY KEY, body text, heading text, link text, pg int)"
        ))
        .execute(&mut c)
        .await
        .expect("create");
        for (id, body, heading, link, pg) in [
            (
                1,
                "Refunds are paid within 5 business days of approval.",
                Some("Refunds"),
                Some("https://kb.example/refunds"),
                Some(3),
            ),
            (
                2,
                "Standard shipping takes 3 to 5 business days.",
                Some("Shipping"),
                None,
                None,
            ),
            (
                3,
                "Our offices are closed on public holidays.",
                None,
                None,
                Some(0),
            ),
        ] {
            sqlx::query(&format!("INSERT INTO {table} VALUES ($1, $2, $3, $4, $5)"))
                .bind(id)
                .bind(body)
                .bind(heading)
                .bind(link)
                .bind(pg)
                .execute(&mut c)
                .await
                .expect("insert");
        }
    });
    let cols = PostgresColumns {
        table: table.clone(),
        id: "id".into(),
        content: "body".into(),
        title: Some("heading".into()),
        url: Some("link".into()),
        page: Some("pg".into()),
        language: "english".into(),
    };
    let r = PostgresRetriever::new(&url, &cols, 0.0).expect("retriever");
    // Words the passage does not all share: any word may match.
    let hits = r
        .search("how many days until my refund is paid?", 5)
        .expect("search");
    let ids: Vec<&str> = hits.iter().map(|c| c.chunk_id.as_str()).collect();
    assert_eq!(ids.first(), Some(&"1"), "{hits:?}");
    assert!(ids.contains(&"2"), "shipping shares 'days': {ids:?}");
    assert!(!ids.contains(&"3"), "{ids:?}");
    let first = &hits[0];
    assert_eq!(first.source_title.as_deref(), Some("Refunds"));
    assert_eq!(
        first.source_url.as_deref(),
        Some("https://kb.example/refunds")
    );
    assert_eq!(first.page_number, Some(3));
    assert!(first.score.is_some_and(|s| s > 0.0));
    let shipping = hits.iter().find(|c| c.chunk_id == "2").expect("2");
    assert_eq!(
        (shipping.source_url.as_deref(), shipping.page_number),
        (None, None),
        "null, never invented"
    );
    // Hostile text is a bound parameter; stop words alone find nothing.
    assert!(
        r.search("'); DROP TABLE x; --", 5)
            .expect("search")
            .is_empty()
    );
    assert!(r.search("the and of", 5).expect("search").is_empty());
    assert!(r.search("", 5).expect("search").is_empty());
    // The whole pipeline over it.
    let settings = AskSettings::with_gate(GateMode::Retrieval);
    let got = retrieve_external(&r, None, "when do refunds get paid", &settings).expect("ask");
    assert_eq!(
        got.candidates[0].text,
        "Refunds are paid within 5 business days of approval."
    );
    // A missing table is a clear error.
    let gone = PostgresRetriever::new(
        &url,
        &PostgresColumns {
            table: "no_such_table".into(),
            ..cols
        },
        0.0,
    )
    .expect("retriever");
    let e = gone.search("refunds", 5).expect_err("missing table");
    assert!(e.to_string().contains("no_such_table"), "{e}");
    rt.block_on(async {
        use sqlx::Connection;
        let mut c = sqlx::PgConnection::connect(&url).await.expect("connect");
        sqlx::query(&format!("DROP TABLE {table}"))
            .execute(&mut c)
            .await
            .expect("drop");
    });
}

//! The REST retrievers against recorded exchanges
//! (`testdata/retrievers/<service>/<case>.json`, replayed by the providers'
//! replay server, which asserts every request: path, query, headers, body).

use std::path::PathBuf;
use std::time::Duration;

use groundcite_ask::retriever::{Auth, FieldMap};
use groundcite_ask::{
    AskSettings, AzureSearchOptions, AzureSearchRetriever, GateMode, OpenSearchRetriever,
    Retriever, retrieve_external,
};
use groundcite_providers::SecretString;
use groundcite_providers::replay::{Cassette, ReplayServer};
use serde_json::Value;

fn cassette(service: &str, case: &str) -> Cassette {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/retrievers")
        .join(service)
        .join(format!("{case}.json"));
    Cassette::load(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn opensearch(server: &ReplayServer) -> OpenSearchRetriever {
    OpenSearchRetriever::new(
        &server.base_url(),
        "kb-chunks",
        Auth::Header(
            "authorization",
            SecretString::new("ApiKey test-FAKE-es-key-0001"),
        ),
        FieldMap::default(),
        0.0,
        Duration::from_secs(5),
    )
    .expect("retriever")
}

fn azure_fields() -> FieldMap {
    FieldMap {
        id: Some("id".into()),
        content: "content".into(),
        title: Some("title".into()),
        url: Some("url".into()),
        page: Some("page".into()),
    }
}

fn azure(server: &ReplayServer, semantic: Option<&str>, floor: f64) -> AzureSearchRetriever {
    AzureSearchRetriever::new(
        &AzureSearchOptions {
            endpoint: server.base_url(),
            index: "kb-chunks".into(),
            api_version: groundcite_ask::retriever::AZURE_SEARCH_API_VERSION.into(),
            semantic_configuration: semantic.map(str::to_string),
            floor,
            timeout: Duration::from_secs(5),
        },
        SecretString::new("test-FAKE-azure-search-key-0001"),
        azure_fields(),
    )
    .expect("retriever")
}

fn question(c: &Cassette) -> (String, usize) {
    (
        c.input["question"].as_str().expect("question").to_string(),
        c.input["limit"].as_u64().expect("limit") as usize,
    )
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .expect("array")
        .iter()
        .map(|x| x.as_str().expect("string").to_string())
        .collect()
}

#[test]
fn opensearch_hits_map_by_field_and_nothing_is_invented() {
    let c = cassette("opensearch", "hits");
    let server = ReplayServer::for_cassette(&c).expect("server");
    let (q, limit) = question(&c);
    let hits = opensearch(&server).search(&q, limit).expect("search");
    assert_eq!(server.problems(), Vec::<String>::new());
    let ids: Vec<String> = hits.iter().map(|h| h.chunk_id.clone()).collect();
    assert_eq!(ids, strings(&c.expect["ids"]));
    assert_eq!(hits[0].source_title.as_deref(), Some("Refunds"));
    assert_eq!(
        hits[0].source_url.as_deref(),
        Some("https://kb.example/refunds")
    );
    assert_eq!((hits[0].page_number, hits[0].score), (Some(4), Some(7.25)));
    assert_eq!(
        (hits[1].source_url.as_deref(), hits[1].page_number),
        (None, None)
    );
    assert_eq!(
        (hits[2].page_number, hits[2].score),
        (None, None),
        "page -2 and a null score"
    );
}

#[test]
fn opensearch_failures_are_clear_and_keep_the_key_out() {
    for case in ["unauthorized", "not-json"] {
        let c = cassette("opensearch", case);
        let server = ReplayServer::for_cassette(&c).expect("server");
        let (q, limit) = question(&c);
        let r = opensearch(&server);
        let e = r.search(&q, limit).expect_err(case).to_string();
        assert_eq!(server.problems(), Vec::<String>::new(), "{case}");
        assert!(e.starts_with("opensearch: "), "{case}: {e}");
        assert!(
            e.contains(c.expect["error"].as_str().expect("error")),
            "{case}: {e}"
        );
        assert!(
            !e.contains("FAKE") && !format!("{r:?}").contains("FAKE"),
            "{case}: {e} {r:?}"
        );
    }
}

#[test]
fn azure_search_full_text_and_semantic_ranking() {
    let c = cassette("azure-search", "simple");
    let server = ReplayServer::for_cassette(&c).expect("server");
    let (q, limit) = question(&c);
    let hits = azure(&server, None, 0.0).search(&q, limit).expect("search");
    assert_eq!(server.problems(), Vec::<String>::new());
    let ids: Vec<String> = hits.iter().map(|h| h.chunk_id.clone()).collect();
    assert_eq!(ids, strings(&c.expect["ids"]));
    let scores: Vec<f64> = hits.iter().map(|h| h.score.expect("score")).collect();
    assert_eq!(scores, [5.1, 1.2]);
    assert_eq!(
        (hits[0].page_number, hits[1].source_url.as_deref()),
        (Some(4), None)
    );

    let c = cassette("azure-search", "semantic");
    let server = ReplayServer::for_cassette(&c).expect("server");
    let (q, _) = question(&c);
    let floor = c.input["floor"].as_f64().expect("floor");
    let r = azure(&server, Some("kb-semantic"), floor);
    let got = retrieve_external(&r, None, &q, &AskSettings::with_gate(GateMode::Retrieval))
        .expect("retrieve");
    assert_eq!(server.problems(), Vec::<String>::new());
    let kept: Vec<String> = got
        .chunks
        .chunks()
        .iter()
        .map(|h| h.chunk_id.clone())
        .collect();
    assert_eq!(
        kept,
        strings(&c.expect["kept"]),
        "the reranker's score and the floor"
    );
    let e = got.signals.external.expect("external");
    assert_eq!((e.hits, e.best_score, e.floor), (1, Some(3.2), 1.5));
}

#[test]
fn azure_search_throttling_is_an_error_with_its_status() {
    let c = cassette("azure-search", "throttled");
    let server = ReplayServer::for_cassette(&c).expect("server");
    let (q, limit) = question(&c);
    let r = azure(&server, None, 0.0);
    let e = r.search(&q, limit).expect_err("429").to_string();
    assert_eq!(server.problems(), Vec::<String>::new());
    assert!(
        e.contains("HTTP 429") && e.contains("too many requests"),
        "{e}"
    );
    assert!(
        !e.contains("FAKE") && !format!("{r:?}").contains("FAKE"),
        "{e}"
    );
}

#[test]
fn settings_that_would_change_the_request_are_refused() {
    let t = Duration::from_secs(1);
    let key = || Auth::Header("authorization", SecretString::new("ApiKey k"));
    for index in ["", "KB", "_all", "kb,other", "kb/../x", "kb*"] {
        assert!(
            OpenSearchRetriever::new(
                "http://127.0.0.1:9",
                index,
                key(),
                FieldMap::default(),
                0.0,
                t
            )
            .is_err(),
            "{index:?}"
        );
    }
    assert!(OpenSearchRetriever::new("ftp://x", "kb", key(), FieldMap::default(), 0.0, t).is_err());
    let bad = FieldMap {
        content: "content\"}, \"script".into(),
        ..FieldMap::default()
    };
    assert!(OpenSearchRetriever::new("http://127.0.0.1:9", "kb", key(), bad, 0.0, t).is_err());
    let opts = |index: &str, version: &str| AzureSearchOptions {
        endpoint: "https://kb.search.windows.net".into(),
        index: index.into(),
        api_version: version.into(),
        semantic_configuration: None,
        floor: 0.0,
        timeout: t,
    };
    let k = || SecretString::new("k");
    assert!(AzureSearchRetriever::new(&opts("kb", "2024-07-01"), k(), azure_fields()).is_ok());
    assert!(AzureSearchRetriever::new(&opts("kb/x", "2024-07-01"), k(), azure_fields()).is_err());
    assert!(AzureSearchRetriever::new(&opts("kb", "2024&x=1"), k(), azure_fields()).is_err());
    let no_id = FieldMap {
        id: None,
        ..azure_fields()
    };
    let e = AzureSearchRetriever::new(&opts("kb", "2024-07-01"), k(), no_id).expect_err("no id");
    assert!(e.to_string().contains("key field"), "{e}");
    // Unreachable: the retriever's name, no key.
    let r = OpenSearchRetriever::new(
        "http://127.0.0.1:9",
        "kb",
        key(),
        FieldMap::default(),
        0.0,
        t,
    )
    .expect("retriever");
    let e = r.search("refunds", 3).expect_err("unreachable").to_string();
    assert!(e.starts_with("opensearch: cannot reach"), "{e}");
}

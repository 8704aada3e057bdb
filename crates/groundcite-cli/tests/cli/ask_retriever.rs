//! `groundcite ask --retriever postgres`: the whole pipeline (the real
//! embedded model, verification) over chunks that live in a PostgreSQL
//! table instead of groundcite's index. Needs `GROUNDCITE_TEST_POSTGRES_URL`
//! (scripts/test sets it); settings errors need nothing.

#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn groundcite(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_groundcite"));
    c.current_dir(repo()).args(args);
    for v in [
        "GROUNDCITE_RETRIEVER",
        "GROUNDCITE_RETRIEVER_URL",
        "GROUNDCITE_CONFIG",
    ] {
        c.env_remove(v);
    }
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn a_retriever_without_its_settings_is_one_clear_sentence() {
    let out = groundcite(
        &["ask", "Refunds?", "--retriever", "postgres", "--no-trace"],
        &[],
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    let err = text(&out.stderr);
    assert!(
        err.contains("--retriever-url") && err.contains("GROUNDCITE_RETRIEVER_URL"),
        "{err}"
    );
    let out = groundcite(
        &[
            "ask",
            "Refunds?",
            "--retriever",
            "azure-search",
            "--no-trace",
        ],
        &[("GROUNDCITE_RETRIEVER_URL", "https://kb.search.windows.net")],
    );
    let err = text(&out.stderr);
    assert!(!out.status.success() && err.contains("index"), "{err}");
    // The URL's password never shows, whatever fails.
    let out = groundcite(
        &[
            "ask",
            "Refunds?",
            "--retriever",
            "postgres",
            "--no-trace",
            "--gate",
            "off",
        ],
        &[(
            "GROUNDCITE_RETRIEVER_URL",
            "postgres://u:hunter2@127.0.0.1:1/kb",
        )],
    );
    let err = text(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(
        err.contains("postgres") && !err.contains("hunter2"),
        "{err}"
    );
}

#[test]
fn ask_answers_from_a_postgres_table_with_verified_citations() {
    let Ok(url) = std::env::var("GROUNDCITE_TEST_POSTGRES_URL") else {
        println!("skipped: set GROUNDCITE_TEST_POSTGRES_URL");
        return;
    };
    let table = format!("cli_kb_{}", std::process::id());
    // The sample corpus's refund page, one row per paragraph, IDs of the
    // service's own making.
    let page = std::fs::read_to_string(repo().join("corpus/sample/refunds.md")).unwrap();
    let mut sql = format!(
        "CREATE TABLE {table} (doc_id text PRIMARY KEY, body text NOT NULL, heading text, href text);\n"
    );
    let mut heading = String::new();
    for (i, para) in page.split("\n\n").enumerate() {
        let para = para.trim();
        if let Some(h) = para.strip_prefix('#') {
            heading = h.trim_start_matches('#').trim().to_string();
            continue;
        }
        sql.push_str(&format!(
            "INSERT INTO {table} VALUES ('kb-{i}', $q${para}$q$, $q${heading}$q$, NULL);\n"
        ));
    }
    let psql = |script: &str| {
        let out = Command::new("psql")
            .args([url.as_str(), "-v", "ON_ERROR_STOP=1", "-q", "-c", script])
            .output()
            .unwrap();
        assert!(out.status.success(), "psql: {}", text(&out.stderr));
    };
    psql(&sql);
    let cfg =
        std::env::temp_dir().join(format!("groundcite-retriever-{}.toml", std::process::id()));
    std::fs::write(
        &cfg,
        format!(
            "[retriever]\nkind = \"postgres\"\n[retriever.postgres]\ntable = \"{table}\"\nid_column = \"doc_id\"\ncontent_column = \"body\"\ntitle_column = \"heading\"\nurl_column = \"href\"\npage_column = \"\"\n"
        ),
    )
    .unwrap();
    let out = groundcite(
        &[
            "ask",
            "how many days do refunds take to reach my card?",
            "--config",
            cfg.to_str().unwrap(),
            "--format",
            "json",
            "--no-trace",
        ],
        &[("GROUNDCITE_RETRIEVER_URL", url.as_str())],
    );
    psql(&format!("DROP TABLE {table}"));
    let _ = std::fs::remove_file(&cfg);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let c: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(c["answerable"], true, "{c:#}");
    let sources = c["sources"].as_array().unwrap();
    assert!(
        sources
            .iter()
            .all(|s| s["chunk_id"].as_str().unwrap().starts_with("kb-")),
        "{c:#}"
    );
    let quotes: Vec<&str> = c["claims"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|cl| cl["citations"].as_array().unwrap())
        .map(|ci| ci["source_text"].as_str().unwrap_or(""))
        .collect();
    assert!(
        quotes.iter().any(|q| q.contains("5 business days")),
        "{quotes:?}"
    );
    // Fields the table does not hold are null, never invented.
    assert!(
        sources
            .iter()
            .all(|s| s["source_url"].is_null() && s["page_number"].is_null()),
        "{c:#}"
    );
    assert!(
        sources
            .iter()
            .any(|s| s["source_title"] == "How refunds are paid"),
        "{c:#}"
    );
}

//! `groundcite serve --docs`: the corpus is indexed at start-up and
//! `POST /v1/ask` answers from it; without `--docs` it is 409 `no_corpus`.
//! No model is needed: questions the documents do not cover are answered
//! by the gate, and `--no-model` makes a covered question a 501. Traces the
//! service made re-verify from the CLI by the path that made them.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

const KEY: &str = "serve-ask-test-key";

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

/// One HTTP/1.1 exchange (`Connection: close`): status and body.
fn http(port: u16, method: &str, path: &str, body: Option<&str>) -> std::io::Result<(u16, String)> {
    let mut s = TcpStream::connect(("127.0.0.1", port))?;
    s.set_read_timeout(Some(Duration::from_secs(30)))?;
    let body = body.unwrap_or("");
    write!(
        s,
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {KEY}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )?;
    let mut out = String::new();
    s.read_to_string(&mut out)?;
    let status = out
        .get(9..12)
        .and_then(|c| c.parse().ok())
        .ok_or_else(|| std::io::Error::other(format!("no status line: {out:?}")))?;
    let body = out
        .split_once("\r\n\r\n")
        .map_or("", |(_, b)| b)
        .to_string();
    Ok((status, body))
}

/// Kills the service when the test ends, passing or not.
struct Service(Child);

impl Drop for Service {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn start(dir: &Path, port: u16, extra: &[&str]) -> Service {
    let keys = dir.join("keys.toml");
    std::fs::write(
        &keys,
        format!(
            "[[keys]]\ntenant = \"t\"\nsha256 = \"{}\"\n",
            groundcite_server::key_digest(KEY)
        ),
    )
    .expect("key file");
    let child = Command::new(env!("CARGO_BIN_EXE_groundcite"))
        .args(["serve", "--no-model", "--no-warmup", "--addr"])
        .arg(format!("127.0.0.1:{port}"))
        .arg("--database")
        .arg(dir.join("traces.sqlite3"))
        .arg("--api-keys-file")
        .arg(&keys)
        .args(extra)
        .env("GROUNDCITE_CACHE_DIR", dir.join("cache"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("groundcite serve starts");
    let service = Service(child);
    let deadline = Instant::now() + Duration::from_secs(60);
    while Instant::now() < deadline {
        if let Ok((200, _)) = http(port, "GET", "/readyz", None) {
            return service;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("the service did not become ready in 60 s");
}

fn json(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}

#[test]
fn serve_with_docs_answers_ask_from_the_corpus() {
    let dir = tempfile::tempdir().expect("tempdir");
    let docs = dir.path().join("docs");
    std::fs::create_dir_all(&docs).expect("docs");
    std::fs::write(
        docs.join("refunds.md"),
        "# Refunds\n\nRefunds are available within 30 days of purchase.\n",
    )
    .expect("write");
    let port = free_port();
    let index = dir.path().join("index");
    let docs_arg = docs.display().to_string();
    let index_arg = index.display().to_string();
    let _service = start(
        dir.path(),
        port,
        // The chunk cache off: every trace writes its chunks anew, and reads
        // back the same.
        &[
            "--docs",
            &docs_arg,
            "--index",
            &index_arg,
            "--chunk-cache-mb",
            "0",
        ],
    );
    assert!(index.is_dir(), "the index was built at start-up");

    let (status, body) = http(port, "GET", "/v1/info", None).expect("info");
    assert_eq!(status, 200, "{body}");
    assert_eq!(json(&body)["corpus"]["documents"], 1, "{body}");

    // Not covered by the documents: the gate answers, no model needed.
    let (status, body) = http(
        port,
        "POST",
        "/v1/ask",
        Some(r#"{"question": "What are the opening hours of your store in Tokyo?"}"#),
    )
    .expect("ask");
    assert_eq!(status, 200, "{body}");
    let c = json(&body);
    assert_eq!(c["answerable"], false);
    assert_eq!(c["refusal"]["code"], "R1");
    let id = c["trace_id"].as_str().expect("trace id");
    let (status, body) = http(port, "GET", &format!("/v1/traces/{id}"), None).expect("trace");
    assert_eq!(status, 200, "{body}");
    let t = json(&body);
    assert_eq!(t["kind"], "ask");
    assert_eq!(t["options"]["docs"], docs_arg.as_str());
    // With the chunk cache off, the same chunks twice are written twice and
    // read back whole.
    let verify = r#"{"chunks":[{"chunk_id":"a#1","content":"Refunds are available within 30 days."}],"answer":{"answerable":true,"claims":[{"text":"30 days.","citations":[{"chunk_id":"a#1","quote":"within 30 days"}]}]}}"#;
    for _ in 0..2 {
        let (status, body) = http(port, "POST", "/v1/verify", Some(verify)).expect("verify");
        assert_eq!(status, 200, "{body}");
        let id = json(&body)["trace_id"].as_str().expect("id").to_string();
        let (status, body) = http(port, "GET", &format!("/v1/traces/{id}"), None).expect("trace");
        assert_eq!(status, 200, "{body}");
        assert_eq!(
            json(&body)["chunks"][0]["content"],
            "Refunds are available within 30 days.",
            "{body}"
        );
    }

    // Covered, but this service has no model.
    let (status, body) = http(
        port,
        "POST",
        "/v1/ask",
        Some(r#"{"question": "Are refunds available within 30 days of purchase?"}"#),
    )
    .expect("ask");
    assert_eq!(status, 501, "{body}");
    assert_eq!(json(&body)["error"]["code"], "not_configured");
}

/// The incident runbook's step, on traces the service wrote: `groundcite
/// trace verify --database` re-verifies a verify, a parse (prose) and a
/// convert (native citations) trace to the same contract, each read back
/// the way it was made.
#[test]
fn traces_the_service_made_re_verify_from_the_cli() {
    let dir = tempfile::tempdir().expect("tempdir");
    let port = free_port();
    let _service = start(dir.path(), port, &[]);
    let chunks = r#"[{"chunk_id":"a#1","content":"Refunds are available within 30 days of purchase."},{"chunk_id":"b#1","content":"Standard shipping takes 3 to 5 business days."}]"#;
    let bodies = [
        (
            "/v1/verify",
            format!(
                r#"{{"chunks":{chunks},"answer":{{"answerable":true,"claims":[{{"text":"30 days.","citations":[{{"chunk_id":"a#1","quote":"within 30 days"}}]}}]}}}}"#
            ),
        ),
        (
            "/v1/parse",
            format!(
                r#"{{"chunks":{chunks},"text":"Refunds are available within 30 days of purchase [1]. Shipping takes 3 to 5 business days [2]."}}"#
            ),
        ),
        (
            "/v1/convert",
            format!(
                r#"{{"chunks":{chunks},"from":"anthropic","response":{{"id":"msg_1","type":"message","role":"assistant","model":"claude-x","stop_reason":"end_turn","content":[{{"type":"text","text":"Refunds are available within 30 days of purchase.","citations":[{{"type":"char_location","cited_text":"Refunds are available within 30 days of purchase.","document_index":0,"start_char_index":0,"end_char_index":50}}]}}]}}}}"#
            ),
        ),
    ];
    let database = dir.path().join("traces.sqlite3").display().to_string();
    for (path, body) in &bodies {
        let (status, reply) = http(port, "POST", path, Some(body)).expect("request");
        assert_eq!(status, 200, "{path}: {reply}");
        let c = json(&reply);
        assert_eq!(c["answerable"], true, "{path}: {reply}");
        let id = c["trace_id"].as_str().expect("trace id");
        let out = Command::new(env!("CARGO_BIN_EXE_groundcite"))
            .args(["trace", "verify", id, "--database", &database])
            .output()
            .expect("trace verify runs");
        assert_eq!(
            out.status.code(),
            Some(0),
            "{path}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn serve_without_docs_says_no_corpus() {
    let dir = tempfile::tempdir().expect("tempdir");
    let port = free_port();
    let _service = start(dir.path(), port, &[]);
    let (status, body) =
        http(port, "POST", "/v1/ask", Some(r#"{"question": "Refunds?"}"#)).expect("ask");
    assert_eq!(status, 409, "{body}");
    assert_eq!(json(&body)["error"]["code"], "no_corpus");
    let (status, body) = http(port, "GET", "/", None).expect("page");
    assert_eq!(status, 200);
    assert!(body.contains("/assets/app.js"), "{body}");
}

#[test]
fn serve_refuses_a_docs_folder_that_does_not_exist() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = Command::new(env!("CARGO_BIN_EXE_groundcite"))
        .args(["serve", "--no-auth", "--no-model", "--docs"])
        .arg(dir.path().join("missing"))
        .output()
        .expect("runs");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--docs"), "{err}");
}

#[test]
fn serve_refuses_out_of_range_settings_before_listening() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = dir.path().join("groundcite.toml");
    std::fs::write(&config, "[serve]\nchunk_cache_mb = 70000\n").expect("write");
    for extra in [
        &["--chunk-cache-mb", "70000"][..],
        &["--config", config.to_str().expect("utf-8")][..],
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_groundcite"))
            .args(["serve", "--no-auth", "--no-model", "--addr", "127.0.0.1:0"])
            .args(extra)
            .output()
            .expect("runs");
        assert_eq!(out.status.code(), Some(2), "{extra:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("--chunk-cache-mb: at most 65536 MiB, got 70000"),
            "{extra:?}: {err}"
        );
    }
}

//! groundcite talks to itself with its defaults: `groundcite answer` and
//! `groundcite ask --provider openai-compatible` against the
//! OpenAI-compatible endpoint of a `groundcite serve` (the embedded model)
//! started here, with no `--max-tokens`: the client sends no limit, and
//! the service's limit fits its 4,096-token context. With a limit larger
//! than the context leaves, the service caps it instead of refusing.

// Test helpers outside #[test] functions unwrap too: a failure is a test failure.
#![allow(clippy::unwrap_used)]

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::{repo, text};

const KEY: &str = "serve-self-test-key";

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .unwrap()
}

/// Sends one HTTP/1.1 request (`Connection: close`).
fn send(port: u16, method: &str, path: &str, body: &str) -> std::io::Result<TcpStream> {
    let mut s = TcpStream::connect(("127.0.0.1", port))?;
    s.set_read_timeout(Some(Duration::from_secs(300)))?;
    write!(
        s,
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {KEY}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )?;
    Ok(s)
}

/// One HTTP/1.1 exchange: the whole response.
fn http(port: u16, method: &str, path: &str, body: &str) -> std::io::Result<String> {
    let mut s = send(port, method, path, body)?;
    let mut out = String::new();
    s.read_to_string(&mut out)?;
    Ok(out)
}

/// The status line and headers of a response, then the connection is
/// dropped (a streamed generation is cancelled).
fn head(port: u16, method: &str, path: &str, body: &str) -> std::io::Result<String> {
    let mut s = send(port, method, path, body)?;
    let mut out = Vec::new();
    let mut byte = [0u8; 1];
    while !out.ends_with(b"\r\n\r\n") && s.read(&mut byte)? == 1 {
        out.push(byte[0]);
    }
    Ok(String::from_utf8_lossy(&out).into_owned())
}

/// Kills the service when the test ends, passing or not.
struct Service(Child);

impl Drop for Service {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `groundcite serve` with the embedded model (no warm-up) on `port`.
fn start(dir: &Path, port: u16) -> Service {
    let keys = dir.join("keys.toml");
    std::fs::write(
        &keys,
        format!(
            "[[keys]]\ntenant = \"t\"\nsha256 = \"{}\"\n",
            groundcite_server::key_digest(KEY)
        ),
    )
    .unwrap();
    let child = Command::new(env!("CARGO_BIN_EXE_groundcite"))
        .current_dir(repo())
        .args(["serve", "--no-warmup", "--addr"])
        .arg(format!("127.0.0.1:{port}"))
        .arg("--database")
        .arg(dir.join("traces.sqlite3"))
        .arg("--api-keys-file")
        .arg(&keys)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let service = Service(child);
    let deadline = Instant::now() + Duration::from_secs(120);
    while Instant::now() < deadline {
        if http(port, "GET", "/readyz", "").is_ok_and(|r| r.starts_with("HTTP/1.1 200")) {
            return service;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    panic!("the service did not become ready in 120 s");
}

/// `groundcite ARGS --provider openai-compatible` against the service,
/// with no `--max-tokens`.
fn client(dir: &Path, port: u16, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_groundcite"))
        .current_dir(repo())
        .env_remove("GROUNDCITE_CONFIG")
        .env("GROUNDCITE_COMPAT_API_KEY", KEY)
        .env("GROUNDCITE_CACHE_DIR", dir.join("cache"))
        .args(args)
        .args(["--provider", "openai-compatible", "--server", "generic"])
        .arg("--base-url")
        .arg(format!("http://127.0.0.1:{port}/v1"))
        .args(["--model", "smollm2"])
        .output()
        .unwrap()
}

fn contract(what: &str, out: &Output) -> Value {
    assert_eq!(
        out.status.code(),
        Some(0),
        "{what} failed: {}",
        text(&out.stderr)
    );
    let c: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{what}: not JSON ({e}): {}", text(&out.stdout)));
    assert_eq!(c["contract_version"], "1", "{what}: {c}");
    c
}

/// Generates with the embedded model under the schema of a whole answer,
/// up to the endpoint's default 1,024 tokens (SmolLM2-135M often repeats
/// citations until the limit): seconds on a release build, minutes on a
/// debug build on a busy machine, past the service's 120 s request
/// timeout. `scripts/e2e-service` runs the same against a release build.
#[test]
#[ignore = "generates up to 1,024 tokens: run with --ignored on a release build (scripts/e2e-service does)"]
fn answer_and_ask_through_the_own_endpoint_with_default_limits() {
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let _service = start(dir.path(), port);

    let chunks = dir.path().join("chunks.json");
    std::fs::write(
        &chunks,
        r#"[{"chunk_id": "returns#1", "content": "Unworn items can be returned within 30 days of delivery for a full refund.", "source_title": "Returns"},
            {"chunk_id": "shipping#1", "content": "Standard shipping takes 3 to 5 business days within the continental US.", "source_title": "Shipping"}]"#,
    )
    .unwrap();
    let chunks = chunks.display().to_string();
    let out = client(
        dir.path(),
        port,
        &[
            "answer",
            "--chunks",
            &chunks,
            "--question",
            "How long do I have to return an item?",
        ],
    );
    contract("answer", &out);

    let index = dir.path().join("index").display().to_string();
    let out = client(
        dir.path(),
        port,
        &[
            "ask",
            "How long does standard shipping take?",
            "--docs",
            "corpus/sample",
            "--index",
            &index,
            "--format",
            "json",
            "--no-trace",
        ],
    );
    contract("ask", &out);
}

#[test]
fn a_limit_the_context_cannot_hold_is_capped_and_said_so() {
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let _service = start(dir.path(), port);
    // A limit the context cannot hold beside the prompt is capped, and the
    // response's headers say to what (streamed: the headers come first,
    // then the connection is dropped, which cancels the generation).
    let body = r#"{"model": "smollm2", "max_tokens": 4096, "stream": true,
        "response_format": {"type": "json_object"},
        "messages": [{"role": "user", "content": "PROMPT"}]}"#
        .replace("PROMPT", &"Answer in JSON. ".repeat(150));
    let response = head(port, "POST", "/v1/chat/completions", &body).unwrap();
    assert!(response.starts_with("HTTP/1.1 200"), "{response}");
    let capped: u32 = response
        .lines()
        .find_map(|l| l.strip_prefix("x-groundcite-max-tokens-capped: "))
        .unwrap_or_else(|| panic!("no capped header: {response}"))
        .trim()
        .parse()
        .unwrap();
    assert!(capped < 4096 - 500, "{capped}");
}

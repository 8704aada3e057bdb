//! The OpenAI-compatible endpoint of a `groundcite serve` (the embedded
//! model) started here: with a limit larger than the context leaves, the
//! service caps it instead of refusing.
//!
//! groundcite talking to itself with its defaults (`groundcite answer` and
//! `groundcite ask --provider openai-compatible` with no `--max-tokens`,
//! generating up to the endpoint's default 1,024 tokens) is step 3 of
//! `scripts/e2e-service`, which CI runs against the service it starts
//! anyway: minutes on a debug build, too slow for `cargo test`.

// Test helpers outside #[test] functions unwrap too: a failure is a test failure.
#![allow(clippy::unwrap_used)]

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::repo;

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

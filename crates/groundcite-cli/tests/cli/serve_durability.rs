//! `groundcite serve` as a process: no acknowledged trace is lost when the
//! service is killed with SIGKILL under load, and a restarted service
//! serves the traces it had acknowledged.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

const KEY: &str = "durability-test-key";

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

fn start(dir: &Path, port: u16) -> Child {
    let keys = dir.join("keys.toml");
    std::fs::write(
        &keys,
        format!(
            "[[keys]]\ntenant = \"load\"\nsha256 = \"{}\"\n",
            groundcite_server::key_digest(KEY)
        ),
    )
    .expect("key file");
    let child = Command::new(env!("CARGO_BIN_EXE_groundcite"))
        .args(["serve", "--no-model", "--addr"])
        .arg(format!("127.0.0.1:{port}"))
        .arg("--database")
        .arg(dir.join("traces.sqlite3"))
        .arg("--api-keys-file")
        .arg(&keys)
        .stdout(Stdio::null())
        .stderr(
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(dir.join("serve.log"))
                .expect("log file"),
        )
        .spawn()
        .expect("groundcite serve starts");
    let mut child = child;
    let deadline = Instant::now() + Duration::from_secs(60);
    while Instant::now() < deadline {
        if let Ok((200, _)) = http(port, "GET", "/readyz", None) {
            return child;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = child.kill();
    let _ = child.wait();
    panic!("the service did not become ready in 60 s");
}

fn request_body(n: usize) -> String {
    // Big enough to make each commit real work (about 40 KB of chunks).
    let content = "Refunds are available within 30 days of purchase. ".repeat(40);
    let chunks: Vec<Value> = (0..20)
        .map(|i| json!({"chunk_id": format!("doc#{i}"), "content": content}))
        .collect();
    json!({
        "question": format!("request {n}"),
        "chunks": chunks,
        "answer": {"answerable": true, "claims": [
            {"text": "Refunds take 30 days.", "citations": [{"chunk_id": "doc#3", "quote": "within 30 days of purchase"}]}
        ]}
    })
    .to_string()
}

#[test]
fn no_acknowledged_trace_is_lost_on_sigkill() {
    let dir = tempfile::tempdir().expect("tempdir");
    let port = free_port();
    let mut server = start(dir.path(), port);

    let acked = Arc::new(Mutex::new(Vec::<String>::new()));
    let stop = Arc::new(AtomicBool::new(false));
    let workers: Vec<_> = (0..8)
        .map(|w| {
            let (acked, stop) = (Arc::clone(&acked), Arc::clone(&stop));
            std::thread::spawn(move || {
                let mut n = 0;
                while !stop.load(Ordering::SeqCst) {
                    n += 1;
                    let body = request_body(w * 1_000_000 + n);
                    match http(port, "POST", "/v1/verify", Some(&body)) {
                        Ok((200, text)) => {
                            let c: Value = serde_json::from_str(&text).expect("contract JSON");
                            let id = c["trace_id"].as_str().expect("trace_id").to_string();
                            acked.lock().expect("lock").push(id);
                        }
                        Ok((status, text)) => panic!("unexpected {status}: {text}"),
                        // The kill: connections reset or refused from here on.
                        Err(_) => break,
                    }
                }
            })
        })
        .collect();
    // Let the load run, then kill without warning mid-flight.
    std::thread::sleep(Duration::from_millis(2500));
    server.kill().expect("SIGKILL");
    server.wait().expect("reaped");
    stop.store(true, Ordering::SeqCst);
    for w in workers {
        w.join().expect("worker");
    }
    let acked = acked.lock().expect("lock").clone();
    assert!(
        acked.len() >= 20,
        "too little load to test anything: {}",
        acked.len()
    );

    // Every acknowledged trace is in the database, read directly.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let url = dir.path().join("traces.sqlite3").display().to_string();
    let missing = runtime.block_on(async {
        let store = groundcite_store::Store::open(&url).await.expect("store");
        let mut missing = Vec::new();
        for id in &acked {
            if store.get(id, Some("load")).await.expect("read").is_none() {
                missing.push(id.clone());
            }
        }
        store.close().await;
        missing
    });
    assert!(
        missing.is_empty(),
        "{} of {} acknowledged traces lost: {missing:?}",
        missing.len(),
        acked.len()
    );

    // A restarted service serves them.
    let mut server = start(dir.path(), port);
    let last = acked.last().expect("one trace");
    let (status, body) = http(port, "GET", &format!("/v1/traces/{last}"), None).expect("GET");
    assert_eq!(status, 200, "{body}");
    server.kill().expect("kill");
    let _ = server.wait();

    // The service logged every request, and never the key.
    let log = std::fs::read_to_string(dir.path().join("serve.log")).expect("log");
    assert!(log.contains("/v1/verify"), "no request lines in the log");
    assert!(!log.contains(KEY), "the API key leaked into the log");
}

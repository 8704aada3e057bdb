//! The retry budget and the circuit breaker against a local server that
//! fails on demand (HTTP 503 while "down", a chat completion while "up"):
//! during an outage the attempts stay within the budget, the breaker opens
//! and fails requests without sending them, and it closes once a probe
//! finds the server up again.

// Test helpers outside #[test] functions unwrap too: a failure is a test failure.
#![allow(clippy::unwrap_used)]

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use groundcite_core::schema::Target;
use groundcite_core::{Chunk, ChunkSet};
use groundcite_providers::resilience::health;
use groundcite_providers::{
    BreakerPolicy, BreakerState, ChatCompletions, ErrorKind, GenerationRequest, Generator,
    HttpConfig, RetryBudget, RetryPolicy, SecretString,
};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

const OK_BODY: &str = r#"{"id":"chatcmpl-1","object":"chat.completion","created":1767225600,"model":"gpt-4o-2024-08-06","choices":[{"index":0,"message":{"role":"assistant","content":"{\"answerable\": true, \"claims\": [{\"text\": \"Refunds are available for 30 days.\", \"citations\": [{\"chunk_id\": \"refunds#1\", \"quote\": \"Refunds are available within 30 days of purchase.\"}]}]}","refusal":null},"finish_reason":"stop"}],"usage":{"prompt_tokens":10,"completion_tokens":10,"total_tokens":20}}"#;
const DOWN_BODY: &str =
    r#"{"error":{"message":"The server is overloaded","type":"server_error","code":null}}"#;

/// A server that answers every request with 503 while `down`, else with a
/// chat completion; it counts the requests it received.
struct Flaky {
    url: String,
    down: Arc<AtomicBool>,
    requests: Arc<AtomicUsize>,
}

impl Flaky {
    async fn start() -> Flaky {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/v1", listener.local_addr().unwrap());
        let down = Arc::new(AtomicBool::new(true));
        let requests = Arc::new(AtomicUsize::new(0));
        let (d, r) = (down.clone(), requests.clone());
        tokio::spawn(async move {
            while let Ok((socket, _)) = listener.accept().await {
                tokio::spawn(answer(socket, d.clone(), r.clone()));
            }
        });
        Flaky {
            url,
            down,
            requests,
        }
    }

    fn requests(&self) -> usize {
        self.requests.load(Ordering::SeqCst)
    }

    fn set_down(&self, down: bool) {
        self.down.store(down, Ordering::SeqCst);
    }
}

/// Reads one request (head and `content-length` body) and answers it,
/// closing the connection.
async fn answer(mut socket: TcpStream, down: Arc<AtomicBool>, requests: Arc<AtomicUsize>) {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        match socket.read(&mut chunk).await {
            Ok(0) | Err(_) => return,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).to_ascii_lowercase();
    let length: usize = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .map_or(0, |v| v.trim().parse().unwrap());
    while buf.len() < head_end + length {
        match socket.read(&mut chunk).await {
            Ok(0) | Err(_) => return,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    }
    requests.fetch_add(1, Ordering::SeqCst);
    let (status, body) = if down.load(Ordering::SeqCst) {
        ("503 Service Unavailable", DOWN_BODY)
    } else {
        ("200 OK", OK_BODY)
    };
    let response = format!(
        "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = socket.write_all(response.as_bytes()).await;
    let _ = socket.shutdown().await;
}

fn client(url: &str, budget: RetryBudget, breaker: BreakerPolicy) -> ChatCompletions {
    let http = HttpConfig {
        connect_timeout: Duration::from_secs(2),
        timeout: Duration::from_secs(10),
        retry: RetryPolicy {
            max_retries: 3,
            base_delay: Duration::from_millis(1),
            max_delay: Duration::from_millis(2),
            max_retry_after: Duration::from_secs(1),
        },
        retry_budget: budget,
        breaker,
        ..HttpConfig::default()
    };
    ChatCompletions::openai(
        url.parse().unwrap(),
        SecretString::new("sk-test-FAKE-openai-0001"),
        "gpt-4o-2024-08-06".into(),
        http,
    )
    .unwrap()
}

fn chunks() -> ChunkSet {
    ChunkSet::new(vec![Chunk {
        chunk_id: "refunds#1".into(),
        content: "Refunds are available within 30 days of purchase.".into(),
        source_title: None,
        source_url: None,
        page_number: None,
        score: None,
    }])
    .unwrap()
}

#[tokio::test]
async fn during_an_outage_retries_stay_within_the_budget() {
    let server = Flaky::start().await;
    // Breaker off: only the budget limits the load. 5 retries saved up,
    // 10% of requests earned, no floor (the test must not depend on time).
    let openai = client(
        &server.url,
        RetryBudget {
            percent: 10,
            min_per_second: 0,
            max_tokens: 5,
        },
        BreakerPolicy {
            failure_threshold: 0,
            ..BreakerPolicy::default()
        },
    );
    let before = health().into_iter().find(|h| h.provider == "openai");
    let chunks = chunks();
    let request = GenerationRequest::grounded(&chunks, "How long?", Target::OpenAi);
    let mut attempts = 0;
    for _ in 0..100 {
        let e = openai.generate(&request).await.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Status, "{e}");
        assert_eq!(e.status(), Some(503));
        attempts += e.attempts() as usize;
    }
    assert_eq!(attempts, server.requests());
    // Without a budget: 400 attempts (1 + 3 retries each). With it: 100
    // first attempts, the 5 saved up and 10% of 100 at most.
    assert!(attempts <= 100 + 5 + 10, "{attempts} attempts");
    assert!(attempts >= 100 + 5 + 9, "{attempts} attempts");
    let after = health()
        .into_iter()
        .find(|h| h.provider == "openai")
        .unwrap();
    let (retries0, exhausted0) = before.map_or((0, 0), |h| (h.retries, h.budget_exhausted));
    assert!(after.retries - retries0 >= (attempts - 100) as u64);
    assert!(after.budget_exhausted - exhausted0 >= 80);
}

#[tokio::test]
async fn the_breaker_opens_during_an_outage_and_closes_after_recovery() {
    let server = Flaky::start().await;
    let cool_down = Duration::from_millis(50);
    let openai = client(
        &server.url,
        RetryBudget::default(),
        BreakerPolicy {
            failure_threshold: 3,
            cool_down,
        },
    );
    let chunks = chunks();
    let request = GenerationRequest::grounded(&chunks, "How long?", Target::OpenAi);

    // Three failed attempts open the breaker; the request that opened it
    // ends with the provider's own error, not retried further.
    let e = openai.generate(&request).await.unwrap_err();
    assert_eq!(
        (e.kind(), e.status(), e.attempts()),
        (ErrorKind::Status, Some(503), 3)
    );
    assert_eq!(server.requests(), 3);
    let state = || {
        health()
            .into_iter()
            .find(|h| h.provider == "openai")
            .unwrap()
            .state
    };
    assert_eq!(state(), BreakerState::Open);

    // Open: requests fail at once, nothing is sent, and the error says
    // when the next probe may go.
    for _ in 0..20 {
        let e = openai.generate(&request).await.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::CircuitOpen, "{e}");
        assert_eq!(e.attempts(), 0);
        assert!(e.retry_after().is_some_and(|d| d <= cool_down), "{e:?}");
    }
    assert_eq!(server.requests(), 3);

    // Half-open, still down: one probe, not retried; open again.
    tokio::time::sleep(cool_down).await;
    let e = openai.generate(&request).await.unwrap_err();
    assert_eq!((e.kind(), e.attempts()), (ErrorKind::Status, 1), "{e}");
    assert_eq!(server.requests(), 4);
    let e = openai.generate(&request).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::CircuitOpen, "{e}");

    // Recovered: still failing fast until the cool-down ends, then the
    // probe succeeds and the breaker closes.
    server.set_down(false);
    let e = openai.generate(&request).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::CircuitOpen, "{e}");
    assert_eq!(server.requests(), 4);
    tokio::time::sleep(cool_down).await;
    let g = openai.generate(&request).await.unwrap();
    assert_eq!(g.timings.attempts, 1);
    for _ in 0..5 {
        openai.generate(&request).await.unwrap();
    }
    assert_eq!(server.requests(), 10);
    // The other test's client (same label) never opens its breaker.
    assert_eq!(state(), BreakerState::Closed);
}

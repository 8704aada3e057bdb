//! What every router test shares: the scripted generator, the app over an
//! in-memory SQLite store, request helpers and trace readers.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use groundcite_core::schema::Target;
use groundcite_providers::{
    Backend, BoxFuture, ErrorKind, FinishReason, Generation, GenerationRequest, GenerationStream,
    Generator, Mode, Output, ProviderError, Timings, Usage,
};
use groundcite_server::{ApiKeys, AppState, Corpus, Limits, ServerConfig, Store, app};
use http_body_util::BodyExt;
use serde_json::{Value, json};
use tower::ServiceExt;

pub(crate) const KEY_A: &str = "key-of-acme";
pub(crate) const KEY_B: &str = "key-of-globex";

/// What the scripted generator does.
#[derive(Debug, Clone)]
pub(crate) enum Script {
    /// Answer with this JSON text (streamed in pieces of `piece` bytes).
    Answer(String),
    /// Fail with this kind.
    Fail(ErrorKind),
    /// Answer with this Anthropic message (native citations).
    Native(Value),
    /// Wait until released (to hold a generation slot).
    Block(Arc<tokio::sync::Notify>),
}

#[derive(Debug)]
pub(crate) struct Scripted {
    pub(crate) script: Script,
    pub(crate) calls: AtomicUsize,
    pub(crate) seen: std::sync::Mutex<Vec<GenerationRequest>>,
}

impl Scripted {
    pub(crate) fn generation(text: &str) -> Generation {
        Generation {
            output: Output::Json(text.to_string()),
            model: Some("scripted-1".into()),
            finish_reason: Some(FinishReason::Stop),
            usage: Usage {
                input_tokens: Some(10),
                output_tokens: Some(20),
            },
            request_id: Some("req-123".into()),
            timings: Timings::default(),
            p_answerable: None,
        }
    }
}

impl Generator for Scripted {
    fn provider(&self) -> &'static str {
        "scripted"
    }
    fn mode(&self) -> Mode {
        Mode::Structured(Target::OpenAi)
    }
    fn generate<'a>(
        &'a self,
        _request: &'a GenerationRequest,
    ) -> BoxFuture<'a, Result<Generation, ProviderError>> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        if let Ok(mut seen) = self.seen.lock() {
            seen.push(_request.clone());
        }
        Box::pin(async move {
            match &self.script {
                Script::Answer(t) => Ok(Scripted::generation(t)),
                Script::Native(message) => Ok(Generation {
                    output: Output::AnthropicCitations(message.clone()),
                    ..Scripted::generation("")
                }),
                Script::Fail(kind) => {
                    Err(ProviderError::new(*kind, "scripted", "scripted failure"))
                }
                Script::Block(n) => {
                    n.notified().await;
                    Ok(Scripted::generation(
                        r#"{"answerable": false, "claims": []}"#,
                    ))
                }
            }
        })
    }
    fn generate_stream<'a>(
        &'a self,
        request: &'a GenerationRequest,
    ) -> BoxFuture<'a, Result<GenerationStream, ProviderError>> {
        Box::pin(async move {
            let (stream, sender) = GenerationStream::channel("scripted");
            let script = self.script.clone();
            let whole = self.generate(request).await;
            tokio::spawn(async move {
                if let (Script::Answer(text), Ok(_)) = (&script, &whole) {
                    // Byte-sized pieces at char boundaries: claims close mid-stream.
                    let mut rest = text.as_str();
                    while !rest.is_empty() {
                        let mut cut = rest.len().min(7);
                        while !rest.is_char_boundary(cut) {
                            cut += 1;
                        }
                        if sender.deltas.send(rest[..cut].to_string()).await.is_err() {
                            return;
                        }
                        rest = &rest[cut..];
                    }
                }
                drop(sender.deltas);
                let _ = sender.result.send(whole);
            });
            Ok(stream)
        })
    }
}

pub(crate) fn chunks() -> Value {
    json!([
        {"chunk_id": "refunds#1", "content": "Refunds are available within 30 days of purchase.",
         "source_title": "Refund policy", "source_url": "https://help.example.com/refunds", "page_number": 3},
        {"chunk_id": "shipping#1", "content": "Standard shipping takes 3 to 5 business days.",
         "source_title": null, "source_url": null}
    ])
}

pub(crate) fn answer() -> Value {
    json!({"answerable": true, "claims": [
        {"text": "Refunds are possible for 30 days.", "citations": [{"chunk_id": "refunds#1", "quote": "refunds are available within 30 days"}]},
        {"text": "Shipping is instant.", "citations": [{"chunk_id": "shipping#1", "quote": "Shipping is instant"}]},
        {"text": "Made up.", "citations": [{"chunk_id": "nope#9", "quote": "anything"}]}
    ]})
}

pub(crate) async fn state_with(
    script: Option<Script>,
    limits: Limits,
) -> (AppState, Option<Arc<Scripted>>) {
    state_full(script, limits, None).await
}

pub(crate) async fn state_full(
    script: Option<Script>,
    limits: Limits,
    corpus: Option<Corpus>,
) -> (AppState, Option<Arc<Scripted>>) {
    let store = Store::open("sqlite::memory:").await.expect("store");
    let scripted = script.map(|s| {
        Arc::new(Scripted {
            script: s,
            calls: AtomicUsize::new(0),
            seen: Default::default(),
        })
    });
    let backend = scripted.clone().map(|g| {
        Backend::new(g as Arc<dyn Generator>, |chunks, question| {
            GenerationRequest::grounded(chunks, question, Target::OpenAi)
        })
    });
    let state = AppState::new(ServerConfig {
        store,
        keys: ApiKeys::from_plain([("acme", KEY_A), ("globex", KEY_B)]),
        limits,
        backend,
        chat: None,
        corpus,
        profile: Default::default(),
        retention: None,
        cors_origins: Vec::new(),
    });
    state.set_ready(true);
    (state, scripted)
}

pub(crate) async fn state() -> AppState {
    state_with(None, Limits::default()).await.0
}

pub(crate) struct Reply {
    pub(crate) status: StatusCode,
    pub(crate) headers: axum::http::HeaderMap,
    pub(crate) body: Vec<u8>,
}

impl Reply {
    pub(crate) fn json(&self) -> Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&self.body)))
    }
    pub(crate) fn code(&self) -> String {
        self.json()["error"]["code"]
            .as_str()
            .unwrap_or("<none>")
            .to_string()
    }
}

pub(crate) async fn send(state: &AppState, req: Request<Body>) -> Reply {
    let response = app(state.clone()).oneshot(req).await.expect("infallible");
    let status = response.status();
    let headers = response.headers().clone();
    let body = response
        .into_body()
        .collect()
        .await
        .expect("body")
        .to_bytes()
        .to_vec();
    Reply {
        status,
        headers,
        body,
    }
}

pub(crate) fn post(path: &str, key: Option<&str>, body: &Value) -> Request<Body> {
    let mut b = Request::post(path).header(header::CONTENT_TYPE, "application/json");
    if let Some(k) = key {
        b = b.header(header::AUTHORIZATION, format!("Bearer {k}"));
    }
    b.body(Body::from(body.to_string())).expect("request")
}

pub(crate) fn get(path: &str, key: Option<&str>) -> Request<Body> {
    let mut b = Request::get(path);
    if let Some(k) = key {
        b = b.header(header::AUTHORIZATION, format!("Bearer {k}"));
    }
    b.body(Body::empty()).expect("request")
}

/// `GET /v1/traces/{id}`'s body.
pub(crate) async fn stored_trace(s: &AppState, id: &str) -> Value {
    send(s, get(&format!("/v1/traces/{id}"), Some(KEY_A)))
        .await
        .json()
}

/// `POST /v1/traces/{id}/verify`'s body.
pub(crate) async fn reverified(s: &AppState, id: &str) -> Value {
    let r = send(
        s,
        post(&format!("/v1/traces/{id}/verify"), Some(KEY_A), &json!({})),
    )
    .await;
    assert_eq!(
        r.status,
        StatusCode::OK,
        "{}",
        String::from_utf8_lossy(&r.body)
    );
    r.json()
}

/// Splits an SSE body into (event, data) pairs.
pub(crate) fn sse_events(body: &[u8]) -> Vec<(String, Value)> {
    let text = String::from_utf8_lossy(body);
    text.split("\n\n")
        .filter(|b| !b.trim().is_empty())
        .filter_map(|block| {
            let mut event = String::from("message");
            let mut data = String::new();
            for line in block.lines() {
                if let Some(e) = line.strip_prefix("event:") {
                    event = e.trim().to_string();
                } else if let Some(d) = line.strip_prefix("data:") {
                    data.push_str(d.trim_start());
                }
            }
            (!data.is_empty()).then(|| {
                (
                    event,
                    serde_json::from_str(&data).unwrap_or(Value::String(data)),
                )
            })
        })
        .collect()
}

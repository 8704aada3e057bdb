//! `POST /v1/chat/completions` and the output limit: a requested
//! `max_tokens` larger than what the context leaves after the prompt is
//! capped (and said so in `x-groundcite-max-tokens-capped`), not rejected;
//! only a prompt that alone does not fit is an error. The generator here
//! stands in for the embedded model with a small context: one token per
//! prompt byte, 4,096 in all.

use std::sync::{Arc, Mutex};

use axum::http::StatusCode;
use groundcite_core::schema::Target;
use groundcite_providers::{
    BoxFuture, ErrorKind, Generation, GenerationRequest, GenerationStream, Generator, Mode,
    ProviderError, Usage,
};
use groundcite_server::{ApiKeys, AppState, Limits, ServerConfig, Store};
use serde_json::{Value, json};

use crate::common::{KEY_A, Scripted, post, send, sse_events, stored_trace};

const CONTEXT: u32 = 4096;
const HEADER: &str = "x-groundcite-max-tokens-capped";
const ANSWER: &str = r#"{"answerable": true, "claims": []}"#;

/// A generator with a 4,096-token context, one token per prompt byte.
#[derive(Debug, Default)]
struct SmallContext {
    /// Output that reaches the limit (`ErrorKind::Truncated`) instead of
    /// finishing.
    truncate: bool,
    seen: Mutex<Vec<u32>>,
}

impl SmallContext {
    fn prompt_tokens(request: &GenerationRequest) -> u32 {
        u32::try_from(request.system.len() + request.user.len()).unwrap_or(u32::MAX)
    }

    fn outcome(&self, request: &GenerationRequest) -> Result<Generation, ProviderError> {
        self.seen.lock().expect("lock").push(request.max_tokens);
        assert!(
            Self::prompt_tokens(request) + request.max_tokens <= CONTEXT,
            "the route sent a limit the context cannot hold"
        );
        if self.truncate {
            return Err(ProviderError::new(
                ErrorKind::Truncated,
                "small",
                "the output reached the limit",
            )
            .with_partial_output(Some("{\"answerable\": true, \"claims\": [".into()))
            .with_usage(Usage {
                input_tokens: Some(u64::from(Self::prompt_tokens(request))),
                output_tokens: Some(u64::from(request.max_tokens)),
            }));
        }
        Ok(Scripted::generation(ANSWER))
    }
}

impl Generator for SmallContext {
    fn provider(&self) -> &'static str {
        "small"
    }
    fn mode(&self) -> Mode {
        Mode::Structured(Target::OpenAi)
    }
    fn generate<'a>(
        &'a self,
        request: &'a GenerationRequest,
    ) -> BoxFuture<'a, Result<Generation, ProviderError>> {
        Box::pin(async move { self.outcome(request) })
    }
    fn generate_stream<'a>(
        &'a self,
        request: &'a GenerationRequest,
    ) -> BoxFuture<'a, Result<GenerationStream, ProviderError>> {
        Box::pin(async move {
            let (stream, sender) = GenerationStream::channel("small");
            let result = self.outcome(request);
            let text = match &result {
                Ok(_) => ANSWER.to_string(),
                Err(e) => e.partial_output().unwrap_or_default().to_string(),
            };
            tokio::spawn(async move {
                let _ = sender.deltas.send(text).await;
                drop(sender.deltas);
                let _ = sender.result.send(result);
            });
            Ok(stream)
        })
    }
    fn output_room(&self, request: &GenerationRequest) -> Result<Option<u32>, ProviderError> {
        let prompt = Self::prompt_tokens(request);
        if prompt >= CONTEXT {
            return Err(ProviderError::new(
                ErrorKind::Config,
                "small",
                format!(
                    "the prompt ({prompt} tokens) does not fit the model's {CONTEXT}-token context"
                ),
            ));
        }
        Ok(Some(CONTEXT - prompt))
    }
}

async fn state(generator: Arc<SmallContext>) -> AppState {
    let state = AppState::new(ServerConfig {
        store: Store::open("sqlite::memory:").await.expect("store"),
        keys: ApiKeys::from_plain([("acme", KEY_A)]),
        limits: Limits::default(),
        backend: None,
        chat: Some(generator as Arc<dyn Generator>),
        corpus: None,
        profile: Default::default(),
        retention: None,
        cors_origins: Vec::new(),
    });
    state.set_ready(true);
    state
}

/// A chat request whose prompt is `prompt_bytes` long in all.
fn chat(prompt_bytes: usize, extra: &Value) -> Value {
    let system = "Answer from the sources.";
    let mut body = json!({
        "model": "smollm2",
        "messages": [
            {"role": "system", "content": system},
            {"role": "user", "content": "x".repeat(prompt_bytes - system.len())},
        ],
        "response_format": {"type": "json_object"},
    });
    for (k, v) in extra.as_object().expect("an object") {
        body[k] = v.clone();
    }
    body
}

fn capped(r: &crate::common::Reply) -> Option<u32> {
    r.headers
        .get(HEADER)
        .map(|v| v.to_str().expect("ASCII").parse().expect("a number"))
}

#[tokio::test]
async fn a_limit_larger_than_the_context_leaves_is_capped_not_rejected() {
    let g = Arc::new(SmallContext::default());
    let s = state(g.clone()).await;
    let r = send(
        &s,
        post(
            "/v1/chat/completions",
            Some(KEY_A),
            &chat(3000, &json!({"max_tokens": 4096})),
        ),
    )
    .await;
    assert_eq!(
        r.status,
        StatusCode::OK,
        "{}",
        String::from_utf8_lossy(&r.body)
    );
    assert_eq!(capped(&r), Some(1096), "the limit applied is in the header");
    assert_eq!(*g.seen.lock().expect("lock"), [1096]);
    let body = r.json();
    assert_eq!(body["object"], "chat.completion");
    assert_eq!(body["choices"][0]["finish_reason"], "stop");
    assert_eq!(body["choices"][0]["message"]["content"], ANSWER);
    let id = r.headers["x-trace-id"].to_str().expect("trace id");
    let trace = stored_trace(&s, id).await;
    assert_eq!(
        trace["options"]["max_tokens"], 1096,
        "the trace has the limit applied"
    );

    // max_completion_tokens (OpenAI's current name) is capped the same way.
    let r = send(
        &s,
        post(
            "/v1/chat/completions",
            Some(KEY_A),
            &chat(3000, &json!({"max_completion_tokens": 100_000})),
        ),
    )
    .await;
    assert_eq!(r.status, StatusCode::OK);
    assert_eq!(capped(&r), Some(1096));
}

#[tokio::test]
async fn a_limit_that_fits_is_kept_and_not_flagged() {
    let g = Arc::new(SmallContext::default());
    let s = state(g.clone()).await;
    // No limit: the endpoint's default (1024) fits beside a short prompt.
    for (extra, applied) in [(json!({}), 1024), (json!({"max_tokens": 700}), 700)] {
        let r = send(
            &s,
            post("/v1/chat/completions", Some(KEY_A), &chat(500, &extra)),
        )
        .await;
        assert_eq!(r.status, StatusCode::OK);
        assert_eq!(capped(&r), None, "{extra}");
        assert_eq!(g.seen.lock().expect("lock").pop(), Some(applied));
    }
    // The default is capped too when the prompt leaves less.
    let r = send(
        &s,
        post("/v1/chat/completions", Some(KEY_A), &chat(3500, &json!({}))),
    )
    .await;
    assert_eq!(r.status, StatusCode::OK);
    assert_eq!(capped(&r), Some(596));
}

#[tokio::test]
async fn output_that_reaches_the_capped_limit_ends_with_length() {
    let g = Arc::new(SmallContext {
        truncate: true,
        ..SmallContext::default()
    });
    let s = state(g.clone()).await;
    let r = send(
        &s,
        post(
            "/v1/chat/completions",
            Some(KEY_A),
            &chat(3000, &json!({"max_tokens": 4096})),
        ),
    )
    .await;
    assert_eq!(r.status, StatusCode::OK);
    assert_eq!(capped(&r), Some(1096));
    let body = r.json();
    assert_eq!(body["choices"][0]["finish_reason"], "length");
    assert_eq!(body["usage"]["completion_tokens"], 1096);

    // Streamed: the header comes with the event stream's headers.
    let r = send(
        &s,
        post(
            "/v1/chat/completions",
            Some(KEY_A),
            &chat(3000, &json!({"max_tokens": 4096, "stream": true})),
        ),
    )
    .await;
    assert_eq!(r.status, StatusCode::OK);
    assert_eq!(capped(&r), Some(1096));
    let events = sse_events(&r.body);
    let last = events
        .iter()
        .rev()
        .find(|(_, d)| d.get("choices").is_some())
        .expect("a chunk");
    assert_eq!(last.1["choices"][0]["finish_reason"], "length");
}

#[tokio::test]
async fn only_a_prompt_that_alone_does_not_fit_is_an_error() {
    let g = Arc::new(SmallContext::default());
    let s = state(g.clone()).await;
    let r = send(
        &s,
        post(
            "/v1/chat/completions",
            Some(KEY_A),
            &chat(5000, &json!({"max_tokens": 16})),
        ),
    )
    .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(r.code(), "limit_exceeded");
    let error = &r.json()["error"];
    assert_eq!(error["path"], "messages");
    assert!(
        error["message"]
            .as_str()
            .expect("a message")
            .contains("does not fit the model's 4096-token context"),
        "{error}"
    );
    assert!(
        g.seen.lock().expect("lock").is_empty(),
        "nothing was generated"
    );

    // A zero limit is still invalid.
    let r = send(
        &s,
        post(
            "/v1/chat/completions",
            Some(KEY_A),
            &chat(500, &json!({"max_tokens": 0})),
        ),
    )
    .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(r.code(), "invalid_request");
}

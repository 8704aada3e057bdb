//! Google Gemini API `generateContent` (`POST {base}/models/{model}:generateContent`,
//! streamed through `:streamGenerateContent?alt=sse`), with structured output.
//!
//! Request: `systemInstruction` (the system prompt), `contents` (one user
//! turn), `generationConfig: {responseMimeType: "application/json",
//! responseJsonSchema, maxOutputTokens, temperature}`. The key goes in the
//! `x-goog-api-key` header (never in the URL, where it would reach logs).
//!
//! The schema: `responseJsonSchema` takes JSON Schema, of which Gemini
//! documents a subset (`$id`, `$defs`, `$ref`, `$anchor`, `type`, `format`,
//! `title`, `description`, `enum` of strings and numbers, `items`,
//! `prefixItems`, `minItems`, `maxItems`, `minimum`, `maximum`, `anyOf`,
//! `oneOf`, `properties`, `additionalProperties`, `required`,
//! `propertyOrdering`; a `$ref` with no sibling but `$`-keywords). The
//! built-in `GroundedAnswer` schema of [`Target::OpenAi`] stays inside it;
//! a caller's schema is checked against it ([`check_schema`]) before anything
//! is sent.
//!
//! Classification (whole response, or the chunks of a stream):
//!
//! | response                                                    | result |
//! |-------------------------------------------------------------|--------|
//! | `finishReason: "STOP"`, text parts                          | the JSON text |
//! | `MAX_TOKENS`                                                | [`ErrorKind::Truncated`] (R3), partial output kept |
//! | `SAFETY`, `RECITATION`, `BLOCKLIST`, `PROHIBITED_CONTENT`, `SPII`, `IMAGE_SAFETY`, `IMAGE_PROHIBITED_CONTENT`, `IMAGE_RECITATION` | [`ErrorKind::ContentFilter`] (R4) |
//! | `LANGUAGE` (a language the model does not support)          | [`ErrorKind::Refusal`] (R4) |
//! | `promptFeedback.blockReason` (no candidate)                 | [`ErrorKind::ContentFilter`] (R4) |
//! | `OTHER`, `MALFORMED_FUNCTION_CALL`, `MALFORMED_RESPONSE`, tool-call reasons, an unknown reason | [`ErrorKind::InvalidOutput`] (R3), naming the reason |
//! | an `error` object in a stream (code 429: [`ErrorKind::RateLimited`]) | [`ErrorKind::Status`] |
//! | a stream that ends without a finish reason                  | [`ErrorKind::Truncated`] |
//! | not JSON, no candidates, wrong types                        | [`ErrorKind::Protocol`] |
//!
//! HTTP errors go through the shared layer: 429 and 5xx are retried under
//! the retry policy, budget and breaker; 400 (`INVALID_ARGUMENT`, a bad key
//! included) and 403 (`PERMISSION_DENIED`) are rejections.

use groundcite_core::schema::Target;
use serde_json::{Map, Value, json};
use url::Url;

use crate::error::{ErrorKind, ProviderError};
use crate::generator::{BoxFuture, GenerationStream, Generator, Mode, StreamDecoder, StreamMeta};
use crate::http::{Http, HttpConfig, join, read_body};
use crate::secret::SecretString;
use crate::sse::SseEvent;
use crate::types::{FinishReason, Generation, GenerationRequest, Output, Timings, Usage};

/// The Gemini API's base URL (Google AI, API-key authentication).
pub const GEMINI_BASE_URL: &str = "https://generativelanguage.googleapis.com/v1beta";

const PROVIDER: &str = "gemini";
/// Google's front end names no request-ID header for this API; the
/// response's `responseId` stands in for one.
const REQUEST_ID_HEADERS: &[&str] = &["x-request-id"];

/// A Gemini API client (`x-goog-api-key`).
#[derive(Debug, Clone)]
pub struct Gemini {
    whole: Url,
    stream: Url,
    model: String,
    api_key: SecretString,
    http: Http,
}

impl Gemini {
    /// `POST {base_url}/models/{model}:generateContent` with `x-goog-api-key`.
    /// A model given as `models/NAME` is taken as `NAME`.
    pub fn new(
        base_url: Url,
        api_key: SecretString,
        model: String,
        http: HttpConfig,
    ) -> Result<Gemini, ProviderError> {
        let config = |m: String| ProviderError::new(ErrorKind::Config, PROVIDER, m);
        let model = model.trim().trim_start_matches("models/").to_string();
        // The model is one path segment; anything that would change the
        // path (or the method after `:`) is refused rather than encoded.
        if model.is_empty()
            || !model
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_'))
        {
            return Err(config(format!(
                "the Gemini model {model:?} is not a model name (letters, digits, '-', '.', '_')"
            )));
        }
        let url = |method: &str| {
            join(&base_url, &format!("models/{model}:{method}"))
                .map_err(|e| config(format!("bad base URL: {e}")))
        };
        let whole = url("generateContent")?;
        let mut stream = url("streamGenerateContent")?;
        stream.query_pairs_mut().append_pair("alt", "sse");
        Ok(Gemini {
            whole,
            stream,
            model,
            api_key,
            http: Http::new(http, PROVIDER)?,
        })
    }

    /// The endpoint, for display (credentials and query values redacted).
    pub fn endpoint(&self) -> String {
        crate::secret::redact_endpoint_url(&self.whole)
    }

    /// The request body this client sends for `request` (the same whole or
    /// streamed: the method in the URL chooses).
    pub fn body(&self, request: &GenerationRequest) -> Result<Value, ProviderError> {
        let config = |m: String| ProviderError::new(ErrorKind::Config, PROVIDER, m);
        let Some(schema) = &request.schema else {
            return Err(config(
                "a structured-output schema is required (native citations are an Anthropic mode)"
                    .into(),
            ));
        };
        check_schema(&schema.schema)
            .map_err(|why| config(format!("the schema is outside Gemini's subset: {why}")))?;
        let mut generation = Map::new();
        generation.insert("responseMimeType".into(), json!("application/json"));
        generation.insert("responseJsonSchema".into(), schema.schema.clone());
        if let Some(n) = request.token_limit() {
            generation.insert("maxOutputTokens".into(), json!(n));
        }
        if let Some(t) = request.temperature {
            generation.insert("temperature".into(), json!(t));
        }
        Ok(json!({
            "systemInstruction": {"parts": [{"text": request.system}]},
            "contents": [{"role": "user", "parts": [{"text": request.user}]}],
            "generationConfig": generation,
        }))
    }

    async fn send(
        &self,
        request: &GenerationRequest,
        stream: bool,
    ) -> Result<crate::http::Sent, ProviderError> {
        let body = self.body(request)?;
        let secrets = [self.api_key.clone()];
        let client = self.http.client().clone();
        let (url, accept) = if stream {
            (self.stream.clone(), "text/event-stream")
        } else {
            (self.whole.clone(), "application/json")
        };
        let key = self.api_key.clone();
        self.http
            .send(
                PROVIDER,
                || {
                    client
                        .post(url.clone())
                        .header("accept", accept)
                        .header("x-goog-api-key", key.expose())
                        .json(&body)
                },
                REQUEST_ID_HEADERS,
                &secrets,
            )
            .await
    }

    async fn run(&self, request: &GenerationRequest) -> Result<Generation, ProviderError> {
        let sent = self.send(request, false).await?;
        let (body, request_id, attempts, started, time_to_headers) =
            read_body(sent, PROVIDER).await?;
        let protocol = |message: String| {
            ProviderError::new(ErrorKind::Protocol, PROVIDER, message)
                .with_body(body.clone())
                .with_request_id(request_id.clone())
                .with_attempts(attempts)
        };
        let value: Value = serde_json::from_str(&body)
            .map_err(|e| protocol(format!("the response is not JSON: {e}")))?;
        let mut acc = Accumulated::default();
        acc.absorb(&value, None).map_err(protocol)?;
        let timings = Timings {
            time_to_headers,
            time_to_first_token: None,
            total: started.elapsed(),
            attempts,
        };
        acc.into_generation(request_id, timings, true)
    }

    async fn run_stream(
        &self,
        request: &GenerationRequest,
    ) -> Result<GenerationStream, ProviderError> {
        let sent = self.send(request, true).await?;
        Ok(GenerationStream::new(
            PROVIDER,
            sent,
            Box::new(GeminiStreamDecoder {
                acc: Accumulated::default(),
            }),
        ))
    }

    /// The model as sent in the URL.
    pub fn model(&self) -> &str {
        &self.model
    }
}

impl Generator for Gemini {
    fn provider(&self) -> &'static str {
        PROVIDER
    }

    fn mode(&self) -> Mode {
        // OpenAI's strict GroundedAnswer schema is inside Gemini's subset
        // (checked by `check_schema` on every request and in the tests).
        Mode::Structured(Target::OpenAi)
    }

    fn generate<'a>(
        &'a self,
        request: &'a GenerationRequest,
    ) -> BoxFuture<'a, Result<Generation, ProviderError>> {
        Box::pin(self.run(request))
    }

    fn generate_stream<'a>(
        &'a self,
        request: &'a GenerationRequest,
    ) -> BoxFuture<'a, Result<GenerationStream, ProviderError>> {
        Box::pin(self.run_stream(request))
    }
}

/// The keywords of Gemini's documented `responseJsonSchema` subset.
const GEMINI_KEYWORDS: &[&str] = &[
    "$id",
    "$defs",
    "$ref",
    "$anchor",
    "type",
    "format",
    "title",
    "description",
    "enum",
    "items",
    "prefixItems",
    "minItems",
    "maxItems",
    "minimum",
    "maximum",
    "anyOf",
    "oneOf",
    "properties",
    "additionalProperties",
    "required",
    "propertyOrdering",
];

/// Checks `schema` against Gemini's documented `responseJsonSchema` subset:
/// only its keywords, `enum` values strings or numbers, and no sibling of
/// `$ref` other than `$`-keywords. The error names the first JSON pointer
/// that does not fit.
pub fn check_schema(schema: &Value) -> Result<(), String> {
    check_node(schema, "", 0)
}

fn check_node(node: &Value, at: &str, depth: usize) -> Result<(), String> {
    // Far deeper than any schema a provider accepts; keeps recursion bounded.
    if depth > 64 {
        return Err(format!("{at}: nested too deeply"));
    }
    let obj = match node {
        Value::Object(o) => o,
        Value::Bool(_) => return Ok(()),
        other => return Err(format!("{at}: a schema must be an object, not {other}")),
    };
    let has_ref = obj.contains_key("$ref");
    for (key, value) in obj {
        let here = format!("{at}/{}", key.replace('~', "~0").replace('/', "~1"));
        if !GEMINI_KEYWORDS.contains(&key.as_str()) {
            return Err(format!("{here}: `{key}` is not supported"));
        }
        if has_ref && !key.starts_with('$') {
            return Err(format!(
                "{here}: `$ref` may have no sibling but `$` keywords"
            ));
        }
        match key.as_str() {
            "$defs" | "properties" => {
                let Value::Object(map) = value else {
                    return Err(format!("{here}: must be an object"));
                };
                for (name, sub) in map {
                    let p = format!("{here}/{}", name.replace('~', "~0").replace('/', "~1"));
                    check_node(sub, &p, depth + 1)?;
                }
            }
            "items" | "additionalProperties" => check_node(value, &here, depth + 1)?,
            "prefixItems" | "anyOf" | "oneOf" => {
                let Value::Array(list) = value else {
                    return Err(format!("{here}: must be an array"));
                };
                for (i, sub) in list.iter().enumerate() {
                    check_node(sub, &format!("{here}/{i}"), depth + 1)?;
                }
            }
            "enum" => {
                let Value::Array(list) = value else {
                    return Err(format!("{here}: must be an array"));
                };
                if let Some(bad) = list.iter().find(|v| !(v.is_string() || v.is_number())) {
                    return Err(format!(
                        "{here}: enum values must be strings or numbers, not {bad}"
                    ));
                }
            }
            _ => {}
        }
    }
    Ok(())
}

/// What a response (whole, or a stream's chunks) said, before classification.
#[derive(Debug, Default)]
pub(crate) struct Accumulated {
    text: Option<String>,
    finish_reason: Option<String>,
    block_reason: Option<String>,
    /// `(code, status, message)` of an `error` object.
    error: Option<(Option<i64>, Option<String>, String)>,
    model: Option<String>,
    response_id: Option<String>,
    usage: Usage,
}

fn opt_str<'v>(v: &'v Value, key: &str) -> Result<Option<&'v str>, String> {
    match v.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(other) => Err(format!("`{key}` is not a string: {other}")),
    }
}

fn opt_u64(v: &Value, key: &str) -> Result<Option<u64>, String> {
    match v.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(n) => n
            .as_u64()
            .map(Some)
            .ok_or_else(|| format!("`{key}` is not a count: {n}")),
    }
}

impl Accumulated {
    /// Reads one response object (a whole response, or one stream chunk);
    /// text parts append, so a stream's chunks add up. `deltas` receives the
    /// new text of a stream chunk.
    pub(crate) fn absorb(
        &mut self,
        v: &Value,
        mut deltas: Option<&mut Vec<String>>,
    ) -> Result<(), String> {
        if !v.is_object() {
            return Err("the response is not an object".into());
        }
        if let Some(e) = v.get("error").filter(|e| !e.is_null()) {
            if !e.is_object() {
                return Err(format!("`error` is not an object: {e}"));
            }
            let code = match e.get("code") {
                None | Some(Value::Null) => None,
                Some(c) => Some(
                    c.as_i64()
                        .ok_or_else(|| format!("`code` is not a number: {c}"))?,
                ),
            };
            self.error = Some((
                code,
                opt_str(e, "status")?.map(str::to_string),
                opt_str(e, "message")?
                    .unwrap_or("the provider reported an error")
                    .to_string(),
            ));
            return Ok(());
        }
        if let Some(m) = opt_str(v, "modelVersion")?.filter(|m| !m.is_empty()) {
            self.model = Some(m.to_string());
        }
        if let Some(id) = opt_str(v, "responseId")?.filter(|m| !m.is_empty()) {
            self.response_id = Some(id.to_string());
        }
        if let Some(f) = v.get("promptFeedback").filter(|f| !f.is_null()) {
            if !f.is_object() {
                return Err(format!("`promptFeedback` is not an object: {f}"));
            }
            if let Some(r) = opt_str(f, "blockReason")? {
                self.block_reason = Some(r.to_string());
            }
        }
        match v.get("usageMetadata") {
            None | Some(Value::Null) => {}
            Some(u @ Value::Object(_)) => {
                let candidates = opt_u64(u, "candidatesTokenCount")?;
                // Thinking models bill their thoughts as output: the limit
                // counts them too, so a truncation shows where they went.
                let thoughts = opt_u64(u, "thoughtsTokenCount")?;
                self.usage = Usage {
                    input_tokens: opt_u64(u, "promptTokenCount")?,
                    output_tokens: match (candidates, thoughts) {
                        (None, None) => None,
                        (c, t) => Some(c.unwrap_or(0).saturating_add(t.unwrap_or(0))),
                    },
                };
            }
            Some(other) => return Err(format!("`usageMetadata` is not an object: {other}")),
        }
        let candidates = match v.get("candidates") {
            None | Some(Value::Null) => return Ok(()),
            Some(Value::Array(c)) => c,
            Some(other) => return Err(format!("`candidates` is not an array: {other}")),
        };
        // groundcite asks for one candidate; any others are ignored.
        let Some(candidate) = candidates.first() else {
            return Ok(());
        };
        if !candidate.is_object() {
            return Err(format!("a candidate is not an object: {candidate}"));
        }
        if let Some(r) = opt_str(candidate, "finishReason")? {
            self.finish_reason = Some(r.to_string());
        }
        let parts = match candidate.get("content") {
            None | Some(Value::Null) => return Ok(()),
            Some(c @ Value::Object(_)) => match c.get("parts") {
                None | Some(Value::Null) => return Ok(()),
                Some(Value::Array(p)) => p,
                Some(other) => return Err(format!("`parts` is not an array: {other}")),
            },
            Some(other) => return Err(format!("`content` is not an object: {other}")),
        };
        for part in parts {
            if !part.is_object() {
                return Err(format!("a part is not an object: {part}"));
            }
            // Thought summaries are not the answer.
            match part.get("thought") {
                None | Some(Value::Null) | Some(Value::Bool(false)) => {}
                Some(Value::Bool(true)) => continue,
                Some(other) => return Err(format!("`thought` is not a boolean: {other}")),
            }
            if let Some(t) = opt_str(part, "text")?.filter(|t| !t.is_empty()) {
                self.text.get_or_insert_with(String::new).push_str(t);
                if let Some(d) = deltas.as_deref_mut() {
                    d.push(t.to_string());
                }
            }
        }
        Ok(())
    }

    /// Classifies what was read. `whole`: a non-streamed response, where a
    /// missing finish reason is a protocol error (a stream's means it was
    /// cut off).
    pub(crate) fn into_generation(
        self,
        header_request_id: Option<String>,
        timings: Timings,
        whole: bool,
    ) -> Result<Generation, ProviderError> {
        let request_id = header_request_id.or(self.response_id.clone());
        let fail = |kind, message: String, partial: Option<String>| {
            ProviderError::new(kind, PROVIDER, message)
                .with_request_id(request_id.clone())
                .with_attempts(timings.attempts)
                .with_partial_output(partial)
                .with_model(self.model.clone())
                .with_usage(self.usage)
        };
        if let Some((code, status, message)) = &self.error {
            let kind = if *code == Some(429) || status.as_deref() == Some("RESOURCE_EXHAUSTED") {
                ErrorKind::RateLimited
            } else {
                ErrorKind::Status
            };
            let what = status.as_deref().unwrap_or("no status");
            return Err(fail(
                kind,
                format!("the provider reported an error ({what}): {message}"),
                self.text,
            ));
        }
        if let Some(r) = &self.block_reason {
            return Err(fail(
                ErrorKind::ContentFilter,
                format!("the prompt was blocked (promptFeedback.blockReason: {r})"),
                None,
            ));
        }
        let reason = match self.finish_reason.as_deref() {
            Some(r) => r,
            None if whole => {
                return Err(fail(
                    ErrorKind::Protocol,
                    "the response has no candidate with a finish reason".into(),
                    self.text,
                ));
            }
            None => {
                return Err(fail(
                    ErrorKind::Truncated,
                    "the stream ended before a finish reason".into(),
                    self.text,
                ));
            }
        };
        match reason {
            "STOP" => {}
            "MAX_TOKENS" => {
                return Err(fail(
                    ErrorKind::Truncated,
                    "the output stopped at the token limit (finishReason: MAX_TOKENS)".into(),
                    self.text,
                ));
            }
            "SAFETY"
            | "RECITATION"
            | "BLOCKLIST"
            | "PROHIBITED_CONTENT"
            | "SPII"
            | "IMAGE_SAFETY"
            | "IMAGE_PROHIBITED_CONTENT"
            | "IMAGE_RECITATION" => {
                return Err(fail(
                    ErrorKind::ContentFilter,
                    format!("the content filter stopped the answer (finishReason: {reason})"),
                    self.text,
                ));
            }
            "LANGUAGE" => {
                return Err(fail(
                    ErrorKind::Refusal,
                    "the model declined: the language is not supported (finishReason: LANGUAGE)"
                        .into(),
                    self.text,
                ));
            }
            other => {
                return Err(fail(
                    ErrorKind::InvalidOutput,
                    format!("the answer ended for an unusable reason (finishReason: {other:?})"),
                    self.text,
                ));
            }
        }
        let output = Output::json(self.text.unwrap_or_default())
            .map_err(|(why, partial)| fail(ErrorKind::InvalidOutput, why, partial))?;
        Ok(Generation {
            output,
            model: self.model,
            finish_reason: Some(FinishReason::Stop),
            usage: self.usage,
            request_id,
            timings,
            p_answerable: None,
        })
    }
}

/// Decodes a Gemini response body as the non-streamed client does, for the
/// fuzz target: never panics, whatever the bytes.
pub fn decode_response(body: &[u8]) -> Result<Generation, ProviderError> {
    let text = String::from_utf8_lossy(body);
    let value: Value = serde_json::from_str(&text).map_err(|e| {
        ProviderError::new(
            ErrorKind::Protocol,
            PROVIDER,
            format!("the response is not JSON: {e}"),
        )
    })?;
    let mut acc = Accumulated::default();
    acc.absorb(&value, None)
        .map_err(|m| ProviderError::new(ErrorKind::Protocol, PROVIDER, m))?;
    acc.into_generation(None, Timings::default(), true)
}

/// Decodes Server-Sent Event data (one event per element) as the
/// streaming client does, for the fuzz target: the text deltas handed out,
/// and the generation or error at the end. Never panics.
pub fn decode_stream<'a>(
    events: impl IntoIterator<Item = &'a str>,
) -> (Vec<String>, Result<Generation, ProviderError>) {
    crate::generator::replay(
        Box::new(GeminiStreamDecoder {
            acc: Accumulated::default(),
        }),
        events.into_iter().map(|data| SseEvent {
            event: None,
            data: data.to_string(),
        }),
    )
}

struct GeminiStreamDecoder {
    acc: Accumulated,
}

impl StreamDecoder for GeminiStreamDecoder {
    fn event(&mut self, event: &SseEvent, deltas: &mut Vec<String>) -> Result<(), ProviderError> {
        let protocol = |message: String| {
            ProviderError::new(ErrorKind::Protocol, PROVIDER, message).with_body(event.data.clone())
        };
        if event.data.trim().is_empty() {
            return Ok(());
        }
        let v: Value = serde_json::from_str(&event.data)
            .map_err(|e| protocol(format!("a stream event is not JSON: {e}")))?;
        self.acc.absorb(&v, Some(deltas)).map_err(protocol)
    }

    fn finish(self: Box<Self>, meta: StreamMeta) -> Result<Generation, ProviderError> {
        let timings = meta.timings();
        self.acc.into_generation(meta.request_id, timings, false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::ResponseSchema;

    fn classify(v: &Value) -> Result<Generation, ProviderError> {
        decode_response(v.to_string().as_bytes())
    }

    fn candidate(text: &str, reason: &str) -> Value {
        json!({"candidates": [{"content": {"role": "model", "parts": [{"text": text}]},
            "finishReason": reason, "index": 0}],
            "usageMetadata": {"promptTokenCount": 3, "candidatesTokenCount": 4, "thoughtsTokenCount": 5},
            "modelVersion": "gemini-2.5-flash", "responseId": "resp-1"})
    }

    #[test]
    fn hostile_responses_give_clear_errors_not_panics() {
        let cases = [
            (json!([]), "not an object"),
            (json!({}), "no candidate"),
            (json!({"candidates": {}}), "`candidates` is not an array"),
            (json!({"candidates": [3]}), "a candidate is not an object"),
            (
                json!({"candidates": [{"finishReason": 1}]}),
                "`finishReason` is not a string",
            ),
            (
                json!({"candidates": [{"content": []}]}),
                "`content` is not an object",
            ),
            (
                json!({"candidates": [{"content": {"parts": {}}}]}),
                "`parts` is not an array",
            ),
            (
                json!({"candidates": [{"content": {"parts": ["x"]}}]}),
                "a part is not an object",
            ),
            (
                json!({"candidates": [{"content": {"parts": [{"text": 1}]}}]}),
                "`text` is not a string",
            ),
            (
                json!({"candidates": [{"content": {"parts": [{"text": "a", "thought": "yes"}]}}]}),
                "`thought` is not a boolean",
            ),
            (
                json!({"usageMetadata": []}),
                "`usageMetadata` is not an object",
            ),
            (
                json!({"usageMetadata": {"promptTokenCount": -1}}),
                "`promptTokenCount` is not a count",
            ),
            (
                json!({"promptFeedback": 1}),
                "`promptFeedback` is not an object",
            ),
            (
                json!({"promptFeedback": {"blockReason": 2}}),
                "`blockReason` is not a string",
            ),
            (json!({"error": "x"}), "`error` is not an object"),
            (json!({"error": {"code": "x"}}), "`code` is not a number"),
            (
                json!({"modelVersion": []}),
                "`modelVersion` is not a string",
            ),
        ];
        for (v, needle) in cases {
            let e = classify(&v).unwrap_err();
            assert_eq!(e.kind(), ErrorKind::Protocol, "{v}: {e}");
            assert!(e.to_string().contains(needle), "{v}: {e}");
        }
        for bytes in [
            &b""[..],
            b"\xff\xfe",
            b"{",
            b"null",
            b"[[[[[[[[",
            b"\"STOP\"",
        ] {
            let e = decode_response(bytes).unwrap_err();
            assert_eq!(e.kind(), ErrorKind::Protocol);
        }
        // Deep nesting is refused by the JSON parser, not a stack overflow.
        let deep = "[".repeat(100_000);
        assert_eq!(
            decode_response(deep.as_bytes()).unwrap_err().kind(),
            ErrorKind::Protocol
        );
    }

    #[test]
    fn the_mapping() {
        let g = classify(&candidate("{}", "STOP")).unwrap();
        assert_eq!(g.output, Output::Json("{}".into()));
        assert_eq!(g.model.as_deref(), Some("gemini-2.5-flash"));
        assert_eq!(g.request_id.as_deref(), Some("resp-1"));
        assert_eq!(g.usage.input_tokens, Some(3));
        assert_eq!(g.usage.output_tokens, Some(9));
        let e = classify(&candidate("{\"a", "MAX_TOKENS")).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Truncated);
        assert_eq!(e.partial_output(), Some("{\"a"));
        for r in [
            "SAFETY",
            "RECITATION",
            "BLOCKLIST",
            "PROHIBITED_CONTENT",
            "SPII",
            "IMAGE_SAFETY",
        ] {
            let e = classify(&candidate("", r)).unwrap_err();
            assert_eq!(e.kind(), ErrorKind::ContentFilter, "{r}");
            assert_eq!(e.refusal_code(), groundcite_core::RefusalCode::R4);
            assert!(e.to_string().contains(r), "{e}");
        }
        assert_eq!(
            classify(&candidate("", "LANGUAGE")).unwrap_err().kind(),
            ErrorKind::Refusal
        );
        for r in [
            "OTHER",
            "MALFORMED_FUNCTION_CALL",
            "FINISH_REASON_UNSPECIFIED",
            "NEW_ONE",
        ] {
            let e = classify(&candidate("{}", r)).unwrap_err();
            assert_eq!(e.kind(), ErrorKind::InvalidOutput, "{r}");
            assert!(e.to_string().contains(r), "{e}");
        }
        let e = classify(&json!({"promptFeedback": {"blockReason": "PROHIBITED_CONTENT"}}))
            .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::ContentFilter);
        assert!(e.to_string().contains("PROHIBITED_CONTENT"), "{e}");
        // Thought parts are not the answer.
        let g = classify(&json!({"candidates": [{"content": {"parts": [
            {"text": "thinking about it", "thought": true}, {"text": "{\"a\": 1}"}]},
            "finishReason": "STOP"}]}))
        .unwrap();
        assert_eq!(g.output, Output::Json("{\"a\": 1}".into()));
        let e = classify(&candidate("Refunds take 30 days.", "STOP")).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidOutput);
    }

    #[test]
    fn stream_chunks_add_up_and_errors_classify() {
        let chunk = |t: &str| {
            json!({"candidates": [{"content": {"role": "model", "parts": [{"text": t}]}}]})
                .to_string()
        };
        let last =
            json!({"candidates": [{"content": {"parts": [{"text": "}"}]}, "finishReason": "STOP"}],
            "usageMetadata": {"promptTokenCount": 1, "candidatesTokenCount": 2}})
            .to_string();
        let (deltas, g) = decode_stream([chunk("{\"a\":").as_str(), chunk(" 1").as_str(), &last]);
        assert_eq!(g.unwrap().output, Output::Json("{\"a\": 1}".into()));
        assert_eq!(deltas.concat(), "{\"a\": 1}");
        let e = decode_stream([chunk("{\"a\":").as_str()]).1.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Truncated);
        let e = decode_stream([
            chunk("{").as_str(),
            r#"{"error": {"code": 429, "message": "Resource has been exhausted", "status": "RESOURCE_EXHAUSTED"}}"#,
        ])
        .1
        .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::RateLimited);
        let e = decode_stream([
            r#"{"error": {"code": 500, "message": "Internal error", "status": "INTERNAL"}}"#,
        ])
        .1
        .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Status);
        let e = decode_stream(["{not json"]).1.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Protocol);
    }

    #[test]
    fn the_built_in_schema_is_inside_the_subset_and_others_are_refused() {
        let s = ResponseSchema::grounded_answer(Target::OpenAi);
        assert_eq!(check_schema(&s.schema), Ok(()));
        let mut bad = s.schema.clone();
        bad["$defs"]["Citation"]["properties"]["quote"]["pattern"] = json!("^a");
        let e = check_schema(&bad).unwrap_err();
        assert!(
            e.contains("/$defs/Citation/properties/quote/pattern"),
            "{e}"
        );
        let mut bad = s.schema.clone();
        bad["properties"]["claims"]["items"]["title"] = json!("x");
        assert!(check_schema(&bad).unwrap_err().contains("sibling"));
        let mut bad = s.schema.clone();
        bad["properties"]["answerable"]["enum"] = json!([true]);
        assert!(
            check_schema(&bad)
                .unwrap_err()
                .contains("strings or numbers")
        );
        assert!(check_schema(&json!(3)).is_err());
    }

    #[test]
    fn model_names_and_urls() {
        let g = Gemini::new(
            GEMINI_BASE_URL.parse().unwrap(),
            SecretString::new("AIza-test-FAKE"),
            "models/gemini-2.5-flash".into(),
            HttpConfig::default(),
        )
        .unwrap();
        assert_eq!(
            g.whole.as_str(),
            "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:generateContent"
        );
        assert_eq!(
            g.stream.as_str(),
            "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
        );
        assert!(!format!("{g:?}").contains("AIza-test-FAKE"));
        for bad in ["", "a/b", "m?x", "m:generate", "../x"] {
            let e = Gemini::new(
                GEMINI_BASE_URL.parse().unwrap(),
                SecretString::new("k"),
                bad.into(),
                HttpConfig::default(),
            )
            .unwrap_err();
            assert_eq!(e.kind(), ErrorKind::Config, "{bad}");
        }
    }
}

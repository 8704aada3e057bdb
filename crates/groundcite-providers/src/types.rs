//! What goes into a generator and what comes out.

use std::time::Duration;

use groundcite_core::schema::{self, Target, Violation};
use groundcite_core::{Chunk, ChunkSet, prompt};
use serde_json::Value;

/// The structured-output schema to enforce, without its provider wrapping
/// (each adapter wraps it in its own dialect).
#[derive(Debug, Clone, PartialEq)]
pub struct ResponseSchema {
    /// Schema name (`json_schema.name` for OpenAI and Azure).
    pub name: String,
    /// The JSON Schema.
    pub schema: Value,
}

impl ResponseSchema {
    /// The strict `GroundedAnswer` schema for `target`, with `chunk_id`
    /// restricted to the retrieved IDs when the target's limits allow it
    /// ([`schema::request_fragment`]).
    pub fn grounded_answer(target: Target, chunks: &ChunkSet) -> ResponseSchema {
        let ids: Vec<String> = chunks.chunks().iter().map(|c| c.chunk_id.clone()).collect();
        let fragment = schema::request_fragment(target, Some(&ids));
        let pointer = match target {
            Target::OpenAi | Target::Azure => "/response_format/json_schema/schema",
            Target::Anthropic => "/output_config/format/schema",
        };
        let schema = fragment
            .value
            .pointer(pointer)
            .cloned()
            // request_fragment always wraps at this pointer; fall back to
            // the unrestricted schema rather than panic.
            .unwrap_or_else(|| schema::grounded_answer_schema(None));
        ResponseSchema {
            name: schema::SCHEMA_NAME.to_string(),
            schema,
        }
    }

    /// A caller's own schema, accepted only if it passes the core's strict
    /// lint for `target` (wrapped as `target` will send it).
    pub fn custom(
        name: impl Into<String>,
        schema: Value,
        target: Target,
    ) -> Result<ResponseSchema, Vec<Violation>> {
        let violations = schema::lint(&schema::wrap_schema(target, schema.clone()), target);
        if violations.is_empty() {
            Ok(ResponseSchema {
                name: name.into(),
                schema,
            })
        } else {
            Err(violations)
        }
    }
}

/// How native-citation modes send the chunks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum NativeSources {
    /// One plain-text `document` block per chunk (citations are
    /// `char_location`).
    #[default]
    Documents,
    /// One `search_result` block per chunk (citations are
    /// `search_result_location`).
    SearchResults,
}

/// One generation request.
#[derive(Debug, Clone)]
pub struct GenerationRequest {
    /// The system prompt.
    pub system: String,
    /// The user message (sources and question for structured modes; the
    /// question alone for native-citation modes, whose sources are `chunks`).
    pub user: String,
    /// The schema to enforce (structured modes); `None` in native-citation modes.
    pub schema: Option<ResponseSchema>,
    /// The chunks, sent as documents in native-citation modes.
    pub chunks: Vec<Chunk>,
    /// How native-citation modes send `chunks`.
    pub native_sources: NativeSources,
    /// Output token limit.
    pub max_tokens: u32,
    /// Sampling temperature; the provider's default when `None`.
    pub temperature: Option<f64>,
}

/// Default output token limit.
pub const DEFAULT_MAX_TOKENS: u32 = 4096;

impl GenerationRequest {
    /// The seed's structured request: [`prompt::SYSTEM_PROMPT`], the sources
    /// under `[chunk_id: …]` headers and the question, and the strict
    /// `GroundedAnswer` schema for `target`.
    pub fn grounded(chunks: &ChunkSet, question: &str, target: Target) -> GenerationRequest {
        GenerationRequest {
            system: prompt::SYSTEM_PROMPT.to_string(),
            user: prompt::user_prompt(chunks, question),
            schema: Some(ResponseSchema::grounded_answer(target, chunks)),
            chunks: Vec::new(),
            native_sources: NativeSources::Documents,
            max_tokens: DEFAULT_MAX_TOKENS,
            temperature: None,
        }
    }

    /// A native-citation request: the chunks as documents (or search
    /// results), the question as the user message.
    pub fn native(chunks: &ChunkSet, question: &str, sources: NativeSources) -> GenerationRequest {
        GenerationRequest {
            system: NATIVE_SYSTEM_PROMPT.to_string(),
            user: question.to_string(),
            schema: None,
            chunks: chunks.chunks().to_vec(),
            native_sources: sources,
            max_tokens: DEFAULT_MAX_TOKENS,
            temperature: None,
        }
    }
}

/// System prompt of native-citation modes: the seed's rules, minus the JSON
/// shape (the provider attaches the citations itself).
pub const NATIVE_SYSTEM_PROMPT: &str = "You are an accurate enterprise assistant.
Answer the user's question using ONLY the provided documents, citing them for every factual claim.
Rules:
1. Do not use any external knowledge.
2. If the documents do not contain enough information to answer the question, say so in one sentence and make no claim.
3. Every claim must be supported by a citation of the document it comes from.";

/// The model's raw output, unverified.
#[derive(Debug, Clone, PartialEq)]
pub enum Output {
    /// Structured output: JSON text (checked to be syntactically valid JSON).
    Json(String),
    /// An Anthropic Messages response with native citations, as received,
    /// for [`groundcite_core::native::anthropic::convert`].
    AnthropicCitations(Value),
}

/// Why the model stopped, normalised across providers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FinishReason {
    /// A natural end (`stop`, `end_turn`, `stop_sequence`).
    Stop,
    /// The token limit (never in a successful [`Generation`]: it is an error).
    Length,
    /// Anything else, as the provider spelt it.
    Other(String),
}

impl FinishReason {
    pub(crate) fn from_provider(s: &str) -> FinishReason {
        match s {
            "stop" | "end_turn" | "stop_sequence" => FinishReason::Stop,
            "length" | "max_tokens" => FinishReason::Length,
            other => FinishReason::Other(other.to_string()),
        }
    }
}

/// Token counts, when the provider returns them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Usage {
    /// Prompt tokens.
    pub input_tokens: Option<u64>,
    /// Output tokens.
    pub output_tokens: Option<u64>,
}

/// Where the time went.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Timings {
    /// From the first request sent to the successful response's headers
    /// (retries and their waits included).
    pub time_to_headers: Duration,
    /// From the start to the first output text (streaming only).
    pub time_to_first_token: Option<Duration>,
    /// From the start to the end of the output.
    pub total: Duration,
    /// Requests sent, retries included.
    pub attempts: u32,
}

/// A successful generation: output the provider says is complete.
#[derive(Debug, Clone, PartialEq)]
pub struct Generation {
    /// The raw output, not yet verified.
    pub output: Output,
    /// The model that answered (as the provider names it), when known.
    pub model: Option<String>,
    /// Why the model stopped.
    pub finish_reason: Option<FinishReason>,
    /// Token counts.
    pub usage: Usage,
    /// The provider's request ID.
    pub request_id: Option<String>,
    /// Timings.
    pub timings: Timings,
}

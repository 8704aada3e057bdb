//! What goes into a generator and what comes out.

use std::time::Duration;

use groundcite_core::schema::{self, Target, Violation};
use groundcite_core::{AnswerForm, Candidate, Chunk, ChunkSet, prompt};
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
    /// The strict `GroundedAnswer` schema for `target`: the same for every
    /// request of a target. `chunk_id` is a plain string, not an enum of the
    /// request's chunk IDs, so the provider compiles and caches one grammar
    /// (and one prompt prefix), the warm-up warms exactly what real requests
    /// use, and the verifier drops any ID that was not retrieved, as it
    /// always does. Measured in docs/providers.md ("One schema per target").
    pub fn grounded_answer(target: Target) -> ResponseSchema {
        Self::from_fragment(target, None)
    }

    /// The strict `GroundedAnswer` schema with `chunk_id` an enum of the
    /// request's chunk IDs where the target's limits allow it: a new schema
    /// per request, for small models behind OpenAI-compatible servers, which
    /// compile a grammar per request anyway and invent IDs without the enum
    /// (docs/providers.md, "One schema per target").
    pub fn grounded_answer_restricted(target: Target, chunks: &ChunkSet) -> ResponseSchema {
        let ids: Vec<String> = chunks.chunks().iter().map(|c| c.chunk_id.clone()).collect();
        Self::from_fragment(target, Some(&ids))
    }

    fn from_fragment(target: Target, ids: Option<&[String]>) -> ResponseSchema {
        let fragment = schema::request_fragment(target, ids);
        let pointer = match target {
            Target::OpenAi | Target::Azure => "/response_format/json_schema/schema",
            Target::Anthropic => "/output_config/format/schema",
            Target::Bedrock => "/outputConfig/textFormat/structure/jsonSchema/schema",
        };
        let schema = match fragment.value.pointer(pointer) {
            // Bedrock's fragment carries the schema as JSON text.
            Some(Value::String(text)) => serde_json::from_str(text).ok(),
            other => other.cloned(),
        }
        // request_fragment always wraps at this pointer; fall back to the
        // unrestricted schema rather than panic.
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

/// Why a caller's schema cannot replace the `GroundedAnswer` schema.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CustomSchemaError {
    /// The schema breaks the target's strict subset (the core's lint).
    #[error("{} violation(s) of the strict subset{}", .0.len(), first_violation(.0))]
    Lint(Vec<Violation>),
    /// The schema does not describe a `GroundedAnswer`, so its output could
    /// not be verified; the message says what is missing, in one sentence.
    #[error("{0}")]
    Shape(ShapeError),
}

/// `, first VIOLATION`, or nothing when there is none.
fn first_violation(v: &[Violation]) -> String {
    v.first()
        .map_or_else(String::new, |first| format!(", first {first}"))
}

/// Why a schema does not describe a `GroundedAnswer`
/// ([`grounded_answer_shape`]): the first path that does not fit, in one
/// sentence.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ShapeError(String);

impl ResponseSchema {
    /// A caller's own schema in place of the built-in `GroundedAnswer` one:
    /// it must pass the core's strict lint for `target` and still describe
    /// the `GroundedAnswer` shape ([`grounded_answer_shape`]), since its
    /// output is verified as one. Extra properties (and constraints such as
    /// a `chunk_id` enum) are the caller's choice.
    ///
    /// The name is the schema's `title` when it is a valid
    /// `json_schema.name` (`[A-Za-z0-9_-]{1,64}`), else `GroundedAnswer`.
    pub fn custom_grounded_answer(
        schema: Value,
        target: Target,
    ) -> Result<ResponseSchema, CustomSchemaError> {
        let name = schema
            .get("title")
            .and_then(Value::as_str)
            .filter(|t| {
                !t.is_empty()
                    && t.len() <= 64
                    && t.chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
            })
            .unwrap_or(schema::SCHEMA_NAME)
            .to_string();
        let custom =
            ResponseSchema::custom(name, schema, target).map_err(CustomSchemaError::Lint)?;
        grounded_answer_shape(&custom.schema).map_err(CustomSchemaError::Shape)?;
        Ok(custom)
    }
}

/// Checks that `schema` describes a `GroundedAnswer`: a root object with a
/// required boolean `answerable` and a required array `claims` of objects
/// with a required string `text` and a required array `citations` of
/// objects with required strings `chunk_id` and `quote`. Local `$ref`s are
/// followed. The error names the first path that does not fit, in one
/// sentence.
pub fn grounded_answer_shape(schema: &Value) -> Result<(), ShapeError> {
    shape(schema).map_err(ShapeError)
}

fn shape(schema: &Value) -> Result<(), String> {
    let root = schema;
    let answer = object_schema(root, root, "the root")?;
    property(root, answer, "the root", "answerable", "boolean")?;
    let claims = property(root, answer, "the root", "claims", "array")?;
    let claim = items(root, claims, "claims")?;
    let claim = object_schema(root, claim, "claims[]")?;
    property(root, claim, "claims[]", "text", "string")?;
    let citations = property(root, claim, "claims[]", "citations", "array")?;
    let citation = items(root, citations, "claims[].citations")?;
    let citation = object_schema(root, citation, "claims[].citations[]")?;
    property(root, citation, "claims[].citations[]", "chunk_id", "string")?;
    property(root, citation, "claims[].citations[]", "quote", "string")?;
    Ok(())
}

/// Follows local `$ref`s (a bounded number of hops).
fn resolve<'a>(root: &'a Value, mut v: &'a Value) -> Result<&'a Value, String> {
    for _ in 0..32 {
        let Some(r) = v.get("$ref").and_then(Value::as_str) else {
            return Ok(v);
        };
        let Some(pointer) = r.strip_prefix('#') else {
            return Err(format!("the reference {r:?} is not local to the schema"));
        };
        v = root
            .pointer(pointer)
            .ok_or_else(|| format!("the reference {r:?} points to nothing"))?;
    }
    Err("its references form a cycle".to_string())
}

fn has_type(v: &Value, t: &str) -> bool {
    match v.get("type") {
        Some(Value::String(s)) => s == t,
        Some(Value::Array(a)) => a.len() == 1 && a[0].as_str() == Some(t),
        _ => false,
    }
}

fn object_schema<'a>(root: &'a Value, v: &'a Value, at: &str) -> Result<&'a Value, String> {
    let v = resolve(root, v)?;
    if has_type(v, "object") && v.get("properties").is_some_and(Value::is_object) {
        Ok(v)
    } else {
        Err(format!("{at} must be an object schema with properties"))
    }
}

fn items<'a>(root: &'a Value, array: &'a Value, at: &str) -> Result<&'a Value, String> {
    let items = array
        .get("items")
        .ok_or_else(|| format!("{at} must have `items`"))?;
    resolve(root, items)
}

/// The schema of the required property `name` of `object`, which must have
/// type `ty`.
fn property<'a>(
    root: &'a Value,
    object: &'a Value,
    at: &str,
    name: &str,
    ty: &str,
) -> Result<&'a Value, String> {
    let path = if at == "the root" {
        name.to_string()
    } else {
        format!("{at}.{name}")
    };
    let p = object
        .pointer(&format!("/properties/{name}"))
        .ok_or_else(|| format!("{path} is missing"))?;
    let p = resolve(root, p)?;
    if !has_type(p, ty) {
        return Err(format!("{path} must have type \"{ty}\""));
    }
    let required = object
        .get("required")
        .and_then(Value::as_array)
        .is_some_and(|r| r.iter().any(|n| n.as_str() == Some(name)));
    if !required {
        return Err(format!("{path} must be listed in `required`"));
    }
    Ok(p)
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
    /// Output token limit; [`SERVER_CHOOSES_MAX_TOKENS`] (`0`) sends none
    /// (see [`GenerationRequest::token_limit`]).
    pub max_tokens: u32,
    /// Sampling temperature; the provider's default when `None`.
    pub temperature: Option<f64>,
    /// Sentences the model may quote, best first (the embedded model's
    /// extractive mode); empty otherwise. Hosted providers ignore them.
    pub candidates: Vec<Candidate>,
    /// How the output spells its claims.
    pub form: AnswerForm,
    /// Answer only when the model's own probability of `"answerable":
    /// true` is at least this (the evidence gate; generators that can
    /// measure it apply it, the embedded model does). `None`: the model's
    /// likelier choice.
    pub min_p_answerable: Option<f32>,
}

/// Default output token limit of the request constructors, and of the
/// providers whose APIs require a limit and whose models' largest outputs
/// start at 4,096 tokens (Anthropic: Claude 3 Haiku; Bedrock: Claude 3, Nova
/// at 5,000).
pub const DEFAULT_MAX_TOKENS: u32 = 4096;

/// Default output token limit of OpenAI and Azure OpenAI: `max_completion_tokens`
/// counts a reasoning model's hidden reasoning tokens (o-series, gpt-5),
/// which need room beyond the answer; 16,384 is also the largest output of
/// gpt-4o and gpt-4o-mini, the oldest models with strict structured
/// outputs, so no model that can take the request rejects the limit.
pub const REASONING_DEFAULT_MAX_TOKENS: u32 = 16_384;

/// A [`GenerationRequest::max_tokens`] that sends no limit: the server
/// chooses. OpenAI-compatible servers then allow what their context leaves
/// after the prompt (vLLM, llama.cpp's server, Ollama, `groundcite
/// serve`), where any fixed limit is too large for some small-context
/// server. Only the Chat Completions client honours it (the default of
/// `openai-compatible`); APIs that require a limit never get it.
pub const SERVER_CHOOSES_MAX_TOKENS: u32 = 0;

impl GenerationRequest {
    /// The output limit to send: `None` when the server chooses
    /// ([`SERVER_CHOOSES_MAX_TOKENS`]).
    pub fn token_limit(&self) -> Option<u32> {
        (self.max_tokens != SERVER_CHOOSES_MAX_TOKENS).then_some(self.max_tokens)
    }

    /// The seed's structured request: [`prompt::SYSTEM_PROMPT`], the sources
    /// under `[chunk_id: …]` headers and the question, and the strict
    /// `GroundedAnswer` schema for `target`.
    pub fn grounded(chunks: &ChunkSet, question: &str, target: Target) -> GenerationRequest {
        GenerationRequest {
            system: prompt::SYSTEM_PROMPT.to_string(),
            user: prompt::user_prompt(chunks, question),
            schema: Some(ResponseSchema::grounded_answer(target)),
            chunks: Vec::new(),
            native_sources: NativeSources::Documents,
            max_tokens: DEFAULT_MAX_TOKENS,
            temperature: None,
            candidates: Vec::new(),
            form: AnswerForm::Grounded,
            min_p_answerable: None,
        }
    }

    /// [`GenerationRequest::grounded`] with `chunk_id` restricted to the
    /// chunks' IDs ([`ResponseSchema::grounded_answer_restricted`]).
    pub fn grounded_restricted(
        chunks: &ChunkSet,
        question: &str,
        target: Target,
    ) -> GenerationRequest {
        GenerationRequest {
            schema: Some(ResponseSchema::grounded_answer_restricted(target, chunks)),
            ..GenerationRequest::grounded(chunks, question, target)
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
            candidates: Vec::new(),
            form: AnswerForm::Grounded,
            min_p_answerable: None,
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
    /// An Amazon Bedrock Converse response with `citationsContent` blocks,
    /// as received, for [`groundcite_core::native::bedrock::convert_converse`].
    BedrockCitations(Value),
}

impl Output {
    /// Structured output, if `content` is usable: not blank, and
    /// syntactically JSON. Otherwise why not, and the partial output to keep
    /// in the trace (none when there is nothing). One rule for every adapter.
    pub(crate) fn json(content: String) -> Result<Output, (String, Option<String>)> {
        if content.trim().is_empty() {
            return Err(("the model returned no output".into(), None));
        }
        match serde_json::from_str::<serde::de::IgnoredAny>(&content) {
            Ok(_) => Ok(Output::Json(content)),
            Err(e) => Err((format!("the output is not valid JSON: {e}"), Some(content))),
        }
    }
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

/// Why a generation ended, as a trace records it (a failed one's:
/// [`StopReason::of_error`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopReason {
    /// The output is complete.
    Stop,
    /// The output token limit cut it off.
    Length,
    /// The model refused.
    Refusal,
    /// The provider's content filter stopped it.
    ContentFilter,
    /// The output is not a valid answer.
    InvalidOutput,
    /// The reader went away, or the provider call failed.
    Error,
}

impl StopReason {
    /// The name stored in traces.
    pub fn as_str(self) -> &'static str {
        match self {
            StopReason::Stop => "stop",
            StopReason::Length => "length",
            StopReason::Refusal => "refusal",
            StopReason::ContentFilter => "content_filter",
            StopReason::InvalidOutput => "invalid_output",
            StopReason::Error => "error",
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
    /// The model's own probability that the sources answer the question,
    /// where the generator measures it (the embedded model, at the
    /// `answerable` value the grammar puts first).
    pub p_answerable: Option<f64>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_built_in_schema_has_the_grounded_answer_shape() {
        for target in Target::ALL {
            let s = schema::grounded_answer_schema(Some(&["a#1".to_string()]));
            assert_eq!(grounded_answer_shape(&s), Ok(()), "{target}");
            let custom = ResponseSchema::custom_grounded_answer(s, target).unwrap();
            assert_eq!(custom.name, schema::SCHEMA_NAME);
        }
    }

    #[test]
    fn shape_errors_name_the_path() {
        let mut s = schema::grounded_answer_schema(None);
        s["$defs"]["Claim"]["required"] = json!(["citations"]);
        assert_eq!(
            grounded_answer_shape(&s).map_err(|e| e.to_string()),
            Err("claims[].text must be listed in `required`".into())
        );
        let mut s = schema::grounded_answer_schema(None);
        s["properties"]["claims"]["items"] = json!({"$ref": "#/$defs/Nothing"});
        assert_eq!(
            grounded_answer_shape(&s).map_err(|e| e.to_string()),
            Err("the reference \"#/$defs/Nothing\" points to nothing".into())
        );
        let mut s = schema::grounded_answer_schema(None);
        s["$defs"]["Claim"]["properties"]["text"] =
            json!({"$ref": "#/$defs/Claim/properties/text"});
        assert_eq!(
            grounded_answer_shape(&s).map_err(|e| e.to_string()),
            Err("its references form a cycle".into())
        );
        assert_eq!(
            grounded_answer_shape(&json!(true)).map_err(|e| e.to_string()),
            Err("the root must be an object schema with properties".into())
        );
    }

    #[test]
    fn custom_names_come_from_a_valid_title() {
        let mut s = schema::grounded_answer_schema(None);
        s["title"] = json!("SupportAnswer");
        let c = ResponseSchema::custom_grounded_answer(s.clone(), Target::OpenAi).unwrap();
        assert_eq!(c.name, "SupportAnswer");
        s["title"] = json!("Support answer");
        let c = ResponseSchema::custom_grounded_answer(s, Target::OpenAi).unwrap();
        assert_eq!(c.name, schema::SCHEMA_NAME);
    }
}

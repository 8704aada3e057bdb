//! What a trace is, and how it maps to columns.

use jiff::Timestamp;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::chunks::{ChunkRef, TraceChunks};
use crate::error::StoreError;
use crate::options::{Timings, TraceOptions};
use crate::text::JsonText;

/// One recorded request: everything needed to show what happened and to
/// re-verify the answer later (same chunks, same raw output, same options).
///
/// Round-trips exactly through [`Store::insert`](crate::Store::insert) and
/// [`Store::get`](crate::Store::get), with one documented loss:
/// `created_at` is stored at millisecond precision (finer digits are
/// dropped; [`TraceRecord::new`] already truncates).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TraceRecord {
    /// Caller-chosen unique id, typically a UUID v7 string: 1 to 128
    /// characters of `[A-Za-z0-9._:-]`.
    pub trace_id: String,
    /// When the request was received (kept to the millisecond).
    pub created_at: Timestamp,
    /// Tenant that owns the trace; `None` for single-tenant use.
    pub tenant: Option<String>,
    /// What kind of request: `"ask"`, `"answer"`, `"verify"`, …. Non-empty.
    pub kind: String,
    /// The user's question, if there was one.
    pub question: Option<String>,
    /// The chunks as given to the prompt, each as its JSON text.
    pub chunks: TraceChunks,
    /// The prompt sent to the model (system and user messages).
    pub prompt: Option<Value>,
    /// Hash of the strict output schema the model was held to.
    pub schema_hash: Option<String>,
    /// The model's raw output, exactly as received.
    pub raw_output: Option<String>,
    /// The contract v1 payload that was returned, as the JSON text sent.
    pub contract: Option<JsonText>,
    /// Warning codes raised while verifying.
    pub warnings: Vec<String>,
    /// Provider name (`"openai"`, `"anthropic"`, `"local"`, …).
    pub provider: Option<String>,
    /// Model name as the provider reported it.
    pub model: Option<String>,
    /// The provider's request id, for support tickets.
    pub provider_request_id: Option<String>,
    /// Whatever re-verification needs: match profile, claim policy, …
    /// (stored as a JSON object; unknown keys are kept).
    pub options: TraceOptions,
    /// Stage timings in float milliseconds, e.g.
    /// `{"retrieve_ms": 12.0, "generate_ms": 840.5}`.
    pub timings: Timings,
    /// The provider error, already redacted (code and message).
    pub error: Option<Value>,
    /// Why the generation ended (`stop`, `length`, `repeat`, `refusal`,
    /// `content_filter`, `invalid_output`, `error`); `None` when no model
    /// was called.
    pub stop_reason: Option<String>,
    /// Prompt tokens, when known.
    pub input_tokens: Option<u64>,
    /// Output tokens (of a failed or truncated generation too), when known.
    pub output_tokens: Option<u64>,
    /// How the raw output spells its claims (`grounded`, or `extractive`:
    /// each claim's text is its quotes); `None` reads as `grounded`.
    pub answer_form: Option<String>,
}

impl TraceRecord {
    /// A record with the given id and kind, `created_at` now (truncated to
    /// the millisecond, as stored), empty `chunks` (`[]`), empty `options`
    /// and `timings` (`{}`), and every optional field `None`.
    pub fn new(trace_id: impl Into<String>, kind: impl Into<String>) -> Self {
        let now = Timestamp::now();
        TraceRecord {
            trace_id: trace_id.into(),
            // A timestamp's own millisecond count is always in range, so
            // this never falls back.
            created_at: Timestamp::from_millisecond(now.as_millisecond()).unwrap_or(now),
            tenant: None,
            kind: kind.into(),
            question: None,
            chunks: TraceChunks::new(),
            prompt: None,
            schema_hash: None,
            raw_output: None,
            contract: None,
            warnings: Vec::new(),
            provider: None,
            model: None,
            provider_request_id: None,
            options: TraceOptions::default(),
            timings: Timings::default(),
            error: None,
            stop_reason: None,
            input_tokens: None,
            output_tokens: None,
            answer_form: None,
        }
    }

    /// Whether the contract says the question was answerable, when there is
    /// a contract with a boolean `answerable`.
    pub fn answerable(&self) -> Option<bool> {
        /// The one field looked at; the rest is skipped, not built.
        #[derive(Deserialize)]
        struct Head {
            answerable: Option<bool>,
        }
        let contract = self.contract.as_ref()?;
        // Only an object has fields (serde would also read `Head` from an array).
        if !contract.as_str().trim_start().starts_with('{') {
            return None;
        }
        contract.parse::<Head>().ok()?.answerable
    }
}

/// One line of [`Store::list_recent`](crate::Store::list_recent): enough to
/// pick a trace, without its payloads.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TraceSummary {
    /// The trace's id.
    pub trace_id: String,
    /// When the request was received.
    pub created_at: Timestamp,
    /// Tenant that owns the trace.
    pub tenant: Option<String>,
    /// What kind of request.
    pub kind: String,
    /// The user's question, if there was one.
    pub question: Option<String>,
    /// Provider name.
    pub provider: Option<String>,
    /// Model name.
    pub model: Option<String>,
    /// The contract's `answerable`, when the trace has a contract.
    pub answerable: Option<bool>,
}

pub use groundcite_core::MAX_TRACE_ID_LEN;

/// Checks `trace_id` with the one rule ([`groundcite_core::validate_trace_id`]:
/// 1 to [`MAX_TRACE_ID_LEN`] characters of `[A-Za-z0-9._:-]`), as a
/// [`StoreError::InvalidTraceId`].
pub(crate) fn check_trace_id(trace_id: &str) -> Result<(), StoreError> {
    groundcite_core::validate_trace_id(trace_id).map_err(|_| {
        // Keep the error small however long the input was.
        StoreError::InvalidTraceId(trace_id.chars().take(MAX_TRACE_ID_LEN + 1).collect())
    })
}

/// A record turned into column values, shared by both backends.
///
/// Column types: JSON values are stored as their serialized text (TEXT in
/// both backends, so key order and number spelling come back exactly);
/// `question` and `raw_output` are stored as the bytes of their UTF-8
/// (BLOB / BYTEA), so any string round-trips, NUL included, which a
/// PostgreSQL TEXT column would reject. Chunks are not in the row: the
/// store puts them in chunk packs and fills `chunk_refs` (the `chunks`
/// column stays empty; it holds the chunks of rows from before packs).
pub(crate) struct Columns<'a> {
    pub trace_id: &'a str,
    pub created_at_ms: i64,
    pub tenant: Option<&'a str>,
    pub kind: &'a str,
    pub question: Option<&'a [u8]>,
    pub chunks: &'static str,
    pub prompt: Option<String>,
    pub schema_hash: Option<&'a str>,
    pub raw_output: Option<&'a [u8]>,
    pub contract: Option<&'a str>,
    pub warnings: String,
    pub provider: Option<&'a str>,
    pub model: Option<&'a str>,
    pub provider_request_id: Option<&'a str>,
    pub options: String,
    pub timings: String,
    pub error: Option<String>,
    pub stop_reason: Option<&'a str>,
    pub input_tokens: Option<i64>,
    pub output_tokens: Option<i64>,
    pub answer_form: Option<&'a str>,
    pub answerable: Option<bool>,
    /// Encoded [`ChunkRef`]s, one per chunk in order; filled by the store.
    pub chunk_refs: Vec<u8>,
    /// Each chunk's text, in order.
    pub chunk_texts: Vec<&'a str>,
    /// Until when the packs this record uses must be kept: the later of
    /// now and `created_at`, in milliseconds.
    pub keep_ms: i64,
}

/// Rejects NUL in a text column (PostgreSQL cannot store it; rejected on
/// both backends so SQLite tests catch what production would).
fn check_text(field: &'static str, value: Option<&str>) -> Result<(), StoreError> {
    if value.is_some_and(|v| v.contains('\0')) {
        return Err(StoreError::InvalidRecord {
            field,
            reason: "contains a NUL character",
        });
    }
    Ok(())
}

impl<'a> Columns<'a> {
    /// Validates `record` and encodes it.
    pub(crate) fn encode(record: &'a TraceRecord) -> Result<Self, StoreError> {
        check_trace_id(&record.trace_id)?;
        if record.kind.is_empty() {
            return Err(StoreError::InvalidRecord {
                field: "kind",
                reason: "is empty",
            });
        }
        check_text("kind", Some(&record.kind))?;
        check_text("tenant", record.tenant.as_deref())?;
        check_text("schema_hash", record.schema_hash.as_deref())?;
        check_text("provider", record.provider.as_deref())?;
        check_text("model", record.model.as_deref())?;
        check_text("provider_request_id", record.provider_request_id.as_deref())?;
        check_text("stop_reason", record.stop_reason.as_deref())?;
        check_text("answer_form", record.answer_form.as_deref())?;
        let tokens = |field: &'static str, v: Option<u64>| -> Result<Option<i64>, StoreError> {
            v.map(|n| {
                i64::try_from(n).map_err(|_| StoreError::InvalidRecord {
                    field,
                    reason: "is larger than a 64-bit signed integer",
                })
            })
            .transpose()
        };
        // Serializing a `Value` or a `Vec<String>` cannot fail (string keys,
        // no custom serializers); JSON escapes NUL as \u0000.
        let json = |value: &Value| value.to_string();
        Ok(Columns {
            trace_id: &record.trace_id,
            created_at_ms: record.created_at.as_millisecond(),
            tenant: record.tenant.as_deref(),
            kind: &record.kind,
            question: record.question.as_deref().map(str::as_bytes),
            chunks: "",
            prompt: record.prompt.as_ref().map(json),
            schema_hash: record.schema_hash.as_deref(),
            raw_output: record.raw_output.as_deref().map(str::as_bytes),
            contract: record.contract.as_ref().map(JsonText::as_str),
            warnings: json(&Value::from(record.warnings.clone())),
            provider: record.provider.as_deref(),
            model: record.model.as_deref(),
            provider_request_id: record.provider_request_id.as_deref(),
            options: record.options.to_value().to_string(),
            timings: record.timings.to_value().to_string(),
            error: record.error.as_ref().map(json),
            stop_reason: record.stop_reason.as_deref(),
            input_tokens: tokens("input_tokens", record.input_tokens)?,
            output_tokens: tokens("output_tokens", record.output_tokens)?,
            answer_form: record.answer_form.as_deref(),
            answerable: record.answerable(),
            chunk_refs: Vec::with_capacity(record.chunks.len() * ChunkRef::LEN),
            chunk_texts: record.chunks.texts().collect(),
            keep_ms: record
                .created_at
                .as_millisecond()
                .max(Timestamp::now().as_millisecond()),
        })
    }
}

/// A full row as read back, before decoding.
pub(crate) struct StoredRow {
    pub trace_id: String,
    pub created_at_ms: i64,
    pub tenant: Option<String>,
    pub kind: String,
    pub question: Option<Vec<u8>>,
    pub chunks: String,
    pub chunk_refs: Option<Vec<u8>>,
    pub prompt: Option<String>,
    pub schema_hash: Option<String>,
    pub raw_output: Option<Vec<u8>>,
    pub contract: Option<String>,
    pub warnings: String,
    pub provider: Option<String>,
    pub model: Option<String>,
    pub provider_request_id: Option<String>,
    pub options: String,
    pub timings: String,
    pub error: Option<String>,
    pub stop_reason: Option<String>,
    pub input_tokens: Option<i64>,
    pub output_tokens: Option<i64>,
    pub answer_form: Option<String>,
}

/// A summary row as read back, before decoding.
pub(crate) struct SummaryRow {
    pub trace_id: String,
    pub created_at_ms: i64,
    pub tenant: Option<String>,
    pub kind: String,
    pub question: Option<Vec<u8>>,
    pub provider: Option<String>,
    pub model: Option<String>,
    pub answerable: Option<bool>,
}

fn corrupt(trace_id: &str, column: &str, why: impl std::fmt::Display) -> StoreError {
    StoreError::Corrupt {
        trace_id: trace_id.to_owned(),
        reason: format!("column {column}: {why}"),
    }
}

fn timestamp(trace_id: &str, ms: i64) -> Result<Timestamp, StoreError> {
    Timestamp::from_millisecond(ms).map_err(|e| corrupt(trace_id, "created_at_ms", e))
}

fn text(
    trace_id: &str,
    column: &str,
    bytes: Option<Vec<u8>>,
) -> Result<Option<String>, StoreError> {
    bytes
        .map(|b| String::from_utf8(b).map_err(|e| corrupt(trace_id, column, e)))
        .transpose()
}

fn count(trace_id: &str, column: &str, v: Option<i64>) -> Result<Option<u64>, StoreError> {
    v.map(|n| u64::try_from(n).map_err(|e| corrupt(trace_id, column, e)))
        .transpose()
}

fn json<T: serde::de::DeserializeOwned>(
    trace_id: &str,
    column: &str,
    s: &str,
) -> Result<T, StoreError> {
    serde_json::from_str(s).map_err(|e| corrupt(trace_id, column, e))
}

impl StoredRow {
    /// Where the row's chunks are stored, in order; `None` for a row from
    /// before chunk packs (its chunks are in the `chunks` column).
    pub(crate) fn chunk_refs(&self) -> Result<Option<Vec<ChunkRef>>, StoreError> {
        let Some(bytes) = &self.chunk_refs else {
            return Ok(None);
        };
        ChunkRef::decode_all(bytes).map(Some).ok_or_else(|| {
            corrupt(
                &self.trace_id,
                "chunk_refs",
                format_args!("{} bytes, not a multiple of {}", bytes.len(), ChunkRef::LEN),
            )
        })
    }

    /// Decodes the row back into the record that was inserted; `chunks`
    /// are the row's chunks read from their packs, or `None` to read them
    /// from the `chunks` column.
    pub(crate) fn decode(self, chunks: Option<TraceChunks>) -> Result<TraceRecord, StoreError> {
        let id = self.trace_id.as_str();
        let chunks = match chunks {
            Some(chunks) => chunks,
            None => TraceChunks::from_raw(json(id, "chunks", &self.chunks)?),
        };
        let opt_json = |column: &str, s: Option<String>| -> Result<Option<Value>, StoreError> {
            s.map(|s| json(id, column, &s)).transpose()
        };
        Ok(TraceRecord {
            created_at: timestamp(id, self.created_at_ms)?,
            question: text(id, "question", self.question)?,
            chunks,
            prompt: opt_json("prompt", self.prompt)?,
            raw_output: text(id, "raw_output", self.raw_output)?,
            contract: self
                .contract
                .map(|text| JsonText::parse_text(text).map_err(|e| corrupt(id, "contract", e)))
                .transpose()?,
            warnings: json(id, "warnings", &self.warnings)?,
            options: json(id, "options", &self.options)?,
            timings: json(id, "timings", &self.timings)?,
            error: opt_json("error", self.error)?,
            tenant: self.tenant,
            kind: self.kind,
            schema_hash: self.schema_hash,
            provider: self.provider,
            model: self.model,
            provider_request_id: self.provider_request_id,
            stop_reason: self.stop_reason,
            input_tokens: count(id, "input_tokens", self.input_tokens)?,
            output_tokens: count(id, "output_tokens", self.output_tokens)?,
            answer_form: self.answer_form,
            trace_id: self.trace_id,
        })
    }
}

impl SummaryRow {
    /// Decodes the row.
    pub(crate) fn decode(self) -> Result<TraceSummary, StoreError> {
        Ok(TraceSummary {
            created_at: timestamp(&self.trace_id, self.created_at_ms)?,
            question: text(&self.trace_id, "question", self.question)?,
            trace_id: self.trace_id,
            tenant: self.tenant,
            kind: self.kind,
            provider: self.provider,
            model: self.model,
            answerable: self.answerable,
        })
    }
}

/// The trace's `schema_hash` of a JSON schema's text: `sha256:` and the
/// digest in lower-case hex. One rule for every trace that sent a schema.
pub fn schema_hash(schema: &str) -> String {
    use sha2::{Digest, Sha256};
    let digest = Sha256::digest(schema.as_bytes());
    let mut out = String::with_capacity(7 + 64);
    out.push_str("sha256:");
    for b in digest {
        out.push_str(&format!("{b:02x}"));
    }
    out
}

#[cfg(test)]
mod tests {

    #[test]
    fn the_schema_hash_is_sha256_in_hex() {
        assert_eq!(
            schema_hash(""),
            "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
        assert_ne!(schema_hash("{}"), schema_hash("{ }"));
    }

    use super::*;

    #[test]
    fn trace_ids() {
        for ok in [
            "a",
            "0190b6b0-7c1e-7f3a-9d2e-1234567890ab",
            "t1:42",
            "A.b_c-d",
            &"x".repeat(128),
        ] {
            assert!(check_trace_id(ok).is_ok(), "{ok}");
        }
        for bad in ["", " ", "a b", "a/b", "é", "a\0", "a\n", &"x".repeat(129)] {
            assert!(
                matches!(check_trace_id(bad), Err(StoreError::InvalidTraceId(_))),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn new_truncates_to_the_millisecond() {
        let record = TraceRecord::new("t", "ask");
        assert_eq!(record.created_at.subsec_nanosecond() % 1_000_000, 0);
    }

    #[test]
    fn answerable_comes_from_the_contract() {
        let mut record = TraceRecord::new("t", "ask");
        assert_eq!(record.answerable(), None);
        record.contract = Some(JsonText::from_value(
            &serde_json::json!({"answerable": false}),
        ));
        assert_eq!(record.answerable(), Some(false));
        record.contract = Some(JsonText::from_value(
            &serde_json::json!({"answerable": "no"}),
        ));
        assert_eq!(record.answerable(), None);
        record.contract = Some(JsonText::from_value(&serde_json::json!([true])));
        assert_eq!(record.answerable(), None);
    }
}

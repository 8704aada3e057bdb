//! One way to shape a trace: the [`TraceBuilder`] every writer (the ask
//! pipeline, the service's routes, the CLI) uses, so the same request is
//! recorded the same way wherever it is handled.

use groundcite_core::Chunk;
use serde_json::Value;

use crate::chunks::TraceChunks;
use crate::options::{Timings, TraceOptions};
use crate::record::TraceRecord;
use crate::text::JsonText;

/// Builds a [`TraceRecord`]: the one place a trace is shaped.
///
/// ```
/// use groundcite_store::{TraceBuilder, TraceOptions, Timings};
/// use std::time::Duration;
///
/// let record = TraceBuilder::new("t-1", "verify")
///     .question(Some("How long do refunds take?".into()))
///     .provider("client")
///     .options(TraceOptions { stream: Some(false), ..TraceOptions::default() })
///     .timings(Timings::total(Duration::from_millis(3)))
///     .build();
/// assert_eq!(record.options.stream, Some(false));
/// assert_eq!(record.timings.total_ms, Some(3.0));
/// ```
#[derive(Debug, Clone)]
#[must_use]
pub struct TraceBuilder {
    record: TraceRecord,
}

impl TraceBuilder {
    /// A trace of `kind` under `trace_id`, created now (see [`TraceRecord::new`]).
    pub fn new(trace_id: impl Into<String>, kind: impl Into<String>) -> Self {
        TraceBuilder {
            record: TraceRecord::new(trace_id, kind),
        }
    }

    /// The tenant that owns it.
    pub fn tenant(mut self, tenant: Option<String>) -> Self {
        self.record.tenant = tenant;
        self
    }

    /// The user's question.
    pub fn question(mut self, question: Option<String>) -> Self {
        self.record.question = question;
        self
    }

    /// The chunks as given to the prompt.
    pub fn chunks<'a>(mut self, chunks: impl IntoIterator<Item = &'a Chunk>) -> Self {
        self.record.chunks = TraceChunks::from_chunks(chunks);
        self
    }

    /// The prompt (`{"system", "user"}`) and the hash of the output
    /// schema it was held to ([`schema_hash`](crate::schema_hash)), when
    /// there was one.
    pub fn prompt(mut self, system: &str, user: &str, schema: Option<&Value>) -> Self {
        self.record.prompt = Some(serde_json::json!({"system": system, "user": user}));
        self.record.schema_hash = schema.map(|s| crate::schema_hash(&s.to_string()));
        self
    }

    /// The model's raw output, exactly as received.
    pub fn raw_output(mut self, raw: Option<String>) -> Self {
        self.record.raw_output = raw;
        self
    }

    /// The contract returned, as the JSON text sent.
    pub fn contract(mut self, contract: Option<JsonText>) -> Self {
        self.record.contract = contract;
        self
    }

    /// Warning codes raised while verifying.
    pub fn warnings(mut self, warnings: Vec<String>) -> Self {
        self.record.warnings = warnings;
        self
    }

    /// The provider's name.
    pub fn provider(mut self, provider: impl Into<String>) -> Self {
        self.record.provider = Some(provider.into());
        self
    }

    /// The model's name as the provider reported it.
    pub fn model(mut self, model: Option<String>) -> Self {
        self.record.model = model;
        self
    }

    /// The provider's request id.
    pub fn provider_request_id(mut self, id: Option<String>) -> Self {
        self.record.provider_request_id = id;
        self
    }

    /// Why the generation ended.
    pub fn stop_reason(mut self, reason: Option<String>) -> Self {
        self.record.stop_reason = reason;
        self
    }

    /// Prompt and output token counts, when known.
    pub fn tokens(mut self, input: Option<u64>, output: Option<u64>) -> Self {
        self.record.input_tokens = input;
        self.record.output_tokens = output;
        self
    }

    /// How the raw output spells its claims (`grounded`, `extractive`,
    /// `prose`, a native format's name).
    pub fn answer_form(mut self, form: Option<String>) -> Self {
        self.record.answer_form = form;
        self
    }

    /// Options, merged into those already set (the later value wins).
    pub fn options(mut self, options: TraceOptions) -> Self {
        self.record.options.merge(options);
        self
    }

    /// Timings, merged into those already set (the later value wins).
    pub fn timings(mut self, timings: Timings) -> Self {
        self.record.timings.merge(timings);
        self
    }

    /// The provider error, already redacted.
    pub fn error(mut self, error: Option<Value>) -> Self {
        self.record.error = error;
        self
    }

    /// The record so far.
    pub fn record(&self) -> &TraceRecord {
        &self.record
    }

    /// The record.
    pub fn build(self) -> TraceRecord {
        self.record
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::time::Duration;

    use groundcite_core::{ClaimPolicy, MatchProfile};
    use serde_json::json;

    use super::*;

    #[test]
    fn every_key_written_today_reads_typed_and_unknown_keys_are_kept() {
        let stored = json!({
            "match": "lenient", "claims": "strict", "top_k": 8, "candidates": 24,
            "gate": {"mode": "evidence"}, "signals": {"top": 0.5},
            "gate_verdict": {"verdict": "pass"}, "p_answerable": 0.75,
            "stream": true, "max_tokens": 512, "temperature": null,
            "requested_model": "gpt-4o", "from": "anthropic", "request": {"x": 1},
            "quotes": "verbatim", "docs": "/srv/docs", "someday": [1, 2],
        });
        let o: TraceOptions = serde_json::from_value(stored.clone()).unwrap();
        assert_eq!(o.profile, Some(MatchProfile::Lenient));
        assert_eq!(o.policy, Some(ClaimPolicy::Strict));
        assert_eq!(o.top_k, Some(8));
        assert_eq!(o.candidates, Some(24));
        assert_eq!(o.gate_verdict, Some(json!({"verdict": "pass"})));
        assert_eq!(o.p_answerable, Some(0.75));
        assert_eq!(o.stream, Some(true));
        assert_eq!(o.max_tokens, Some(512));
        assert_eq!(o.temperature, None);
        assert_eq!(o.requested_model.as_deref(), Some("gpt-4o"));
        assert_eq!(o.from.as_deref(), Some("anthropic"));
        assert_eq!(o.request, Some(json!({"x": 1})));
        assert_eq!(o.docs.as_deref(), Some("/srv/docs"));
        assert_eq!(o.extra.get("someday"), Some(&json!([1, 2])));
        // Written back: the same object, less the null.
        let mut expected = stored;
        expected.as_object_mut().unwrap().remove("temperature");
        assert_eq!(o.to_value(), expected);
    }

    #[test]
    fn a_value_that_does_not_fit_its_field_is_kept_as_it_was() {
        let o: TraceOptions =
            serde_json::from_value(json!({"match": "fuzzy", "top_k": -1})).unwrap();
        assert_eq!(o.profile, None);
        assert_eq!(o.extra.get("match"), Some(&json!("fuzzy")));
        assert_eq!(o.to_value(), json!({"match": "fuzzy", "top_k": -1}));
        let o: TraceOptions = serde_json::from_value(json!(null)).unwrap();
        assert!(o.is_empty());
    }

    #[test]
    fn timings_read_whole_and_fractional_milliseconds() {
        let t: Timings = serde_json::from_str(
            r#"{"retrieve_ms": 12, "generate_ms": 840.5, "total_ms": 900, "input_tokens": 10, "verify_ms": 1.5}"#,
        )
        .unwrap();
        assert_eq!(t.retrieve_ms, Some(12.0));
        assert_eq!(t.generate_ms, Some(840.5));
        assert_eq!(t.total_ms, Some(900.0));
        assert_eq!(t.input_tokens, Some(10));
        assert_eq!(t.extra.get("verify_ms"), Some(&json!(1.5)));
        assert_eq!(Timings::millis(Duration::from_micros(1500)), 1.5);
    }

    #[test]
    fn merging_lets_the_later_value_win() {
        let mut o = TraceOptions {
            stream: Some(false),
            top_k: Some(4),
            ..TraceOptions::default()
        };
        o.merge(TraceOptions {
            stream: Some(true),
            docs: Some("d".into()),
            ..TraceOptions::default()
        });
        assert_eq!(
            o.to_value(),
            json!({"stream": true, "top_k": 4, "docs": "d"})
        );
    }

    #[test]
    fn the_builder_sets_the_prompt_and_its_schema_hash() {
        let schema = json!({"type": "object"});
        let r = TraceBuilder::new("t", "answer")
            .prompt("sys", "user", Some(&schema))
            .timings(Timings {
                generate_ms: Some(1.0),
                ..Timings::default()
            })
            .timings(Timings::total(Duration::from_millis(2)))
            .build();
        assert_eq!(r.prompt, Some(json!({"system": "sys", "user": "user"})));
        assert_eq!(r.schema_hash, Some(crate::schema_hash(&schema.to_string())));
        assert_eq!(
            r.timings.to_value(),
            json!({"generate_ms": 1.0, "total_ms": 2.0})
        );
    }
}

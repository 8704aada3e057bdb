//! One way to shape a trace: typed [`TraceOptions`] and [`Timings`], and
//! the [`TraceBuilder`] every writer (the ask pipeline, the service's
//! routes, the CLI) uses, so the same request is recorded the same way
//! wherever it is handled.

use std::fmt;
use std::time::Duration;

use groundcite_core::{Chunk, ClaimPolicy, MatchProfile};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::chunks::TraceChunks;
use crate::record::TraceRecord;
use crate::text::JsonText;

/// A struct of optional typed fields, each under its JSON key, plus
/// `extra` for every other key.
///
/// Reading never fails on an object: a key whose value does not fit its
/// field (a trace written by another version) is kept in `extra` under
/// its own name, so nothing stored is lost and it is written back as it
/// was. `null` reads as absent. A non-object reads as empty.
macro_rules! lenient_struct {
    (
        $(#[$meta:meta])*
        pub struct $name:ident {
            $( $(#[$doc:meta])* $field:ident : $ty:ty = $key:literal, )*
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
        #[serde(from = "Value")]
        pub struct $name {
            $(
                $(#[$doc])*
                #[serde(rename = $key, skip_serializing_if = "Option::is_none")]
                pub $field: Option<$ty>,
            )*
            /// Every other key, in the order stored.
            #[serde(flatten)]
            pub extra: Map<String, Value>,
        }

        impl From<Value> for $name {
            fn from(value: Value) -> Self {
                let Value::Object(mut map) = value else {
                    return $name::default();
                };
                let mut out = $name::default();
                $(
                    // Left in place when it does not read, so the other
                    // keys keep their order (`shift_remove`, not a swap).
                    let typed = match map.get($key) {
                        None | Some(Value::Null) => Ok(None),
                        Some(v) => serde_json::from_value::<$ty>(v.clone()).map(Some),
                    };
                    if let Ok(typed) = typed {
                        map.shift_remove($key);
                        out.$field = typed;
                    }
                )*
                out.extra = map;
                out
            }
        }

        impl $name {
            /// Sets every field `other` sets (its value wins) and adds its
            /// extra keys.
            pub fn merge(&mut self, other: $name) {
                $(
                    if other.$field.is_some() {
                        // The typed value replaces one kept as unreadable.
                        self.extra.shift_remove($key);
                        self.$field = other.$field;
                    }
                )*
                self.extra.extend(other.extra);
            }

            /// The JSON object, as stored.
            pub fn to_value(&self) -> Value {
                // Typed fields and string keys: serializing cannot fail.
                serde_json::to_value(self).unwrap_or_else(|_| Value::Object(Map::new()))
            }

            /// Whether nothing is set.
            pub fn is_empty(&self) -> bool {
                true $(&& self.$field.is_none())* && self.extra.is_empty()
            }
        }

        /// The JSON text, as stored (what `trace show` prints).
        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::Display::fmt(&self.to_value(), f)
            }
        }
    };
}

lenient_struct! {
    /// What re-verification needs and what explains a trace: the settings
    /// the request ran with. Every writer's keys, one place; JSON keys are
    /// the ones traces have always had (`match`, `claims`, …).
    pub struct TraceOptions {
        /// The matching profile quotes were checked with (`match`).
        profile: MatchProfile = "match",
        /// The claim policy (`claims`).
        policy: ClaimPolicy = "claims",
        /// Whether the answer was streamed.
        stream: bool = "stream",
        /// The output token limit sent to the model.
        max_tokens: u32 = "max_tokens",
        /// The sampling temperature sent, when one was.
        temperature: f64 = "temperature",
        /// The model the client asked for (`/v1/chat/completions`).
        requested_model: String = "requested_model",
        /// Chunks retrieved (`ask`).
        top_k: usize = "top_k",
        /// Candidate sentences offered to the model (`ask`).
        candidates: usize = "candidates",
        /// The relevance gate's settings (`ask`).
        gate: Value = "gate",
        /// What the gate read (`ask`).
        signals: Value = "signals",
        /// The gate's verdict (`ask`).
        gate_verdict: Value = "gate_verdict",
        /// The model's own probability that the question is answerable.
        p_answerable: f64 = "p_answerable",
        /// The native citation format converted from (`convert`).
        from: String = "from",
        /// The request sent to the provider (`convert`), when given.
        request: Value = "request",
        /// How quotes were produced by the embedded model (`ask`).
        quotes: String = "quotes",
        /// The corpus directory (`ask`).
        docs: String = "docs",
    }
}

lenient_struct! {
    /// Stage timings, all in **milliseconds as floats** (fractions kept):
    /// `retrieve_ms`, `generate_ms`, `total_ms`. Traces written before this
    /// type hold whole milliseconds in some keys; they read the same.
    ///
    /// `input_tokens` and `output_tokens` are counts, not times: they were
    /// recorded here before the record had its own fields
    /// ([`TraceRecord::input_tokens`]); they stay for the trace page.
    pub struct Timings {
        /// Searching and ranking.
        retrieve_ms: f64 = "retrieve_ms",
        /// Generating and verifying.
        generate_ms: f64 = "generate_ms",
        /// The whole request, as the caller saw it.
        total_ms: f64 = "total_ms",
        /// Prompt tokens (a copy of the record's `input_tokens`).
        input_tokens: u64 = "input_tokens",
        /// Output tokens (a copy of the record's `output_tokens`).
        output_tokens: u64 = "output_tokens",
    }
}

impl Timings {
    /// `d` in the unit of every timing: float milliseconds.
    pub fn millis(d: Duration) -> f64 {
        d.as_secs_f64() * 1000.0
    }

    /// Only `total_ms`, of `d`.
    pub fn total(d: Duration) -> Timings {
        Timings {
            total_ms: Some(Timings::millis(d)),
            ..Timings::default()
        }
    }
}

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

//! What a trace records beyond its payloads: typed [`TraceOptions`] (what
//! re-verification and explanation need) and [`Timings`] (float
//! milliseconds), each readable from any JSON a trace ever stored.

use std::fmt;
use std::time::Duration;

use groundcite_core::{ClaimPolicy, MatchProfile};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

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

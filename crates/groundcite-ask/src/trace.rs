//! The run as a trace record (through `groundcite_store::TraceBuilder`).

use groundcite_providers::pipeline::Answered;
use groundcite_providers::{ProviderError, StopReason};
use groundcite_store::{Timings, TraceBuilder, TraceOptions, TraceRecord};
use serde::Serialize;
use serde_json::Value;

use crate::answer::Asked;
use crate::retrieve::Retrieval;
use crate::settings::AskSettings;

/// The trace's record of the gate: its settings, what it read and its
/// verdict, with the match profile and claim policy.
pub fn gate_options(retrieval: &Retrieval, settings: &AskSettings) -> TraceOptions {
    TraceOptions {
        profile: Some(settings.profile),
        policy: Some(settings.policy),
        top_k: Some(settings.top_k),
        candidates: Some(settings.candidates),
        gate: Some(to_value(&retrieval.gate)),
        signals: Some(to_value(&retrieval.signals)),
        gate_verdict: Some(to_value(&retrieval.verdict)),
        ..TraceOptions::default()
    }
}

/// Plain data with string keys as JSON (serializing it cannot fail).
pub(crate) fn to_value<T: Serialize>(v: &T) -> Value {
    serde_json::to_value(v).unwrap_or(Value::Null)
}

impl Asked {
    /// The trace of this run under `trace_id`: question, chunks, prompt,
    /// schema hash, raw output, stop reason and token counts, contract,
    /// warnings, provider, model, request id, options (the gate's inputs
    /// and verdict, so the answer can be re-verified and explained) and
    /// timings (`retrieve_ms`, `generate_ms`; the caller adds `total_ms`).
    /// `extra_options` are merged into `options` (theirs win).
    pub fn trace_record(
        &self,
        trace_id: &str,
        kind: &str,
        question: &str,
        settings: &AskSettings,
        extra_options: TraceOptions,
    ) -> TraceRecord {
        let mut b = TraceBuilder::new(trace_id, kind)
            .question(Some(question.to_string()))
            .chunks(self.retrieval.chunks.chunks());
        if let Some(request) = &self.request {
            b = b
                .prompt(
                    &request.system,
                    &request.user,
                    request.schema.as_ref().map(|s| &s.schema),
                )
                .answer_form(Some(request.form.as_str().to_string()));
        }
        b = b.provider(self.provider.clone());
        let mut timings = Timings {
            retrieve_ms: Some(Timings::millis(self.retrieval.time)),
            generate_ms: Some(Timings::millis(self.generate_time)),
            ..Timings::default()
        };
        let mut options = gate_options(&self.retrieval, settings);
        if let Some(a) = &self.answered {
            b = record_outcome(b, a);
            options.p_answerable = a.p_answerable;
            if let Some(u) = &a.usage {
                timings.input_tokens = u.input_tokens;
                timings.output_tokens = u.output_tokens;
            }
        }
        options.merge(extra_options);
        b.options(options)
            .timings(timings)
            .warnings(
                self.contract
                    .warnings
                    .iter()
                    .map(|w| w.code.as_str().to_string())
                    .collect(),
            )
            .contract(groundcite_store::JsonText::serialize(&self.contract).ok())
            .build()
    }
}

/// A generation that failed outright (network, credentials, retries
/// exhausted), for [`Retrieval::failed_trace_record`].
#[derive(Debug)]
pub struct Failure<'a> {
    /// The provider's name.
    pub provider: &'a str,
    /// The error.
    pub error: &'a ProviderError,
    /// Output received before the failure.
    pub raw_output: Option<String>,
}

impl Retrieval {
    /// The trace of a generation that failed outright: the question, the
    /// chunks, what arrived before the failure, the stop reason, the token
    /// counts, the error, the gate's options (with `extra_options` merged,
    /// theirs win) and `retrieve_ms` (the caller adds `total_ms`).
    pub fn failed_trace_record(
        &self,
        trace_id: &str,
        kind: &str,
        question: &str,
        settings: &AskSettings,
        failure: Failure<'_>,
        extra_options: TraceOptions,
    ) -> TraceRecord {
        let mut options = gate_options(self, settings);
        options.merge(extra_options);
        let b = TraceBuilder::new(trace_id, kind)
            .question(Some(question.to_string()))
            .chunks(self.chunks.chunks())
            .provider(failure.provider);
        record_failure(b, failure.error, failure.raw_output)
            .options(options)
            .timings(Timings {
                retrieve_ms: Some(Timings::millis(self.time)),
                ..Timings::default()
            })
            .build()
    }
}

/// Writes a generation's outcome into its trace: the raw output, model,
/// request ID, error, and as typed fields the stop reason, the token counts
/// and how the raw output is read back (`answer_form`). The one place the
/// ask pipeline and the service's `/v1/answer` do it.
pub fn record_outcome(b: TraceBuilder, a: &Answered) -> TraceBuilder {
    let usage = a.usage.unwrap_or_default();
    b.raw_output(a.raw_output.clone())
        .model(a.model.clone())
        .provider_request_id(a.request_id.clone())
        .error(a.error.as_ref().map(ProviderError::summary))
        .stop_reason(Some(a.stop_reason.as_str().to_string()))
        .answer_form(Some(a.output_form().to_string()))
        .tokens(usage.input_tokens, usage.output_tokens)
}

/// Writes a generation that failed outright into its trace: what arrived
/// before the failure (`raw_output`, else the error's partial output), the
/// stop reason, the token counts and the error.
pub fn record_failure(
    b: TraceBuilder,
    error: &ProviderError,
    raw_output: Option<String>,
) -> TraceBuilder {
    b.raw_output(raw_output.or_else(|| error.partial_output().map(str::to_string)))
        .model(error.model().map(str::to_string))
        .provider_request_id(error.request_id().map(str::to_string))
        .error(Some(error.summary()))
        .stop_reason(Some(StopReason::of_error(error).as_str().to_string()))
        .tokens(error.usage().input_tokens, error.usage().output_tokens)
}

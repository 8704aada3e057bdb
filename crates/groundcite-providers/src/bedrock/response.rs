//! Reading a Converse response into a [`Generation`]: the whole response
//! ([`classify`]: stop reasons, usage, the JSON text of native structured
//! output, the tool's input or the raw citations), and a ConverseStream
//! response event by event ([`StreamPump`]), rebuilt in Converse's shape and
//! classified the same.

use std::fmt;
use std::time::{Duration, Instant};

use aws_sdk_bedrockruntime as sdk;
use groundcite_core::truncate_chars;
use sdk::error::{ProvideErrorMetadata, SdkError};
use sdk::types::{ContentBlockDelta, ContentBlockStart, ConverseStreamOutput};
use serde_json::Value;

use crate::error::{ErrorKind, ProviderError};
use crate::generator::StreamSender;
use crate::types::{FinishReason, Generation, Output, Timings, Usage};

use super::client::{Events, chain};
use super::config::{BedrockConfig, BedrockMode, BedrockStructured};

/// Where the answer is in the response.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Expect {
    /// Native structured output: the text blocks are the JSON.
    Json,
    /// Tool use: the forced tool's input is the JSON.
    Tool,
    /// Native citations: the whole response goes to the core's converter.
    Citations,
}

impl Expect {
    pub(super) fn of(config: &BedrockConfig) -> Expect {
        match config.mode {
            BedrockMode::Citations => Expect::Citations,
            BedrockMode::ToolUse => match config.structured_output() {
                BedrockStructured::Native => Expect::Json,
                _ => Expect::Tool,
            },
        }
    }
}

/// Reads a ConverseStream response: each fragment of the JSON (the text of
/// native structured output, or the tool's input) goes out as a delta as it
/// arrives; at the end the message is rebuilt in Converse's shape and
/// classified exactly like a whole response.
pub(super) struct StreamPump {
    pub(super) provider: &'static str,
    pub(super) expect: Expect,
    pub(super) tool_name: Option<String>,
    pub(super) model_id: String,
    pub(super) request_id: Option<String>,
    pub(super) attempts: u32,
    pub(super) started: Instant,
    pub(super) time_to_headers: Duration,
}

impl StreamPump {
    pub(super) async fn run(self, mut events: Events, sender: StreamSender) {
        let mut text = String::new();
        let mut tool: Option<(String, String)> = None;
        let mut input = String::new();
        let mut stop: Option<String> = None;
        let mut usage = (None, None);
        let mut first_token = None;
        let result = loop {
            let event = match events.recv().await {
                Ok(Some(e)) => e,
                Ok(None) => break None,
                Err(e) => break Some(self.stream_error(&e, &text, &input)),
            };
            match event {
                ConverseStreamOutput::ContentBlockStart(e) => {
                    if let Some(ContentBlockStart::ToolUse(t)) = e.start() {
                        tool = Some((t.tool_use_id().to_string(), t.name().to_string()));
                    }
                }
                ConverseStreamOutput::ContentBlockDelta(e) => match e.delta() {
                    Some(ContentBlockDelta::ToolUse(d)) => {
                        input.push_str(d.input());
                        if first_token.is_none() {
                            first_token = Some(self.started.elapsed());
                        }
                        if sender.deltas.send(d.input().to_string()).await.is_err() {
                            // The reader dropped the stream: dropping the
                            // receiver here cancels the request.
                            return;
                        }
                    }
                    Some(ContentBlockDelta::Text(t)) => {
                        text.push_str(t);
                        if self.expect == Expect::Json {
                            if first_token.is_none() {
                                first_token = Some(self.started.elapsed());
                            }
                            if sender.deltas.send(t.clone()).await.is_err() {
                                return;
                            }
                        }
                    }
                    _ => {}
                },
                ConverseStreamOutput::MessageStop(e) => {
                    stop = Some(e.stop_reason().as_str().to_string());
                }
                ConverseStreamOutput::Metadata(e) => {
                    if let Some(u) = e.usage() {
                        usage = (
                            u64::try_from(u.input_tokens()).ok(),
                            u64::try_from(u.output_tokens()).ok(),
                        );
                    }
                }
                _ => {}
            }
        };
        let result = match result {
            Some(e) => Err(e),
            None => {
                let mut content = Vec::new();
                if !text.is_empty() {
                    content.push(serde_json::json!({"text": text}));
                }
                if let Some((id, name)) = tool {
                    // The input as the model wrote it, not re-serialized:
                    // the deltas must add up to the output.
                    content.push(serde_json::json!({"toolUse": {"toolUseId": id, "name": name, "input": input}}));
                }
                let mut response = serde_json::json!({
                    "output": {"message": {"role": "assistant", "content": content}},
                    "usage": {"inputTokens": usage.0, "outputTokens": usage.1},
                });
                if let Some(s) = stop {
                    response["stopReason"] = Value::String(s);
                }
                classify(
                    self.provider,
                    self.expect,
                    self.tool_name.as_deref(),
                    &self.model_id,
                    response,
                    self.request_id.clone(),
                    Timings {
                        time_to_headers: self.time_to_headers,
                        time_to_first_token: first_token,
                        total: self.started.elapsed(),
                        attempts: self.attempts,
                    },
                )
            }
        };
        let _ = sender.result.send(result);
    }

    /// An error event, or a failure of the stream after it started.
    fn stream_error<R: fmt::Debug>(
        &self,
        e: &SdkError<sdk::types::error::ConverseStreamOutputError, R>,
        text: &str,
        input: &str,
    ) -> ProviderError {
        let (kind, message) = match e {
            SdkError::ServiceError(s) => {
                use sdk::types::error::ConverseStreamOutputError as E;
                let err = s.err();
                // The event's `:exception-type` names the variant; the
                // error metadata may carry no code.
                let (kind, code) = match err {
                    E::ThrottlingException(_) => (ErrorKind::RateLimited, "ThrottlingException"),
                    E::InternalServerException(_) => (ErrorKind::Status, "InternalServerException"),
                    E::ModelStreamErrorException(_) => {
                        (ErrorKind::Status, "ModelStreamErrorException")
                    }
                    E::ValidationException(_) => (ErrorKind::Status, "ValidationException"),
                    E::ServiceUnavailableException(_) => {
                        (ErrorKind::Status, "ServiceUnavailableException")
                    }
                    _ => (ErrorKind::Status, err.code().unwrap_or("unknown error")),
                };
                let mut m = format!("error in the stream ({code})");
                if let Some(msg) = err.message() {
                    m.push_str(": ");
                    m.push_str(&truncate_chars(msg, 300));
                }
                (kind, m)
            }
            SdkError::TimeoutError(_) => (ErrorKind::Timeout, "the stream timed out".to_string()),
            _ => (
                ErrorKind::Connection,
                format!("the stream broke off: {}", chain(e)),
            ),
        };
        let partial = if input.is_empty() { text } else { input };
        ProviderError::new(kind, self.provider, message)
            .with_request_id(self.request_id.clone())
            .with_attempts(self.attempts)
            .with_partial_output(Some(partial.to_string()))
            .with_model(Some(self.model_id.clone()))
    }
}

/// Turns a Converse response (raw JSON) into a generation or a classified
/// error.
pub(super) fn classify(
    provider: &'static str,
    expect: Expect,
    tool_name: Option<&str>,
    model_id: &str,
    response: Value,
    request_id: Option<String>,
    timings: Timings,
) -> Result<Generation, ProviderError> {
    let model = Some(model_id.to_string());
    let blocks: Vec<Value> = response
        .pointer("/output/message/content")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let text: String = blocks
        .iter()
        .filter_map(|b| b.get("text").and_then(Value::as_str))
        .collect();
    let tool_input = blocks
        .iter()
        .filter_map(|b| b.get("toolUse"))
        .find(|t| tool_name.is_none_or(|n| t.get("name").and_then(Value::as_str) == Some(n)))
        .and_then(|t| t.get("input"))
        .cloned();
    let partial = || match &tool_input {
        Some(Value::String(s)) => Some(s.clone()),
        Some(v) => Some(v.to_string()),
        None => Some(text.clone()),
    };
    let fail = |kind, msg: &str, partial: Option<String>| {
        ProviderError::new(kind, provider, msg)
            .with_request_id(request_id.clone())
            .with_attempts(timings.attempts)
            .with_partial_output(partial)
            .with_model(model.clone())
    };
    let stop = response
        .get("stopReason")
        .and_then(Value::as_str)
        .map(str::to_string);
    match stop.as_deref() {
        Some(s @ ("content_filtered" | "guardrail_intervened")) => {
            return Err(fail(
                ErrorKind::ContentFilter,
                &format!("the content filter stopped the answer (stopReason: {s})"),
                partial(),
            ));
        }
        Some("refusal") => {
            return Err(fail(
                ErrorKind::Refusal,
                "the model refused to answer (stopReason: refusal)",
                partial(),
            ));
        }
        Some(s @ ("max_tokens" | "model_context_window_exceeded")) => {
            return Err(fail(
                ErrorKind::Truncated,
                &format!("the output stopped at the token limit (stopReason: {s})"),
                partial(),
            ));
        }
        Some(s @ ("malformed_model_output" | "malformed_tool_use")) => {
            return Err(fail(
                ErrorKind::InvalidOutput,
                &format!("the model's output could not be parsed (stopReason: {s})"),
                partial(),
            ));
        }
        None => {
            return Err(fail(
                ErrorKind::Truncated,
                "the response has no stopReason: the output is incomplete",
                partial(),
            ));
        }
        _ => {}
    }
    let usage = Usage {
        input_tokens: response
            .pointer("/usage/inputTokens")
            .and_then(Value::as_u64),
        output_tokens: response
            .pointer("/usage/outputTokens")
            .and_then(Value::as_u64),
    };
    let output = match expect {
        Expect::Json => match serde_json::from_str::<Value>(&text) {
            Ok(Value::Object(_)) => Output::Json(text),
            Ok(_) => {
                return Err(fail(
                    ErrorKind::InvalidOutput,
                    "the structured output is not a JSON object",
                    Some(text),
                ));
            }
            Err(e) => {
                return Err(fail(
                    ErrorKind::InvalidOutput,
                    &format!("the structured output is not valid JSON: {e}"),
                    Some(text),
                ));
            }
        },
        Expect::Tool => {
            let name = tool_name.unwrap_or(groundcite_core::schema::SCHEMA_NAME);
            let json = match tool_input {
                None => {
                    return Err(fail(
                        ErrorKind::InvalidOutput,
                        &format!("the model did not call the {name} tool"),
                        Some(text),
                    ));
                }
                Some(v @ Value::Object(_)) => v.to_string(),
                // Some models send the input as a JSON string.
                Some(Value::String(s)) => match serde_json::from_str::<Value>(&s) {
                    Ok(Value::Object(_)) => s,
                    Ok(_) => {
                        return Err(fail(
                            ErrorKind::InvalidOutput,
                            "the tool input is not a JSON object",
                            Some(s),
                        ));
                    }
                    Err(e) => {
                        return Err(fail(
                            ErrorKind::InvalidOutput,
                            &format!("the tool input is not valid JSON: {e}"),
                            Some(s),
                        ));
                    }
                },
                Some(v) => {
                    return Err(fail(
                        ErrorKind::InvalidOutput,
                        "the tool input is not a JSON object",
                        Some(v.to_string()),
                    ));
                }
            };
            Output::Json(json)
        }
        Expect::Citations => {
            if response.pointer("/output/message/content").is_none() {
                return Err(fail(
                    ErrorKind::InvalidOutput,
                    "the response has no output message",
                    None,
                ));
            }
            Output::BedrockCitations(response)
        }
    };
    Ok(Generation {
        output,
        model,
        finish_reason: stop.as_deref().map(|s| match s {
            "tool_use" => FinishReason::Stop,
            other => FinishReason::from_provider(other),
        }),
        usage,
        request_id,
        timings,
        p_answerable: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn timings() -> Timings {
        Timings {
            attempts: 1,
            ..Timings::default()
        }
    }

    fn run(expect: Expect, response: Value) -> Result<Generation, ProviderError> {
        classify(
            "bedrock",
            expect,
            Some("GroundedAnswer"),
            "m",
            response,
            None,
            timings(),
        )
    }

    #[test]
    fn tool_input_is_the_output() {
        let g = run(
            Expect::Tool,
            json!({"output": {"message": {"role": "assistant", "content": [
                {"toolUse": {"toolUseId": "t", "name": "GroundedAnswer", "input": {"answerable": false, "claims": []}}}
            ]}}, "stopReason": "tool_use", "usage": {"inputTokens": 3, "outputTokens": 4}}),
        )
        .unwrap();
        assert_eq!(
            g.output,
            Output::Json(r#"{"answerable":false,"claims":[]}"#.into())
        );
        assert_eq!(g.usage.output_tokens, Some(4));
    }

    #[test]
    fn stop_reasons_map_like_the_other_providers() {
        let body = |stop: &str| json!({"output": {"message": {"role": "assistant", "content": [{"text": "x"}]}}, "stopReason": stop});
        for (stop, kind) in [
            ("max_tokens", ErrorKind::Truncated),
            ("model_context_window_exceeded", ErrorKind::Truncated),
            ("content_filtered", ErrorKind::ContentFilter),
            ("guardrail_intervened", ErrorKind::ContentFilter),
            ("malformed_tool_use", ErrorKind::InvalidOutput),
            ("end_turn", ErrorKind::InvalidOutput),
        ] {
            let e = run(Expect::Tool, body(stop)).unwrap_err();
            assert_eq!(e.kind(), kind, "{stop}");
        }
    }

    #[test]
    fn native_text_is_the_output() {
        let body = |text: &str, stop: &str| json!({"output": {"message": {"role": "assistant", "content": [{"text": text}]}}, "stopReason": stop});
        let g = run(
            Expect::Json,
            body(r#"{"answerable":false,"claims":[]}"#, "end_turn"),
        )
        .unwrap();
        assert_eq!(
            g.output,
            Output::Json(r#"{"answerable":false,"claims":[]}"#.into())
        );
        assert_eq!(g.finish_reason, Some(FinishReason::Stop));
        for (text, stop, kind) in [
            ("[1, 2]", "end_turn", ErrorKind::InvalidOutput),
            (r#"{"answerable": tr"#, "end_turn", ErrorKind::InvalidOutput),
            (r#"{"answerable": tr"#, "max_tokens", ErrorKind::Truncated),
            ("I cannot help", "refusal", ErrorKind::Refusal),
        ] {
            let e = run(Expect::Json, body(text, stop)).unwrap_err();
            assert_eq!(e.kind(), kind, "{text} {stop}");
            assert_eq!(e.partial_output(), Some(text), "{text}");
        }
    }
}

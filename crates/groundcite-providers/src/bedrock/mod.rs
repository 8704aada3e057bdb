//! Amazon Bedrock Converse through the official AWS SDK
//! (`aws-sdk-bedrockruntime`, feature `bedrock`), in two modes:
//!
//! - **structured output** ([`BedrockMode::ToolUse`], `--provider bedrock`),
//!   one of two ways ([`BedrockStructured`], `[bedrock] structured`):
//!   - **native** (`native`, and `auto` for the models Bedrock lists as
//!     supporting structured output, [`native_structured_output`]):
//!     `outputConfig.textFormat` `{type: "json_schema", structure:
//!     {jsonSchema: {schema, name}}}` with the strict schema of the request
//!     as JSON text, byte for byte the core's
//!     [`schema_text`](groundcite_core::schema::schema_text), checked
//!     against [`Target::Bedrock`]; the model's text is the structured
//!     output ([`Output::Json`](crate::Output::Json));
//!   - **tool** (`tool`, and `auto` for every other model): one tool whose
//!     input schema is the strict schema of the request (the core's
//!     `GroundedAnswer` schema in Anthropic's dialect, or a caller's own),
//!     `strict: true` unless turned off, and `toolChoice` forcing that tool
//!     (documented for Anthropic Claude 3 and later and Amazon Nova); the
//!     tool's input is the structured output.
//! - **native citations** ([`BedrockMode::Citations`],
//!   `--provider bedrock-citations`): one plain-text `document` block per
//!   chunk with `citations: {enabled: true}`; the response goes raw
//!   ([`Output::BedrockCitations`](crate::Output::BedrockCitations)) to
//!   [`groundcite_core::native::bedrock::convert_converse`].
//!
//! Region, credentials and endpoint come from the SDK's default chains
//! (`AWS_REGION`, profiles, web identity, ECS and IMDS), each overridable.
//! The SDK signs and sends; its own retries are disabled and every call
//! goes through groundcite's [`RetryPolicy`](crate::RetryPolicy) instead (429 and 5xx, and
//! connection failures, retried with the same backoff and `Retry-After`
//! handling as the HTTP adapters; timeouts are not retried), so
//! `--max-retries` means the same for every provider. The SDK's attempt
//! timeout is [`HttpConfig::timeout`](crate::HttpConfig::timeout), its
//! connect timeout
//! [`HttpConfig::connect_timeout`](crate::HttpConfig::connect_timeout).
//!
//! The response is read from the raw body the SDK received (captured by an
//! interceptor), as the other adapters read theirs: the trace keeps what
//! the provider sent, key order included, which the SDK's `Document` type
//! (a `HashMap`) would lose. The request ID is `x-amzn-requestid`.
//!
//! Failures map as for the other providers: `stopReason` `max_tokens` or
//! `model_context_window_exceeded` → [`ErrorKind::Truncated`](crate::ErrorKind::Truncated) (R3);
//! `content_filtered` or `guardrail_intervened` →
//! [`ErrorKind::ContentFilter`](crate::ErrorKind::ContentFilter) (R4); `malformed_model_output`,
//! `malformed_tool_use`, no call of the tool, a tool input or a native
//! output that is not a JSON object → [`ErrorKind::InvalidOutput`](crate::ErrorKind::InvalidOutput) (R3).
//!
//! Streaming: in structured output, [`Generator::generate_stream`] calls
//! ConverseStream and each `contentBlockDelta.text` (native) or
//! `contentBlockDelta.toolUse.input` (tool) fragment is a delta as it
//! arrives (so claims are verified as their JSON objects close); at the end
//! the message is rebuilt in Converse's shape and classified like a whole
//! response. Native citations have no claim objects
//! to stream: there it runs Converse and hands over the whole response.

use groundcite_core::schema::Target;

use crate::error::ProviderError;
use crate::generator::{BoxFuture, GenerationStream, Generator, Mode};
use crate::types::{Generation, GenerationRequest};

// Layered, each importing only those listed before it: config, request,
// client, response; this module uses them all and none of them uses it.
mod client;
mod config;
mod request;
mod response;

pub use client::Bedrock;
pub use config::{
    BEDROCK_REQUEST_ID_HEADER, BedrockConfig, BedrockMode, BedrockStructured, StaticCredentials,
    native_structured_output,
};

use config::provider_name;
use request::ConverseParts;
use response::{Expect, StreamPump, classify};

// The entry points of `Generator`: the parts (`request`) sent by the client
// (`client`), and what came back read into a generation (`response`).
impl Bedrock {
    async fn run(&self, request: &GenerationRequest) -> Result<Generation, ProviderError> {
        let (response, request_id, tool_name, timings) = self.send(request).await?;
        classify(
            self.provider(),
            Expect::of(&self.config),
            tool_name.as_deref(),
            &self.config.model_id,
            response,
            request_id,
            timings,
        )
    }

    async fn run_stream(
        &self,
        request: &GenerationRequest,
    ) -> Result<GenerationStream, ProviderError> {
        if self.config.mode == BedrockMode::Citations {
            // Native citations have no claim objects to stream: the whole
            // response, then the contract.
            let generation = self.run(request).await?;
            let (stream, sender) = GenerationStream::channel(self.provider());
            let _ = sender.result.send(Ok(generation));
            return Ok(stream);
        }
        let parts = ConverseParts::new(&self.config, request)?;
        let client = self.client().await?;
        let ((events, request_id), attempts, started) = self
            .with_retries(|| self.stream_attempt(client, &parts))
            .await?;
        let (stream, sender) = GenerationStream::channel(self.provider());
        let pump = StreamPump {
            provider: self.provider(),
            expect: Expect::of(&self.config),
            tool_name: parts.tool_name.clone(),
            model_id: self.config.model_id.clone(),
            request_id,
            attempts,
            started,
            time_to_headers: started.elapsed(),
        };
        tokio::spawn(pump.run(events, sender));
        Ok(stream)
    }
}

impl Generator for Bedrock {
    fn provider(&self) -> &'static str {
        provider_name(self.config.mode)
    }

    fn mode(&self) -> Mode {
        match (self.config.mode, self.config.structured_output()) {
            // Bedrock's documented subset (Target::Bedrock): the schema goes
            // out as outputConfig.textFormat's JSON text.
            (BedrockMode::ToolUse, BedrockStructured::Native) => Mode::Structured(Target::Bedrock),
            // A tool's input schema is a JSON object, validated (with
            // strict) by the same rules; its models are led by Claude.
            (BedrockMode::ToolUse, _) => Mode::Structured(Target::Anthropic),
            (BedrockMode::Citations, _) => Mode::NativeCitations,
        }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::secret::SecretString;

    #[test]
    fn credentials_never_shown() {
        let c = StaticCredentials {
            access_key_id: "AKIDEXAMPLE".into(),
            secret_access_key: SecretString::new("wJalrXUtnFEMI-FAKE"),
            session_token: Some(SecretString::new("session-FAKE")),
        };
        let mut config = BedrockConfig::new("m", BedrockMode::ToolUse);
        config.credentials = Some(c);
        let b = Bedrock::new(config).unwrap();
        let shown = format!("{b:?} {:?}", b.config);
        assert!(!shown.contains("wJalrXUtnFEMI-FAKE"), "{shown}");
        assert!(!shown.contains("session-FAKE"), "{shown}");
    }
}

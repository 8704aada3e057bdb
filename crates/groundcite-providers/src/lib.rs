//! # groundcite-providers
//!
//! One generator abstraction over the model providers groundcite calls, with
//! failure semantics identical across providers.
//!
//! ## Key types
//! - [`Generator`]: `generate` a [`GenerationRequest`] into a [`Generation`],
//!   or `generate_stream` it into a [`GenerationStream`] of text deltas.
//! - [`GenerationRequest`]: system prompt, user content, the strict schema
//!   ([`ResponseSchema`], the core's per-target dialect, or a caller's own
//!   schema checked by the core's lint), chunks for native-citation modes,
//!   limits.
//! - [`Generation`]: the raw [`Output`] (JSON text, or an Anthropic message
//!   with native citations), model, finish reason, usage, request ID, timings.
//! - [`ProviderError`] / [`ErrorKind`]: refusal and content filter (R4),
//!   truncation and invalid JSON (R3, schema-parsing errors), rate limits,
//!   statuses, timeouts, connection failures, credentials; the raw body,
//!   status, request ID and `Retry-After` are kept.
//! - Adapters: [`ChatCompletions`] (OpenAI, OpenAI-compatible servers with
//!   [`Quirks`], and Azure OpenAI through [`azure::azure_openai`]),
//!   [`Responses`] (OpenAI's Responses API, structured output through
//!   `text.format`), [`Gemini`] (the Gemini API's `generateContent`,
//!   structured output through `responseJsonSchema`) and [`Anthropic`]
//!   (structured or native citations);
//!   with the `bedrock` feature, `Bedrock` (Amazon Bedrock Converse through the official AWS
//!   SDK: tool use or native document citations, module `bedrock`).
//! - [`SecretString`]: keys and tokens redacted from every `Debug`/`Display`;
//!   [`env`](mod@env): every environment variable read, in one place.
//! - [`HttpConfig`] / [`RetryPolicy`]: connect and total timeouts; bounded,
//!   jittered retries of 429 and 5xx that honour `Retry-After`;
//!   [`RetryBudget`] / [`BreakerPolicy`] ([`resilience`]): retries limited
//!   to a share of recent requests, and a circuit breaker that fails fast
//!   ([`ErrorKind::CircuitOpen`]) while a provider is down;
//!   [`resilience::health`] for metrics.
//! - [`replay`]: test support, a local server replaying recorded exchanges.
//!
//! ## Features
//! - `bedrock` (off by default): Amazon Bedrock Converse through the
//!   official AWS SDK (`aws-sdk-bedrockruntime`, `aws-config`), module
//!   `bedrock`. It adds about 60 crates and about 5½ minutes to a clean
//!   build on 2 cores (docs/providers.md).
//!
//! ## Example
//! ```no_run
//! use groundcite_core::{Chunk, ChunkSet, schema::Target};
//! use groundcite_providers::{ChatCompletions, GenerationRequest, Generator, HttpConfig, SecretString};
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let chunks = ChunkSet::new(vec![Chunk {
//!     chunk_id: "refunds#1".into(),
//!     content: "Refunds are available within 30 days of purchase.".into(),
//!     source_title: None, source_url: None, page_number: None, score: None,
//! }])?;
//! let openai = ChatCompletions::openai(
//!     "https://api.openai.com/v1".parse()?,
//!     SecretString::new(std::env::var("OPENAI_API_KEY")?),
//!     "gpt-4o-2024-08-06".into(),
//!     HttpConfig::default(),
//! )?;
//! let request = GenerationRequest::grounded(&chunks, "How long do I have?", Target::OpenAi);
//! let generation = openai.generate(&request).await?;
//! println!("{:?}", generation.output);
//! # Ok(()) }
//! ```

mod anthropic;
pub mod azure;
#[cfg(feature = "bedrock")]
pub mod bedrock;
mod credential;
pub mod env;
mod error;
pub mod gemini;
mod generator;
mod http;
mod openai;
pub mod pipeline;
pub mod replay;
pub mod resilience;
pub mod responses;
mod secret;
mod sse;
mod types;

pub use anthropic::{ANTHROPIC_BASE_URL, ANTHROPIC_VERSION, Anthropic, AnthropicMode};
#[cfg(feature = "bedrock")]
pub use bedrock::{
    Bedrock, BedrockConfig, BedrockMode, BedrockStructured, StaticCredentials,
    native_structured_output,
};
pub use error::{ErrorKind, ProviderError};
pub use gemini::{GEMINI_BASE_URL, Gemini};
pub use generator::{BoxFuture, GenerationStream, Generator, Mode, StreamSender};
pub use http::{DEFAULT_MAX_RESPONSE_BYTES, HttpConfig, RetryPolicy};
pub use openai::{
    ChatAuth, ChatCompletions, CompatServer, OPENAI_BASE_URL, Quirks, ResponseFormatShape,
    TokenLimitField, UnknownServer, parse_base_url,
};
pub use pipeline::{AnswerError, AnswerSettings, Answered, Backend, answer};
pub use resilience::{BreakerPolicy, BreakerState, ProviderHealth, RetryBudget};
pub use responses::Responses;
pub use secret::{SecretString, redact_endpoint_url};
pub use types::{
    CustomSchemaError, DEFAULT_MAX_TOKENS, FinishReason, Generation, GenerationRequest,
    NATIVE_SYSTEM_PROMPT, NativeSources, Output, REASONING_DEFAULT_MAX_TOKENS, ResponseSchema,
    SERVER_CHOOSES_MAX_TOKENS, ShapeError, StopReason, Timings, Usage, grounded_answer_shape,
};

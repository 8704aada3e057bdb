//! The public settings of a Bedrock client: the mode, fixed credentials and
//! [`BedrockConfig`]. The bottom layer: every other module of `bedrock`
//! reads these, and this one reads none of them.

use std::fmt;

use url::Url;

use crate::http::HttpConfig;
use crate::secret::SecretString;

/// The response header carrying Bedrock's request ID.
pub const BEDROCK_REQUEST_ID_HEADER: &str = "x-amzn-requestid";

/// Which of the two modes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BedrockMode {
    /// Structured output through one forced tool.
    ToolUse,
    /// Native citations over one document block per chunk.
    Citations,
}

/// Fixed credentials instead of the SDK's default chain (tests, or a caller
/// that already holds them). Never shown by `Debug`.
#[derive(Clone)]
pub struct StaticCredentials {
    /// Access key ID (not a secret by itself, but not shown either).
    pub access_key_id: String,
    /// Secret access key.
    pub secret_access_key: SecretString,
    /// Session token of temporary credentials.
    pub session_token: Option<SecretString>,
}

impl fmt::Debug for StaticCredentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("StaticCredentials([REDACTED])")
    }
}

/// Settings of a Bedrock client; `None` fields fall back to the SDK's chains.
#[derive(Debug, Clone)]
pub struct BedrockConfig {
    /// Model ID, inference profile ID or ARN.
    pub model_id: String,
    /// The mode.
    pub mode: BedrockMode,
    /// Region (else `AWS_REGION`, `AWS_DEFAULT_REGION`, the profile, IMDS).
    pub region: Option<String>,
    /// Endpoint (else the SDK's: `AWS_ENDPOINT_URL_BEDROCK_RUNTIME`, or the
    /// regional `bedrock-runtime` endpoint). Used by the recorded-exchange
    /// tests and for VPC endpoints.
    pub endpoint_url: Option<Url>,
    /// Credentials (else the SDK's default chain).
    pub credentials: Option<StaticCredentials>,
    /// Send `toolSpec.strict: true` (constrained decoding where the model
    /// supports it; turn off for models that reject the field).
    pub strict_tool: bool,
    /// Timeouts and retries.
    pub http: HttpConfig,
}

impl BedrockConfig {
    /// Settings with the SDK's chains for everything but the model.
    pub fn new(model_id: impl Into<String>, mode: BedrockMode) -> BedrockConfig {
        BedrockConfig {
            model_id: model_id.into(),
            mode,
            region: None,
            endpoint_url: None,
            credentials: None,
            strict_tool: true,
            http: HttpConfig::default(),
        }
    }
}

/// The provider name of a mode, as errors and traces report it.
pub(super) fn provider_name(mode: BedrockMode) -> &'static str {
    match mode {
        BedrockMode::ToolUse => "bedrock",
        BedrockMode::Citations => "bedrock-citations",
    }
}

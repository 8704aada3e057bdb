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
    /// Structured output (`--provider bedrock`): Converse's native
    /// `outputConfig.textFormat` or one forced tool, as
    /// [`BedrockConfig::structured`] chooses. (The name predates native
    /// structured output.)
    ToolUse,
    /// Native citations over one document block per chunk.
    Citations,
}

/// How the structured mode asks for JSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum BedrockStructured {
    /// [`BedrockStructured::Native`] when the model ID is one Bedrock lists
    /// as supporting structured output ([`native_structured_output`]),
    /// else [`BedrockStructured::Tool`].
    #[default]
    Auto,
    /// Converse `outputConfig.textFormat` with the schema as JSON text: the
    /// model's text is the JSON.
    Native,
    /// One tool whose input schema is the schema, forced by `toolChoice`
    /// (documented for Anthropic Claude 3 and later and Amazon Nova).
    Tool,
}

impl BedrockStructured {
    /// The setting's spelling (`auto`, `native`, `tool`).
    pub fn as_str(self) -> &'static str {
        match self {
            BedrockStructured::Auto => "auto",
            BedrockStructured::Native => "native",
            BedrockStructured::Tool => "tool",
        }
    }

    /// `Native` or `Tool` for `model_id` (`Auto` resolved by the model list).
    pub fn resolve(self, model_id: &str) -> BedrockStructured {
        match self {
            BedrockStructured::Auto if native_structured_output(model_id) => {
                BedrockStructured::Native
            }
            BedrockStructured::Auto => BedrockStructured::Tool,
            explicit => explicit,
        }
    }
}

impl std::str::FromStr for BedrockStructured {
    type Err = String;

    fn from_str(s: &str) -> Result<BedrockStructured, String> {
        match s {
            "auto" => Ok(BedrockStructured::Auto),
            "native" => Ok(BedrockStructured::Native),
            "tool" => Ok(BedrockStructured::Tool),
            other => Err(format!(
                "unknown structured-output mode {other:?}; expected auto, native or tool"
            )),
        }
    }
}

/// Base model IDs (prefixes) of the models Bedrock's structured-output page
/// ("Get validated JSON results from models", supported models) and the
/// Claude model cards list as supporting `outputConfig.textFormat` through
/// Converse. Families the list names without IDs groundcite can match
/// exactly (DeepSeek, Mistral) are left out: `structured = "native"` opts in.
const NATIVE_STRUCTURED_OUTPUT: &[&str] = &[
    "anthropic.claude-haiku-4-5",
    "anthropic.claude-sonnet-4-5",
    "anthropic.claude-sonnet-4-6",
    "anthropic.claude-opus-4-5",
    "anthropic.claude-opus-4-6",
    "qwen.qwen3-",
    "openai.gpt-oss-",
    "google.gemma-3-",
    "minimax.minimax-m2",
    "moonshot.kimi-k2",
    "nvidia.nemotron-",
];

/// Whether `model_id` (a base model ID, an inference profile ID such as
/// `us.anthropic.claude-sonnet-4-5-20250929-v1:0`, or the ARN of either)
/// names a model Bedrock documents as supporting native structured output.
/// An application inference profile's ARN names no model: `false`.
pub fn native_structured_output(model_id: &str) -> bool {
    // An ARN: the resource after `foundation-model/` or `inference-profile/`.
    let id = model_id.rsplit('/').next().unwrap_or(model_id);
    // A cross-region inference profile: a geography prefix before the
    // provider (`us.`, `eu.`, `apac.`, `global.`, …).
    let base = match id.split_once('.') {
        Some((geo, rest)) if rest.contains('.') && !is_provider(geo) => rest,
        _ => id,
    };
    NATIVE_STRUCTURED_OUTPUT
        .iter()
        .any(|prefix| base.starts_with(prefix))
}

/// Whether `s` is a provider segment of a base model ID.
fn is_provider(s: &str) -> bool {
    NATIVE_STRUCTURED_OUTPUT
        .iter()
        .any(|p| p.split('.').next() == Some(s))
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
    /// How the structured mode asks for JSON (native output or a forced
    /// tool); ignored by native citations.
    pub structured: BedrockStructured,
    /// Send `toolSpec.strict: true` in tool use (constrained decoding).
    /// Strict tool use is documented for the same models as native
    /// structured output, so the default is [`native_structured_output`]
    /// of the model ID; set it to force either way.
    pub strict_tool: bool,
    /// Timeouts and retries.
    pub http: HttpConfig,
}

impl BedrockConfig {
    /// Settings with the SDK's chains for everything but the model.
    pub fn new(model_id: impl Into<String>, mode: BedrockMode) -> BedrockConfig {
        let model_id = model_id.into();
        BedrockConfig {
            strict_tool: native_structured_output(&model_id),
            model_id,
            mode,
            region: None,
            endpoint_url: None,
            credentials: None,
            structured: BedrockStructured::Auto,
            http: HttpConfig::default(),
        }
    }
}

impl BedrockConfig {
    /// The structured mode's way, resolved for the model: `Native` or
    /// `Tool` (`Tool` too for native citations, which use neither).
    pub fn structured_output(&self) -> BedrockStructured {
        match self.mode {
            BedrockMode::ToolUse => self.structured.resolve(&self.model_id),
            BedrockMode::Citations => BedrockStructured::Tool,
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_documented_models_resolve_to_native() {
        for id in [
            "anthropic.claude-sonnet-4-5-20250929-v1:0",
            "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
            "global.anthropic.claude-haiku-4-5-20251001-v1:0",
            "eu.anthropic.claude-opus-4-5-20251101-v1:0",
            "anthropic.claude-opus-4-6-v1",
            "apac.anthropic.claude-sonnet-4-6",
            "arn:aws:bedrock:us-east-1::foundation-model/anthropic.claude-haiku-4-5-20251001-v1:0",
            "arn:aws:bedrock:us-east-1:111122223333:inference-profile/us.anthropic.claude-sonnet-4-5-20250929-v1:0",
            "qwen.qwen3-32b-v1:0",
            "openai.gpt-oss-120b-1:0",
        ] {
            assert!(native_structured_output(id), "{id}");
            assert_eq!(
                BedrockStructured::Auto.resolve(id),
                BedrockStructured::Native,
                "{id}"
            );
        }
    }

    #[test]
    fn other_models_resolve_to_tool_and_the_setting_wins() {
        for id in [
            "anthropic.claude-3-5-sonnet-20240620-v1:0",
            "us.anthropic.claude-sonnet-4-20250514-v1:0",
            "amazon.nova-pro-v1:0",
            "us.amazon.nova-2-lite-v1:0",
            "meta.llama3-3-70b-instruct-v1:0",
            "arn:aws:bedrock:us-east-1:111122223333:application-inference-profile/a1b2c3d4e5f6",
            "",
        ] {
            assert!(!native_structured_output(id), "{id}");
            assert_eq!(
                BedrockStructured::Auto.resolve(id),
                BedrockStructured::Tool,
                "{id}"
            );
            assert_eq!(
                BedrockStructured::Native.resolve(id),
                BedrockStructured::Native
            );
        }
        assert_eq!(
            BedrockStructured::Tool.resolve("us.anthropic.claude-sonnet-4-5-20250929-v1:0"),
            BedrockStructured::Tool
        );
        for s in ["auto", "native", "tool"] {
            assert_eq!(s.parse::<BedrockStructured>().unwrap().as_str(), s);
        }
        assert!("json".parse::<BedrockStructured>().is_err());
    }
}

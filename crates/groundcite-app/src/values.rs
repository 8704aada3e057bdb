//! Every fixed-value setting as an enum: one spelling in flags, in
//! `groundcite.toml` and in `--help` (clap lists the values).

use serde::{Deserialize, Serialize};

/// Which provider answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum ProviderName {
    /// The embedded local model.
    Local,
    /// Azure OpenAI (structured outputs).
    Azure,
    /// OpenAI (structured outputs).
    Openai,
    /// OpenAI's Responses API (structured outputs through `text.format`).
    OpenaiResponses,
    /// Google's Gemini API (structured outputs, `responseJsonSchema`).
    Gemini,
    /// Anthropic (structured outputs, `output_config.format`).
    Anthropic,
    /// Anthropic native citations (one document per chunk).
    AnthropicCitations,
    /// An OpenAI-compatible server: vLLM, llama.cpp, Ollama.
    OpenaiCompatible,
    /// Amazon Bedrock Converse with the schema as a forced tool (build
    /// feature `bedrock`).
    Bedrock,
    /// Amazon Bedrock Converse with native document citations (build
    /// feature `bedrock`).
    BedrockCitations,
}

impl ProviderName {
    /// The spelling in flags and files.
    pub fn as_str(self) -> &'static str {
        match self {
            ProviderName::Local => "local",
            ProviderName::Azure => "azure",
            ProviderName::Openai => "openai",
            ProviderName::OpenaiResponses => "openai-responses",
            ProviderName::Gemini => "gemini",
            ProviderName::Anthropic => "anthropic",
            ProviderName::AnthropicCitations => "anthropic-citations",
            ProviderName::OpenaiCompatible => "openai-compatible",
            ProviderName::Bedrock => "bedrock",
            ProviderName::BedrockCitations => "bedrock-citations",
        }
    }
}

impl std::fmt::Display for ProviderName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Azure credential choice.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
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

/// Which Azure OpenAI route requests take.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum AzureApi {
    /// `/openai/v1/chat/completions`, no api-version.
    V1,
    /// `/openai/deployments/NAME/chat/completions?api-version=…`
    /// (OPENAI_API_VERSION or `[azure] api_version`, default 2024-10-21;
    /// the version alone never chooses this route).
    Versioned,
    /// `/openai/v1/responses`: the Responses API on the v1 route, the
    /// deployment as `model`.
    V1Responses,
}

/// How `--provider bedrock` asks for structured output (`[bedrock] structured`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum BedrockStructuredOutput {
    /// Native for the models Bedrock lists as supporting structured output,
    /// the forced tool for the others (the default).
    Auto,
    /// Converse `outputConfig.textFormat` (the schema as JSON text).
    Native,
    /// One tool forced by `toolChoice`.
    Tool,
}

/// Which OpenAI-compatible server (each with its documented quirks).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum ServerKind {
    /// vLLM.
    Vllm,
    /// llama.cpp's `llama-server`.
    Llamacpp,
    /// Ollama's `/v1` API.
    Ollama,
    /// Any other server: OpenAI's request shape.
    Generic,
}

impl From<ServerKind> for groundcite_providers::CompatServer {
    fn from(k: ServerKind) -> Self {
        use groundcite_providers::CompatServer;
        match k {
            ServerKind::Vllm => CompatServer::Vllm,
            ServerKind::Llamacpp => CompatServer::LlamaCpp,
            ServerKind::Ollama => CompatServer::Ollama,
            ServerKind::Generic => CompatServer::Generic,
        }
    }
}

/// How an OpenAI-compatible server is asked for structured output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ResponseFormat {
    /// `response_format: {type: json_schema, …}`.
    JsonSchema,
    /// `response_format: {type: json_object, schema: …}`.
    JsonObject,
}

/// Which field carries an OpenAI-compatible request's token limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TokenLimit {
    /// `max_tokens`.
    MaxTokens,
    /// `max_completion_tokens`.
    MaxCompletionTokens,
}

/// How Anthropic's native citations receive the chunks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum NativeSources {
    /// One document per chunk.
    #[default]
    Documents,
    /// One search result per chunk.
    SearchResults,
}

/// How the embedded model's quotes are held to the cited chunk.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Quotes {
    /// Whole consecutive sentences of the cited chunk.
    #[default]
    Verbatim,
    /// A contiguous run of words of the cited chunk.
    Words,
    /// Any text (verification still drops unverifiable quotes).
    Free,
}

impl Quotes {
    /// The spelling in flags, files and traces.
    pub fn as_str(self) -> &'static str {
        match self {
            Quotes::Verbatim => "verbatim",
            Quotes::Words => "words",
            Quotes::Free => "free",
        }
    }
}

/// What the embedded model's claim text may be.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum ClaimTextMode {
    /// Whole sentences of the claim's cited chunk.
    #[default]
    Extractive,
    /// The model's own words.
    Free,
}

/// How chunks are retrieved.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum RetrievalMode {
    /// BM25 fused with sentence vectors by score (a chunk's best sentence
    /// cosine plus a share of its BM25 score); BM25 alone with a note when
    /// the embedding model is not installed.
    #[default]
    Hybrid,
    /// BM25 alone.
    Bm25,
}

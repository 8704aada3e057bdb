//! Every environment variable groundcite's providers read, in one place.
//!
//! Secrets are read from the environment only (never from `groundcite.toml`)
//! and are wrapped in [`SecretString`](crate::SecretString) at once. The
//! Azure names are those of the Azure SDKs (`azure-identity`) and of the
//! seed how-to (`AOAI_ENDPOINT`, `CHAT_DEPLOYMENT`), so an environment set up
//! for them works unchanged.

/// OpenAI API key (`Authorization: Bearer …`). Secret.
pub const OPENAI_API_KEY: &str = "OPENAI_API_KEY";
/// OpenAI base URL (default `https://api.openai.com/v1`).
pub const OPENAI_BASE_URL: &str = "OPENAI_BASE_URL";
/// OpenAI model.
pub const OPENAI_MODEL: &str = "OPENAI_MODEL";

/// Azure OpenAI resource endpoint, `https://RESOURCE.openai.azure.com` (the
/// seed's name).
pub const AOAI_ENDPOINT: &str = "AOAI_ENDPOINT";
/// Azure OpenAI resource endpoint (the Azure SDKs' name; `AOAI_ENDPOINT` wins).
pub const AZURE_OPENAI_ENDPOINT: &str = "AZURE_OPENAI_ENDPOINT";
/// Azure OpenAI deployment name (the seed's name).
pub const CHAT_DEPLOYMENT: &str = "CHAT_DEPLOYMENT";
/// API version for the versioned route (`/openai/deployments/…?api-version=`);
/// when set, that route is used instead of the v1 route.
pub const OPENAI_API_VERSION: &str = "OPENAI_API_VERSION";
/// Azure OpenAI API key (`api-key` header). Secret.
pub const AZURE_OPENAI_API_KEY: &str = "AZURE_OPENAI_API_KEY";
/// A ready Microsoft Entra ID access token for Azure OpenAI (the OpenAI
/// SDKs' name). Secret.
pub const AZURE_OPENAI_AD_TOKEN: &str = "AZURE_OPENAI_AD_TOKEN";
/// Microsoft Entra tenant (client secret and workload identity).
pub const AZURE_TENANT_ID: &str = "AZURE_TENANT_ID";
/// Application (client) ID (client secret, workload identity, user-assigned
/// managed identity).
pub const AZURE_CLIENT_ID: &str = "AZURE_CLIENT_ID";
/// Client secret of the application. Secret.
pub const AZURE_CLIENT_SECRET: &str = "AZURE_CLIENT_SECRET";
/// File holding the federated token (workload identity; set by AKS).
pub const AZURE_FEDERATED_TOKEN_FILE: &str = "AZURE_FEDERATED_TOKEN_FILE";
/// Microsoft Entra authority host (default `https://login.microsoftonline.com`).
pub const AZURE_AUTHORITY_HOST: &str = "AZURE_AUTHORITY_HOST";
/// Managed-identity token endpoint, overriding the Azure Instance Metadata
/// Service address (groundcite's own name; for tests and proxies).
pub const GROUNDCITE_AZURE_IMDS_ENDPOINT: &str = "GROUNDCITE_AZURE_IMDS_ENDPOINT";
/// The Azure CLI program (default `az`; groundcite's own name).
pub const GROUNDCITE_AZ_COMMAND: &str = "GROUNDCITE_AZ_COMMAND";

/// Anthropic API key (`x-api-key` header). Secret.
pub const ANTHROPIC_API_KEY: &str = "ANTHROPIC_API_KEY";
/// Anthropic base URL (default `https://api.anthropic.com`).
pub const ANTHROPIC_BASE_URL: &str = "ANTHROPIC_BASE_URL";
/// Anthropic model.
pub const ANTHROPIC_MODEL: &str = "ANTHROPIC_MODEL";

/// Gemini API key (`x-goog-api-key` header; the name Google's SDKs read
/// first). Secret.
pub const GEMINI_API_KEY: &str = "GEMINI_API_KEY";
/// Gemini API key under Google's other SDK name (`GEMINI_API_KEY` wins). Secret.
pub const GOOGLE_API_KEY: &str = "GOOGLE_API_KEY";
/// Gemini API base URL (default `https://generativelanguage.googleapis.com/v1beta`).
pub const GEMINI_BASE_URL: &str = "GEMINI_BASE_URL";
/// Gemini model (e.g. `gemini-2.5-flash`).
pub const GEMINI_MODEL: &str = "GEMINI_MODEL";

/// Base URL of an OpenAI-compatible server (vLLM, llama.cpp, Ollama), e.g.
/// `http://localhost:8000/v1`.
pub const GROUNDCITE_COMPAT_BASE_URL: &str = "GROUNDCITE_COMPAT_BASE_URL";
/// API key of an OpenAI-compatible server, if it wants one. Secret.
pub const GROUNDCITE_COMPAT_API_KEY: &str = "GROUNDCITE_COMPAT_API_KEY";
/// Model served by the OpenAI-compatible server.
pub const GROUNDCITE_COMPAT_MODEL: &str = "GROUNDCITE_COMPAT_MODEL";

/// Amazon Bedrock model ID or inference profile (`bedrock`, `bedrock-citations`).
pub const BEDROCK_MODEL_ID: &str = "BEDROCK_MODEL_ID";
/// AWS secret access key: read by the AWS SDK's credential chain; groundcite
/// reads it only to scrub it from error bodies. Secret.
pub const AWS_SECRET_ACCESS_KEY: &str = "AWS_SECRET_ACCESS_KEY";
/// AWS session token: as [`AWS_SECRET_ACCESS_KEY`]. Secret.
pub const AWS_SESSION_TOKEN: &str = "AWS_SESSION_TOKEN";

/// All names above, for documentation and for tests that clear them. (The
/// AWS SDK reads its own variables too: `AWS_REGION`, `AWS_PROFILE`,
/// `AWS_ACCESS_KEY_ID`, `AWS_WEB_IDENTITY_TOKEN_FILE`, … see
/// docs/providers.md.)
pub const ALL: &[&str] = &[
    OPENAI_API_KEY,
    OPENAI_BASE_URL,
    OPENAI_MODEL,
    AOAI_ENDPOINT,
    AZURE_OPENAI_ENDPOINT,
    CHAT_DEPLOYMENT,
    OPENAI_API_VERSION,
    AZURE_OPENAI_API_KEY,
    AZURE_OPENAI_AD_TOKEN,
    AZURE_TENANT_ID,
    AZURE_CLIENT_ID,
    AZURE_CLIENT_SECRET,
    AZURE_FEDERATED_TOKEN_FILE,
    AZURE_AUTHORITY_HOST,
    GROUNDCITE_AZURE_IMDS_ENDPOINT,
    GROUNDCITE_AZ_COMMAND,
    ANTHROPIC_API_KEY,
    ANTHROPIC_BASE_URL,
    ANTHROPIC_MODEL,
    GEMINI_API_KEY,
    GOOGLE_API_KEY,
    GEMINI_BASE_URL,
    GEMINI_MODEL,
    GROUNDCITE_COMPAT_BASE_URL,
    GROUNDCITE_COMPAT_API_KEY,
    GROUNDCITE_COMPAT_MODEL,
    BEDROCK_MODEL_ID,
    AWS_SECRET_ACCESS_KEY,
    AWS_SESSION_TOKEN,
];

/// The variable's value, if set and not blank (a blank variable counts as
/// unset, as an empty key is never meant).
pub fn var(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

/// A secret variable's value, wrapped at once.
pub fn secret(name: &str) -> Option<crate::SecretString> {
    var(name).map(crate::SecretString::new)
}

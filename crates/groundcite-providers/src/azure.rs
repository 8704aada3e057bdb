//! Azure OpenAI: both routes, key or Microsoft Entra ID authentication.
//!
//! - **v1 route** (default): `POST {endpoint}/openai/v1/chat/completions`,
//!   no `api-version`, the deployment name as `model`.
//! - **versioned route**: `POST {endpoint}/openai/deployments/{deployment}/chat/completions?api-version=2024-10-21`
//!   (structured outputs need 2024-08-01-preview or later; 2024-10-21 is
//!   the stable version the seed names).
//!
//! Authentication: an `api-key` header, or `Authorization: Bearer` with a
//! Microsoft Entra token from a token in the environment, a client secret,
//! workload identity (a federated token file), managed identity (IMDS) or the
//! Azure CLI. Tokens are cached until five minutes before they expire. The
//! scope is `https://cognitiveservices.azure.com/.default`, or
//! `https://ai.azure.com/.default` for Foundry project endpoints
//! (`*.services.ai.azure.com`). Every endpoint (resource, authority host,
//! IMDS, the `az` program) can be overridden, so tests point them at a local
//! server.

use url::Url;

pub use crate::credential::{
    AppServiceIdentity, AzureCredential, DEFAULT_AUTHORITY_HOST, DEFAULT_IMDS_ENDPOINT,
    IdentityEndpoints, TokenProvider,
};
use crate::error::{ErrorKind, ProviderError};
use crate::http::HttpConfig;
use crate::openai::{ChatAuth, ChatCompletions, Quirks, TokenLimitField, join};

/// The stable API version of the versioned route.
pub const DEFAULT_API_VERSION: &str = "2024-10-21";
/// Scope of Azure OpenAI resources.
pub const COGNITIVE_SERVICES_SCOPE: &str = "https://cognitiveservices.azure.com/.default";
/// Scope of Azure AI Foundry project endpoints.
pub const FOUNDRY_SCOPE: &str = "https://ai.azure.com/.default";

const PROVIDER: &str = "azure";

/// Which Azure OpenAI route to call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AzureRoute {
    /// `/openai/v1/chat/completions`, no api-version.
    V1,
    /// `/openai/deployments/{deployment}/chat/completions?api-version=…`.
    Versioned {
        /// The API version, e.g. [`DEFAULT_API_VERSION`].
        api_version: String,
    },
}

/// Everything an Azure OpenAI client needs.
#[derive(Debug, Clone)]
pub struct AzureConfig {
    /// The resource endpoint, `https://RESOURCE.openai.azure.com` (a trailing
    /// `/openai/v1` is accepted and ignored).
    pub endpoint: Url,
    /// The deployment name.
    pub deployment: String,
    /// Which route.
    pub route: AzureRoute,
    /// Credentials.
    pub credential: AzureCredential,
    /// Token scope; by default chosen from the endpoint ([`default_scope`]).
    pub scope: Option<String>,
    /// Identity endpoints.
    pub identity: IdentityEndpoints,
    /// Timeouts and retries.
    pub http: HttpConfig,
}

/// The Entra scope for `endpoint`: Foundry project endpoints
/// (`*.services.ai.azure.com`) use `https://ai.azure.com/.default`, Azure
/// OpenAI resources `https://cognitiveservices.azure.com/.default`.
pub fn default_scope(endpoint: &Url) -> &'static str {
    match endpoint.host_str() {
        Some(h) if h.ends_with(".services.ai.azure.com") => FOUNDRY_SCOPE,
        _ => COGNITIVE_SERVICES_SCOPE,
    }
}

/// The chat endpoint URL of `config`'s route.
pub fn chat_url(config: &AzureConfig) -> Result<Url, ProviderError> {
    let mut base = config.endpoint.clone();
    // Accept an endpoint given with the v1 suffix (the OpenAI SDK's base URL).
    let trimmed = base
        .path()
        .trim_end_matches('/')
        .trim_end_matches("/openai/v1")
        .to_string();
    base.set_path(&trimmed);
    base.set_query(None);
    let bad =
        |e: String| ProviderError::new(ErrorKind::Config, PROVIDER, format!("bad endpoint: {e}"));
    match &config.route {
        AzureRoute::V1 => join(&base, "openai/v1/chat/completions").map_err(bad),
        AzureRoute::Versioned { api_version } => {
            let mut segments = vec!["openai", "deployments"];
            segments.push(&config.deployment);
            segments.push("chat");
            segments.push("completions");
            let mut url = base.clone();
            url.path_segments_mut()
                .map_err(|_| bad("the endpoint cannot have a path".into()))?
                .pop_if_empty()
                .extend(segments);
            url.query_pairs_mut()
                .append_pair("api-version", api_version);
            Ok(url)
        }
    }
}

/// An Azure OpenAI Chat Completions client.
pub fn azure_openai(config: AzureConfig) -> Result<ChatCompletions, ProviderError> {
    let url = chat_url(&config)?;
    let scope = config
        .scope
        .clone()
        .unwrap_or_else(|| default_scope(&config.endpoint).to_string());
    let auth = match config.credential {
        AzureCredential::ApiKey(k) => ChatAuth::AzureApiKey(k),
        other => ChatAuth::Entra(std::sync::Arc::new(TokenProvider::new(
            other,
            scope,
            config.identity.clone(),
        ))),
    };
    let (model, quirks) = match &config.route {
        AzureRoute::V1 => (Some(config.deployment.clone()), Quirks::OPENAI),
        AzureRoute::Versioned { .. } => (
            None,
            Quirks {
                token_limit_field: TokenLimitField::MaxTokens,
                ..Quirks::OPENAI
            },
        ),
    };
    ChatCompletions::azure(url, model, auth, quirks, config.http)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(endpoint: &str, route: AzureRoute) -> AzureConfig {
        AzureConfig {
            endpoint: Url::parse(endpoint).unwrap(),
            deployment: "gpt-4o".into(),
            route,
            credential: AzureCredential::AzureCli,
            scope: None,
            identity: IdentityEndpoints::default(),
            http: HttpConfig::default(),
        }
    }

    #[test]
    fn routes() {
        let v1 = config("https://res.openai.azure.com", AzureRoute::V1);
        assert_eq!(
            chat_url(&v1).unwrap().as_str(),
            "https://res.openai.azure.com/openai/v1/chat/completions"
        );
        let v1 = config("https://res.openai.azure.com/openai/v1/", AzureRoute::V1);
        assert_eq!(
            chat_url(&v1).unwrap().as_str(),
            "https://res.openai.azure.com/openai/v1/chat/completions"
        );
        let versioned = config(
            "https://res.openai.azure.com/",
            AzureRoute::Versioned {
                api_version: DEFAULT_API_VERSION.into(),
            },
        );
        assert_eq!(
            chat_url(&versioned).unwrap().as_str(),
            "https://res.openai.azure.com/openai/deployments/gpt-4o/chat/completions?api-version=2024-10-21"
        );
    }

    #[test]
    fn scopes() {
        let u = |s| Url::parse(s).unwrap();
        assert_eq!(
            default_scope(&u("https://res.openai.azure.com")),
            COGNITIVE_SERVICES_SCOPE
        );
        assert_eq!(
            default_scope(&u("https://proj.services.ai.azure.com/api/projects/p")),
            FOUNDRY_SCOPE
        );
    }
}

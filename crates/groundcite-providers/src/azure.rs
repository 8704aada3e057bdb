//! Azure OpenAI: both routes, key or Microsoft Entra ID authentication.
//!
//! - **v1 route** (default): `POST {endpoint}/openai/v1/chat/completions`,
//!   no `api-version`, the deployment name as `model`.
//! - **v1 Responses route**: `POST {endpoint}/openai/v1/responses`, the
//!   Responses API ([`crate::Responses`], `text.format` structured output,
//!   `max_output_tokens`), the deployment name as `model`; chosen by
//!   [`AzureRoute::V1Responses`], built by [`azure_responses`].
//! - **versioned route**: `POST {endpoint}/openai/deployments/{deployment}/chat/completions?api-version=2024-10-21`
//!   (structured outputs need 2024-08-01-preview or later; 2024-10-21 is
//!   the stable version the seed names).
//!
//! The output-token limit: the v1 route sends `max_completion_tokens`
//! (OpenAI's current name, the only one reasoning deployments — o-series,
//! gpt-5 — accept). The versioned route sends what its api-version
//! documents ([`token_limit_field`]): `max_completion_tokens` from
//! 2024-09-01-preview on (previews) and for GA versions after 2024-10-21,
//! `max_tokens` for 2024-10-21 (whose specification has no
//! `max_completion_tokens`) and older versions. [`AzureConfig::token_limit_field`]
//! forces either.
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
use crate::generator::Generator;
use crate::http::HttpConfig;
use crate::openai::{ChatAuth, ChatCompletions, Quirks, TokenLimitField, join};
use crate::responses::Responses;

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
    /// `/openai/v1/responses`, no api-version: the Responses API.
    V1Responses,
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
    /// The output-token limit's field; by default chosen from the route
    /// ([`token_limit_field`]).
    pub token_limit_field: Option<TokenLimitField>,
    /// Timeouts and retries.
    pub http: HttpConfig,
}

/// The first preview api-version that takes `max_completion_tokens`
/// (Microsoft's reasoning-model guide: support for o1-preview and o1-mini,
/// with `max_completion_tokens` replacing `max_tokens`, came in it).
pub const FIRST_PREVIEW_WITH_MAX_COMPLETION_TOKENS: &str = "2024-09-01";
/// The last GA api-version without `max_completion_tokens` (its
/// specification's chat request documents `max_tokens` only).
pub const LAST_GA_WITHOUT_MAX_COMPLETION_TOKENS: &str = "2024-10-21";

/// The output-token limit's field for `route`: `max_completion_tokens` on the
/// v1 route; on the versioned route, `max_completion_tokens` for previews
/// dated 2024-09-01 or later and GA versions dated after 2024-10-21,
/// `max_tokens` for older ones. An api-version that is not
/// `YYYY-MM-DD[-preview]` gets the current name, `max_completion_tokens`.
pub fn token_limit_field(route: &AzureRoute) -> TokenLimitField {
    // (The Responses route's field is `max_output_tokens`, whatever this says.)
    let AzureRoute::Versioned { api_version } = route else {
        return TokenLimitField::MaxCompletionTokens;
    };
    let v = api_version.trim();
    let (date, preview) = match v.strip_suffix("-preview") {
        Some(d) => (d, true),
        None => (v, false),
    };
    let is_date = date.len() == 10
        && date.char_indices().all(|(i, c)| {
            if i == 4 || i == 7 {
                c == '-'
            } else {
                c.is_ascii_digit()
            }
        });
    if !is_date {
        return TokenLimitField::MaxCompletionTokens;
    }
    // ISO dates compare as strings.
    let takes_it = if preview {
        date >= FIRST_PREVIEW_WITH_MAX_COMPLETION_TOKENS
    } else {
        date > LAST_GA_WITHOUT_MAX_COMPLETION_TOKENS
    };
    if takes_it {
        TokenLimitField::MaxCompletionTokens
    } else {
        TokenLimitField::MaxTokens
    }
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

/// The endpoint URL of `config`'s route (chat completions, or responses
/// for [`AzureRoute::V1Responses`]).
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
        AzureRoute::V1Responses => join(&base, "openai/v1/responses").map_err(bad),
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

/// The `api-key` header or an Entra token provider for `config`.
fn auth(config: &AzureConfig) -> ChatAuth {
    let scope = config
        .scope
        .clone()
        .unwrap_or_else(|| default_scope(&config.endpoint).to_string());
    match &config.credential {
        AzureCredential::ApiKey(k) => ChatAuth::AzureApiKey(k.clone()),
        other => ChatAuth::Entra(std::sync::Arc::new(TokenProvider::new(
            other.clone(),
            scope,
            config.identity.clone(),
        ))),
    }
}

/// An Azure OpenAI client for `config`'s route: Chat Completions
/// ([`azure_openai`]) or the Responses API ([`azure_responses`]).
pub fn azure_generator(config: AzureConfig) -> Result<Box<dyn Generator>, ProviderError> {
    Ok(match config.route {
        AzureRoute::V1Responses => Box::new(azure_responses(config)?),
        _ => Box::new(azure_openai(config)?),
    })
}

/// An Azure OpenAI Responses client on the v1 route
/// (`{endpoint}/openai/v1/responses`); the route in `config` is ignored.
pub fn azure_responses(config: AzureConfig) -> Result<Responses, ProviderError> {
    let url = chat_url(&AzureConfig {
        route: AzureRoute::V1Responses,
        ..config.clone()
    })?;
    let auth = auth(&config);
    Responses::azure(url, config.deployment, auth, config.http)
}

/// An Azure OpenAI Chat Completions client (the v1 or versioned route; a
/// [`AzureRoute::V1Responses`] config is refused: use [`azure_responses`]).
pub fn azure_openai(config: AzureConfig) -> Result<ChatCompletions, ProviderError> {
    if config.route == AzureRoute::V1Responses {
        return Err(ProviderError::new(
            ErrorKind::Config,
            PROVIDER,
            "the v1 Responses route needs the Responses client (azure_responses)",
        ));
    }
    let url = chat_url(&config)?;
    let auth = auth(&config);
    let model = match &config.route {
        AzureRoute::V1 | AzureRoute::V1Responses => Some(config.deployment.clone()),
        AzureRoute::Versioned { .. } => None,
    };
    let quirks = Quirks {
        token_limit_field: config
            .token_limit_field
            .unwrap_or_else(|| token_limit_field(&config.route)),
        ..Quirks::OPENAI
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
            token_limit_field: None,
            http: HttpConfig::default(),
        }
    }

    #[test]
    fn token_limit_fields() {
        let versioned = |v: &str| {
            token_limit_field(&AzureRoute::Versioned {
                api_version: v.into(),
            })
        };
        assert_eq!(
            token_limit_field(&AzureRoute::V1),
            TokenLimitField::MaxCompletionTokens
        );
        for v in [
            "2024-09-01-preview",
            "2024-10-01-preview",
            "2024-12-01-preview",
            "2025-04-01-preview",
            "2025-06-01",
            " 2025-01-01-preview ",
            "preview",
            "latest",
        ] {
            assert_eq!(versioned(v), TokenLimitField::MaxCompletionTokens, "{v}");
        }
        for v in [
            DEFAULT_API_VERSION,
            "2024-10-21",
            "2024-08-01-preview",
            "2024-06-01",
            "2024-02-15-preview",
            "2023-05-15",
        ] {
            assert_eq!(versioned(v), TokenLimitField::MaxTokens, "{v}");
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
        let responses = config(
            "https://res.openai.azure.com/openai/v1",
            AzureRoute::V1Responses,
        );
        assert_eq!(
            chat_url(&responses).unwrap().as_str(),
            "https://res.openai.azure.com/openai/v1/responses"
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

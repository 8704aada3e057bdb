//! Microsoft Entra ID credentials for Azure OpenAI: where they come from
//! ([`AzureCredential`]), the identity endpoints, and [`TokenProvider`],
//! which obtains and caches tokens. Its own module so that the Chat
//! Completions client (which holds a token provider) and the Azure client
//! builder (which makes that client) do not depend on each other.

use std::path::PathBuf;
use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::Value;
use url::Url;

use crate::error::{ErrorKind, ProviderError};
use crate::http::{Http, read_body};
use crate::secret::SecretString;

/// Default Microsoft Entra authority host.
pub const DEFAULT_AUTHORITY_HOST: &str = "https://login.microsoftonline.com";
/// Default managed-identity token endpoint (Azure Instance Metadata Service).
pub const DEFAULT_IMDS_ENDPOINT: &str = "http://169.254.169.254/metadata/identity/oauth2/token";

/// A token is refreshed when it has less than this left.
const REFRESH_MARGIN: Duration = Duration::from_secs(300);

const PROVIDER: &str = "azure";

/// Where credentials come from.
#[derive(Debug, Clone)]
pub enum AzureCredential {
    /// An API key, sent as the `api-key` header.
    ApiKey(SecretString),
    /// A ready Entra access token (from the environment), used as is.
    Token(SecretString),
    /// An application's client secret (client-credentials grant).
    ClientSecret {
        /// Tenant ID.
        tenant_id: String,
        /// Application (client) ID.
        client_id: String,
        /// The secret.
        secret: SecretString,
    },
    /// Workload identity: a federated token read from a file (AKS sets
    /// `AZURE_FEDERATED_TOKEN_FILE`), exchanged as a client assertion.
    WorkloadIdentity {
        /// Tenant ID.
        tenant_id: String,
        /// Application (client) ID.
        client_id: String,
        /// The federated token file, read at each exchange (it rotates).
        token_file: PathBuf,
    },
    /// Managed identity: through App Service's identity endpoint when
    /// [`IdentityEndpoints::app_service`] is set (App Service, Functions,
    /// Container Apps), else through IMDS (VMs, AKS node identity);
    /// `client_id` selects a user-assigned identity.
    ManagedIdentity {
        /// Client ID of a user-assigned identity.
        client_id: Option<String>,
    },
    /// The Azure CLI's signed-in account (`az account get-access-token`).
    AzureCli,
}

impl AzureCredential {
    /// Short name (for messages).
    pub fn name(&self) -> &'static str {
        match self {
            AzureCredential::ApiKey(_) => "api-key",
            AzureCredential::Token(_) => "token",
            AzureCredential::ClientSecret { .. } => "client-secret",
            AzureCredential::WorkloadIdentity { .. } => "workload-identity",
            AzureCredential::ManagedIdentity { .. } => "managed-identity",
            AzureCredential::AzureCli => "azure-cli",
        }
    }
}

/// The identity endpoints, overridable (tests, sovereign clouds, proxies).
#[derive(Debug, Clone)]
pub struct IdentityEndpoints {
    /// Microsoft Entra authority host.
    pub authority_host: Url,
    /// Managed-identity token endpoint.
    pub imds: Url,
    /// The Azure CLI program.
    pub az_command: String,
    /// App Service's managed-identity endpoint (`IDENTITY_ENDPOINT` and
    /// `IDENTITY_HEADER`, set by the platform); used instead of IMDS.
    pub app_service: Option<AppServiceIdentity>,
}

/// App Service's (and Functions', Container Apps') local token endpoint.
#[derive(Debug, Clone)]
pub struct AppServiceIdentity {
    /// `IDENTITY_ENDPOINT`.
    pub endpoint: Url,
    /// `IDENTITY_HEADER`: sent as `X-IDENTITY-HEADER`; a secret.
    pub header: SecretString,
}

impl AppServiceIdentity {
    /// From `IDENTITY_ENDPOINT` and `IDENTITY_HEADER`, when both are set
    /// (and the endpoint is a URL).
    pub fn from_env() -> Option<AppServiceIdentity> {
        let endpoint = crate::env::var("IDENTITY_ENDPOINT")?;
        let header = crate::env::secret("IDENTITY_HEADER")?;
        Some(AppServiceIdentity {
            endpoint: Url::parse(&endpoint).ok()?,
            header,
        })
    }
}

impl Default for IdentityEndpoints {
    fn default() -> Self {
        IdentityEndpoints {
            // Constant, valid URLs: parsing cannot fail.
            authority_host: Url::parse(DEFAULT_AUTHORITY_HOST).unwrap_or_else(|_| unreachable!()),
            imds: Url::parse(DEFAULT_IMDS_ENDPOINT).unwrap_or_else(|_| unreachable!()),
            az_command: "az".to_string(),
            app_service: None,
        }
    }
}

#[derive(Debug, Clone)]
struct Cached {
    token: SecretString,
    expires_at: Instant,
}

/// Entra tokens for one credential and scope, cached until shortly before
/// they expire.
#[derive(Debug)]
pub struct TokenProvider {
    credential: AzureCredential,
    scope: String,
    identity: IdentityEndpoints,
    cache: Mutex<Option<Cached>>,
}

impl TokenProvider {
    /// A provider for `credential` (not an API key) and `scope`.
    pub fn new(credential: AzureCredential, scope: String, identity: IdentityEndpoints) -> Self {
        TokenProvider {
            credential,
            scope,
            identity,
            cache: Mutex::new(None),
        }
    }

    /// A valid token, from the cache or freshly obtained.
    pub(crate) async fn token(&self, http: &Http) -> Result<SecretString, ProviderError> {
        if let Ok(guard) = self.cache.lock()
            && let Some(c) = guard.as_ref()
            && c.expires_at > Instant::now() + REFRESH_MARGIN
        {
            return Ok(c.token.clone());
        }
        let (token, lifetime) = self.fetch(http).await?;
        if let Ok(mut guard) = self.cache.lock() {
            *guard = Some(Cached {
                token: token.clone(),
                expires_at: Instant::now() + lifetime,
            });
        }
        Ok(token)
    }

    /// The resource form of the scope (IMDS and the Azure CLI take a
    /// resource, not a scope).
    fn resource(&self) -> &str {
        self.scope.trim_end_matches("/.default")
    }

    async fn fetch(&self, http: &Http) -> Result<(SecretString, Duration), ProviderError> {
        match &self.credential {
            AzureCredential::ApiKey(_) => Err(ProviderError::new(
                ErrorKind::Config,
                PROVIDER,
                "an API key is not a token credential",
            )),
            // A token from the environment: its expiry is unknown; use it
            // for an hour at most before reading it again would change nothing.
            AzureCredential::Token(t) => Ok((t.clone(), Duration::from_secs(3600))),
            AzureCredential::ClientSecret {
                tenant_id,
                client_id,
                secret,
            } => {
                let form = vec![
                    ("client_id", client_id.clone()),
                    ("client_secret", secret.expose().to_string()),
                    ("scope", self.scope.clone()),
                    ("grant_type", "client_credentials".to_string()),
                ];
                self.entra_exchange(http, tenant_id, form, secret.clone())
                    .await
            }
            AzureCredential::WorkloadIdentity {
                tenant_id,
                client_id,
                token_file,
            } => {
                let assertion = std::fs::read_to_string(token_file).map_err(|e| {
                    ProviderError::new(
                        ErrorKind::Credential,
                        PROVIDER,
                        format!(
                            "cannot read the federated token file {}: {e}",
                            token_file.display()
                        ),
                    )
                })?;
                let assertion = SecretString::new(assertion.trim());
                let form = vec![
                    ("client_id", client_id.clone()),
                    (
                        "client_assertion_type",
                        "urn:ietf:params:oauth:client-assertion-type:jwt-bearer".to_string(),
                    ),
                    ("client_assertion", assertion.expose().to_string()),
                    ("scope", self.scope.clone()),
                    ("grant_type", "client_credentials".to_string()),
                ];
                self.entra_exchange(http, tenant_id, form, assertion).await
            }
            AzureCredential::ManagedIdentity { client_id } => {
                self.managed_identity(http, client_id.as_deref()).await
            }
            AzureCredential::AzureCli => self.azure_cli().await,
        }
    }

    async fn entra_exchange(
        &self,
        http: &Http,
        tenant_id: &str,
        form: Vec<(&'static str, String)>,
        secret: SecretString,
    ) -> Result<(SecretString, Duration), ProviderError> {
        let mut url = self.identity.authority_host.clone();
        url.path_segments_mut()
            .map_err(|_| ProviderError::new(ErrorKind::Config, PROVIDER, "bad authority host"))?
            .pop_if_empty()
            .extend([tenant_id, "oauth2", "v2.0", "token"]);
        let body = url::form_urlencoded::Serializer::new(String::new())
            .extend_pairs(form.iter().map(|(k, v)| (*k, v.as_str())))
            .finish();
        let client = http.client().clone();
        let sent = http
            .send(
                PROVIDER,
                || {
                    client
                        .post(url.clone())
                        .header("content-type", "application/x-www-form-urlencoded")
                        .header("accept", "application/json")
                        .body(body.clone())
                },
                &["x-ms-request-id", "client-request-id"],
                std::slice::from_ref(&secret),
            )
            .await
            .map_err(credential_error)?;
        let (text, ..) = read_body(sent, PROVIDER).await.map_err(credential_error)?;
        parse_token(&text, "Microsoft Entra ID")
    }

    async fn managed_identity(
        &self,
        http: &Http,
        client_id: Option<&str>,
    ) -> Result<(SecretString, Duration), ProviderError> {
        // App Service: its own endpoint, api-version 2019-08-01, and a
        // per-instance secret header instead of IMDS's `Metadata: true`.
        let (mut url, api_version, header, secrets) = match &self.identity.app_service {
            Some(a) => (
                a.endpoint.clone(),
                "2019-08-01",
                ("x-identity-header", a.header.expose().to_string()),
                vec![a.header.clone()],
            ),
            None => (
                self.identity.imds.clone(),
                "2018-02-01",
                ("metadata", "true".to_string()),
                Vec::new(),
            ),
        };
        {
            let mut q = url.query_pairs_mut();
            q.append_pair("api-version", api_version);
            q.append_pair("resource", self.resource());
            if let Some(id) = client_id {
                q.append_pair("client_id", id);
            }
        }
        let client = http.client().clone();
        let sent = http
            .send(
                PROVIDER,
                || client.get(url.clone()).header(header.0, header.1.as_str()),
                &["x-ms-request-id"],
                &secrets,
            )
            .await
            .map_err(credential_error)?;
        let (text, ..) = read_body(sent, PROVIDER).await.map_err(credential_error)?;
        parse_token(&text, "the managed identity endpoint")
    }

    async fn azure_cli(&self) -> Result<(SecretString, Duration), ProviderError> {
        let run = tokio::process::Command::new(&self.identity.az_command)
            .args([
                "account",
                "get-access-token",
                "--resource",
                self.resource(),
                "-o",
                "json",
            ])
            .stdin(std::process::Stdio::null())
            .kill_on_drop(true)
            .output();
        let output = tokio::time::timeout(Duration::from_secs(30), run)
            .await
            .map_err(|_| {
                ProviderError::new(
                    ErrorKind::Credential,
                    PROVIDER,
                    "the Azure CLI did not answer within 30 seconds",
                )
            })?
            .map_err(|e| {
                ProviderError::new(
                    ErrorKind::Credential,
                    PROVIDER,
                    format!(
                        "cannot run the Azure CLI ({}): {e}; install it and run `az login`, or choose another credential",
                        self.identity.az_command
                    ),
                )
            })?;
        if !output.status.success() {
            let stderr = String::from_utf8_lossy(&output.stderr);
            return Err(ProviderError::new(
                ErrorKind::Credential,
                PROVIDER,
                format!(
                    "the Azure CLI failed ({}); run `az login`: {}",
                    output.status,
                    groundcite_core::truncate_chars(stderr.trim(), 300)
                ),
            ));
        }
        let text = String::from_utf8_lossy(&output.stdout);
        parse_token(&text, "the Azure CLI")
    }
}

fn credential_error(e: ProviderError) -> ProviderError {
    let message = format!("cannot obtain a Microsoft Entra token: {}", e.message());
    let mut out = ProviderError::new(ErrorKind::Credential, PROVIDER, message)
        .with_attempts(e.attempts())
        .with_request_id(e.request_id().map(str::to_string))
        .with_retry_after(e.retry_after());
    if let Some(s) = e.status() {
        out = out.with_status(s);
    }
    if let Some(b) = e.body() {
        out = out.with_body(b.to_string());
    }
    out
}

/// Reads a token response of Entra (`access_token`, `expires_in`), IMDS
/// (`access_token`, `expires_in`/`expires_on` as strings) or the Azure CLI
/// (`accessToken`, `expires_on`).
fn parse_token(text: &str, from: &str) -> Result<(SecretString, Duration), ProviderError> {
    let bad = |what: &str| {
        ProviderError::new(
            ErrorKind::Credential,
            PROVIDER,
            format!("the token response of {from} {what}"),
        )
    };
    let v: Value = serde_json::from_str(text).map_err(|_| bad("is not JSON"))?;
    let token = v
        .get("access_token")
        .or_else(|| v.get("accessToken"))
        .and_then(Value::as_str)
        .filter(|t| !t.is_empty())
        .ok_or_else(|| bad("has no access token"))?;
    let num = |k: &str| {
        v.get(k).and_then(|x| {
            x.as_u64()
                .or_else(|| x.as_str().and_then(|s| s.trim().parse().ok()))
        })
    };
    let lifetime = if let Some(secs) = num("expires_in") {
        Duration::from_secs(secs)
    } else if let Some(epoch) = num("expires_on") {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        Duration::from_secs(epoch.saturating_sub(now))
    } else {
        // Older Azure CLIs give only a local-time `expiresOn`; assume the
        // token is short-lived and ask again soon.
        REFRESH_MARGIN + Duration::from_secs(60)
    };
    Ok((SecretString::new(token), lifetime))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_responses() {
        let (t, d) = parse_token(r#"{"access_token":"abc","expires_in":3599}"#, "x").unwrap();
        assert_eq!(t.expose(), "abc");
        assert_eq!(d, Duration::from_secs(3599));
        let (_, d) = parse_token(r#"{"access_token":"abc","expires_in":"120"}"#, "x").unwrap();
        assert_eq!(d, Duration::from_secs(120));
        let (t, _) = parse_token(r#"{"accessToken":"cli","expires_on":1}"#, "x").unwrap();
        assert_eq!(t.expose(), "cli");
        assert!(parse_token("{}", "x").is_err());
    }
}

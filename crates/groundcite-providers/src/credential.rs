//! Microsoft Entra ID credentials for Azure OpenAI: where they come from
//! ([`AzureCredential`]), the identity endpoints, and [`TokenProvider`],
//! which obtains and caches tokens. Its own module so that the Chat
//! Completions client (which holds a token provider) and the Azure client
//! builder (which makes that client) do not depend on each other.
//!
//! Refreshes are single-flight: however many requests find the token
//! missing, expired or within [`REFRESH_MARGIN`] of expiry, one of them
//! fetches (one Entra call, one IMDS call, one `az` process) and the others
//! wait for its result, success or failure. While the old token still has
//! [`MIN_REMAINING`] left, requests that find a refresh under way use it
//! instead of waiting, and a failed early refresh keeps serving it (the next
//! request tries again).

use std::path::PathBuf;
use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use tokio::sync::Mutex as AsyncMutex;

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
pub const REFRESH_MARGIN: Duration = Duration::from_secs(300);
/// A token with at least this left is still used while a refresh is under
/// way (or after an early refresh failed).
pub const MIN_REMAINING: Duration = Duration::from_secs(60);

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
    fetched_at: Instant,
}

/// The outcome of the last refresh that failed, kept for the callers that
/// waited on it.
#[derive(Debug)]
struct Failure {
    at: Instant,
    error: ProviderError,
}

/// Entra tokens for one credential and scope, cached until shortly before
/// they expire, refreshed by one caller at a time (the module documentation
/// says how).
#[derive(Debug)]
pub struct TokenProvider {
    credential: AzureCredential,
    scope: String,
    identity: IdentityEndpoints,
    cache: Mutex<Option<Cached>>,
    /// Held by the one caller that refreshes; holds the last failure.
    refresh: AsyncMutex<Option<Failure>>,
}

impl TokenProvider {
    /// A provider for `credential` (not an API key) and `scope`.
    pub fn new(credential: AzureCredential, scope: String, identity: IdentityEndpoints) -> Self {
        TokenProvider {
            credential,
            scope,
            identity,
            cache: Mutex::new(None),
            refresh: AsyncMutex::new(None),
        }
    }

    /// The cached token, when `ok` accepts it.
    fn cached(&self, ok: impl Fn(&Cached) -> bool) -> Option<SecretString> {
        let guard = self.cache.lock().ok()?;
        guard.as_ref().filter(|c| ok(c)).map(|c| c.token.clone())
    }

    /// The cached token while it has [`MIN_REMAINING`] left.
    fn still_usable(&self) -> Option<SecretString> {
        let now = Instant::now();
        self.cached(|c| c.expires_at > now + MIN_REMAINING)
    }

    /// A valid token, from the cache or freshly obtained by a single flight.
    pub(crate) async fn token(&self, http: &Http) -> Result<SecretString, ProviderError> {
        let asked = Instant::now();
        if let Some(t) = self.cached(|c| c.expires_at > asked + REFRESH_MARGIN) {
            return Ok(t);
        }
        let mut last_failure = match self.refresh.try_lock() {
            Ok(guard) => guard,
            Err(_) => {
                // A refresh is under way: refresh ahead, keep using the old
                // token while it lasts; otherwise wait for the refresh.
                if let Some(t) = self.still_usable() {
                    return Ok(t);
                }
                self.refresh.lock().await
            }
        };
        // A refresh that completed after this caller asked is the one it
        // waited for: its token (even one shorter-lived than the margin) or
        // its failure is this caller's too.
        let now = Instant::now();
        if let Some(t) = self.cached(|c| {
            c.expires_at > now + REFRESH_MARGIN || (c.fetched_at >= asked && c.expires_at > now)
        }) {
            return Ok(t);
        }
        if let Some(f) = last_failure.as_ref()
            && f.at >= asked
        {
            return self.still_usable().ok_or_else(|| copy_error(&f.error));
        }
        match self.fetch(http).await {
            Ok((token, lifetime)) => {
                let fetched_at = Instant::now();
                if let Ok(mut guard) = self.cache.lock() {
                    *guard = Some(Cached {
                        token: token.clone(),
                        expires_at: fetched_at + lifetime,
                        fetched_at,
                    });
                }
                *last_failure = None;
                Ok(token)
            }
            Err(e) => {
                *last_failure = Some(Failure {
                    at: Instant::now(),
                    error: copy_error(&e),
                });
                // An early refresh that failed: the old token still works.
                self.still_usable().ok_or(e)
            }
        }
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

/// The same error again, for each caller that waited on the refresh that
/// failed (`ProviderError` is not `Clone`: it is one pointer wide).
fn copy_error(e: &ProviderError) -> ProviderError {
    let mut out = ProviderError::new(e.kind(), e.provider(), e.message())
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
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    use super::*;
    use crate::http::HttpConfig;

    /// A local managed-identity endpoint that counts the token requests it
    /// answers, each after `delay` (so that concurrent callers overlap),
    /// with `status` and `body`.
    async fn token_endpoint(
        status: u16,
        body: &'static str,
        delay: Duration,
    ) -> (Url, Arc<AtomicUsize>) {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let hits = Arc::new(AtomicUsize::new(0));
        let counter = hits.clone();
        tokio::spawn(async move {
            loop {
                let Ok((mut sock, _)) = listener.accept().await else {
                    return;
                };
                let counter = counter.clone();
                tokio::spawn(async move {
                    let mut head = Vec::new();
                    let mut buf = [0u8; 1024];
                    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                        match sock.read(&mut buf).await {
                            Ok(0) | Err(_) => return,
                            Ok(n) => head.extend_from_slice(&buf[..n]),
                        }
                    }
                    counter.fetch_add(1, Ordering::SeqCst);
                    tokio::time::sleep(delay).await;
                    let reply = format!(
                        "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                        body.len()
                    );
                    let _ = sock.write_all(reply.as_bytes()).await;
                    let _ = sock.shutdown().await;
                });
            }
        });
        let url = Url::parse(&format!("http://{addr}/metadata/identity/oauth2/token")).unwrap();
        (url, hits)
    }

    fn provider(imds: Url) -> Arc<TokenProvider> {
        Arc::new(TokenProvider::new(
            AzureCredential::ManagedIdentity { client_id: None },
            "https://cognitiveservices.azure.com/.default".into(),
            IdentityEndpoints {
                imds,
                ..IdentityEndpoints::default()
            },
        ))
    }

    fn http() -> Http {
        Http::new(HttpConfig::default(), PROVIDER).unwrap()
    }

    /// `n` concurrent token requests; their results.
    async fn concurrently(
        p: &Arc<TokenProvider>,
        n: usize,
    ) -> Vec<Result<SecretString, ProviderError>> {
        let http = http();
        let mut tasks = Vec::new();
        for _ in 0..n {
            let p = p.clone();
            let http = http.clone();
            tasks.push(tokio::spawn(async move { p.token(&http).await }));
        }
        let mut out = Vec::new();
        for t in tasks {
            out.push(t.await.unwrap());
        }
        out
    }

    fn set_cache(p: &TokenProvider, token: &str, left: Duration) {
        let now = Instant::now();
        *p.cache.lock().unwrap() = Some(Cached {
            token: SecretString::new(token),
            expires_at: now + left,
            fetched_at: now,
        });
    }

    const FRESH: &str =
        r#"{"access_token":"fresh-token","expires_in":"3599","token_type":"Bearer"}"#;

    #[tokio::test]
    async fn concurrent_requests_with_no_token_fetch_one() {
        let (url, hits) = token_endpoint(200, FRESH, Duration::from_millis(300)).await;
        let p = provider(url);
        for r in concurrently(&p, 16).await {
            assert_eq!(r.unwrap().expose(), "fresh-token");
        }
        assert_eq!(hits.load(Ordering::SeqCst), 1);
        // Cached now: no fetch at all.
        concurrently(&p, 8).await;
        assert_eq!(hits.load(Ordering::SeqCst), 1);
    }

    #[tokio::test]
    async fn concurrent_requests_with_an_expired_token_fetch_one() {
        let (url, hits) = token_endpoint(200, FRESH, Duration::from_millis(300)).await;
        let p = provider(url);
        set_cache(&p, "old-token", Duration::ZERO);
        for r in concurrently(&p, 16).await {
            assert_eq!(r.unwrap().expose(), "fresh-token");
        }
        assert_eq!(hits.load(Ordering::SeqCst), 1);
    }

    /// Within the margin, one request refreshes ahead of expiry; the others
    /// keep the still-valid token or wait for the new one; one fetch.
    #[tokio::test]
    async fn a_token_near_expiry_is_refreshed_once_ahead_of_time() {
        let (url, hits) = token_endpoint(200, FRESH, Duration::from_millis(300)).await;
        let p = provider(url);
        set_cache(&p, "old-token", Duration::from_secs(120));
        for r in concurrently(&p, 16).await {
            let t = r.unwrap();
            assert!(["old-token", "fresh-token"].contains(&t.expose()));
        }
        assert_eq!(hits.load(Ordering::SeqCst), 1);
        assert_eq!(p.token(&http()).await.unwrap().expose(), "fresh-token");
        assert_eq!(hits.load(Ordering::SeqCst), 1);
    }

    /// A token that lives shorter than the margin is still one fetch per
    /// wave of callers, not one per caller.
    #[tokio::test]
    async fn a_short_lived_token_is_shared_by_its_waiters() {
        let (url, hits) = token_endpoint(
            200,
            r#"{"access_token":"short-token","expires_in":90}"#,
            Duration::from_millis(300),
        )
        .await;
        let p = provider(url);
        for r in concurrently(&p, 16).await {
            assert_eq!(r.unwrap().expose(), "short-token");
        }
        assert_eq!(hits.load(Ordering::SeqCst), 1);
    }

    /// A failed refresh is reported to every caller that waited on it, not
    /// retried by each of them.
    #[tokio::test]
    async fn a_failed_refresh_is_shared_by_its_waiters() {
        let (url, hits) = token_endpoint(
            400,
            r#"{"error":"invalid_request","error_description":"Identity not found"}"#,
            Duration::from_millis(300),
        )
        .await;
        let p = provider(url);
        for r in concurrently(&p, 16).await {
            let e = r.unwrap_err();
            assert_eq!(e.kind(), ErrorKind::Credential, "{e}");
            assert_eq!(e.status(), Some(400), "{e}");
        }
        assert_eq!(hits.load(Ordering::SeqCst), 1);
        // A later request tries again.
        assert!(p.token(&http()).await.is_err());
        assert_eq!(hits.load(Ordering::SeqCst), 2);
    }

    /// An early refresh that fails keeps serving the still-valid token.
    #[tokio::test]
    async fn a_failed_early_refresh_keeps_the_valid_token() {
        let (url, hits) = token_endpoint(400, "{}", Duration::ZERO).await;
        let p = provider(url);
        set_cache(&p, "old-token", Duration::from_secs(120));
        assert_eq!(p.token(&http()).await.unwrap().expose(), "old-token");
        assert_eq!(hits.load(Ordering::SeqCst), 1);
    }

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

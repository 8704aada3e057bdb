//! Configuration, shared state and trace commits (routes read it; it
//! knows nothing of them: the serve loop is in `serve.rs`).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use groundcite_ask::AskSettings;
use groundcite_core::MatchProfile;
use groundcite_index::Index;
use groundcite_providers::{Backend, Generator};
use groundcite_store::{Store, StoreError, TraceRecord};
use tokio::sync::Semaphore;

use crate::auth::ApiKeys;
use crate::error::{ApiError, ErrorCode};
use crate::metrics::Metrics;

/// What the service accepts, and how much at once.
#[derive(Debug, Clone)]
pub struct Limits {
    /// Largest request body, in bytes (413 `body_too_large`).
    pub max_body_bytes: usize,
    /// Most chunks in one request (413 `too_many_chunks`).
    pub max_chunks: usize,
    /// Longest chunk content, in bytes (422 `limit_exceeded`).
    pub max_chunk_bytes: usize,
    /// Most claims in an answer (422 `limit_exceeded`).
    pub max_claims: usize,
    /// Most citations in one claim (422 `limit_exceeded`).
    pub max_citations: usize,
    /// Longest quote, in characters (422 `limit_exceeded`).
    pub max_quote_chars: usize,
    /// Longest claim text, in characters (422 `limit_exceeded`).
    pub max_claim_chars: usize,
    /// Longest free-form answer or question, in bytes (422 `limit_exceeded`).
    pub max_text_bytes: usize,
    /// Time to the response head; 503 `timeout` after it.
    pub request_timeout: Duration,
    /// Requests served at once; more get 503 `overloaded` with Retry-After.
    pub max_concurrency: usize,
    /// Model generations at once (answer and chat completions).
    pub max_generations: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_body_bytes: 4 * 1024 * 1024,
            max_chunks: 200,
            max_chunk_bytes: 64 * 1024,
            max_claims: 64,
            max_citations: 16,
            max_quote_chars: 2_000,
            max_claim_chars: 4_000,
            max_text_bytes: 256 * 1024,
            request_timeout: Duration::from_secs(120),
            max_concurrency: 256,
            max_generations: 4,
        }
    }
}

/// The document corpus behind `POST /v1/ask`: an opened index (searched
/// concurrently, never updated while serving) and how to ask it.
#[derive(Clone)]
pub struct Corpus {
    /// Where chunks come from, shared by every request.
    pub source: CorpusSource,
    /// The sentence-embedding model of hybrid retrieval (`None`: BM25
    /// alone).
    pub embed: Option<Arc<dyn groundcite_index::Embed>>,
    /// Top-k, relevance gate, matching profile and claim policy defaults
    /// (a request may change top-k, profile and policy).
    pub settings: AskSettings,
    /// Merged into each ask trace's `options` (e.g. the docs folder and the
    /// quote mode), so a trace says what it was asked against.
    pub trace_options: groundcite_store::TraceOptions,
    /// The docs folder the index was built from, when its PDFs may be
    /// served to the web app's page previewer
    /// (`GET /v1/chunks/{chunk_id}/document`); `None` serves none.
    pub docs_dir: Option<std::path::PathBuf>,
}

/// Where `/v1/ask` finds chunks.
#[derive(Clone)]
pub enum CorpusSource {
    /// groundcite's own index of a docs folder.
    Index(Arc<Index>),
    /// A search service the team runs ([`groundcite_ask::Retriever`]).
    Retriever(Arc<dyn groundcite_ask::Retriever>),
}

impl CorpusSource {
    /// The index, when the corpus is one.
    pub fn index(&self) -> Option<&Arc<Index>> {
        match self {
            CorpusSource::Index(i) => Some(i),
            CorpusSource::Retriever(_) => None,
        }
    }
}

impl std::fmt::Debug for CorpusSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CorpusSource::Index(i) => f.debug_tuple("Index").field(i).finish(),
            CorpusSource::Retriever(r) => f.debug_tuple("Retriever").field(&r.name()).finish(),
        }
    }
}

impl std::fmt::Debug for Corpus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Corpus")
            .field("source", &self.source)
            .field(
                "embed",
                &self.embed.as_ref().map(|e| e.model_id().to_string()),
            )
            .field("settings", &self.settings)
            .finish_non_exhaustive()
    }
}

/// Everything the service is started with.
#[derive(Debug)]
pub struct ServerConfig {
    /// The trace store (migrated).
    pub store: Store,
    /// The accepted API keys.
    pub keys: ApiKeys,
    /// Request limits.
    pub limits: Limits,
    /// The answer backend of `/v1/answer`, if one is configured.
    pub backend: Option<Backend>,
    /// The generator behind `/v1/chat/completions` (the embedded model),
    /// if one is configured.
    pub chat: Option<Arc<dyn Generator>>,
    /// The corpus `/v1/ask` searches; `None` answers 409 `no_corpus`.
    pub corpus: Option<Corpus>,
    /// The default matching profile for requests that do not choose one.
    pub profile: MatchProfile,
    /// Delete traces older than this (checked hourly); `None` keeps them.
    pub retention: Option<Duration>,
    /// Cross-origin origins allowed (CORS); empty means CORS is off.
    pub cors_origins: Vec<String>,
}

/// Shared state: cheap to clone.
#[derive(Clone, Debug)]
pub struct AppState(pub(crate) Arc<Inner>);

#[derive(Debug)]
pub(crate) struct Inner {
    pub store: Store,
    pub keys: ApiKeys,
    pub limits: Limits,
    pub metrics: Metrics,
    pub backend: Option<Backend>,
    pub chat: Option<Arc<dyn Generator>>,
    pub corpus: Option<Corpus>,
    pub profile: MatchProfile,
    pub cors_origins: Vec<String>,
    pub ready: AtomicBool,
    pub requests: Arc<Semaphore>,
    pub generations: Arc<Semaphore>,
    pub retention: Option<Duration>,
}

impl AppState {
    /// State from a configuration; not ready until [`AppState::set_ready`]
    /// (normally after [`groundcite_providers::pipeline::warm_up`]).
    pub fn new(config: ServerConfig) -> AppState {
        let requests = Arc::new(Semaphore::new(config.limits.max_concurrency.max(1)));
        let generations = Arc::new(Semaphore::new(config.limits.max_generations.max(1)));
        AppState(Arc::new(Inner {
            store: config.store,
            keys: config.keys,
            limits: config.limits,
            metrics: Metrics::new(),
            backend: config.backend,
            chat: config.chat,
            corpus: config.corpus,
            profile: config.profile,
            cors_origins: config.cors_origins,
            ready: AtomicBool::new(false),
            requests,
            generations,
            retention: config.retention,
        }))
    }

    /// Marks the service ready (`/readyz` turns 200).
    pub fn set_ready(&self, ready: bool) {
        self.0.ready.store(ready, Ordering::SeqCst);
    }

    /// Whether `/readyz` says ready.
    pub fn is_ready(&self) -> bool {
        self.0.ready.load(Ordering::SeqCst)
    }

    /// The metrics.
    pub fn metrics(&self) -> &Metrics {
        &self.0.metrics
    }

    /// The trace store.
    pub fn store(&self) -> &Store {
        &self.0.store
    }

    /// Commits `record`; the caller responds only after this returns `Ok`.
    /// Concurrent commits share one transaction (see [`Store::commit`]).
    pub(crate) async fn commit(&self, record: TraceRecord) -> Result<(), ApiError> {
        let trace_id = record.trace_id.clone();
        // One request in flight (its own permit): nothing else would run
        // on this thread while it waits for the disk, so the store may
        // commit here rather than hop to its writer thread and back.
        let alone = self.0.requests.available_permits() + 1 >= self.0.limits.max_concurrency.max(1);
        let committed = if alone {
            self.0.store.commit_alone(record).await
        } else {
            self.0.store.commit(record).await
        };
        match committed {
            Ok(()) => Ok(()),
            // The client's ID: 409 when taken, 422 when not acceptable.
            Err(e @ (StoreError::Duplicate { .. } | StoreError::InvalidTraceId(_))) => {
                Err(e.into())
            }
            Err(e) => {
                self.0.metrics.trace_failed(self.0.store.backend());
                tracing::error!(trace_id = %trace_id, error = %e, "trace not committed");
                Err(ApiError::new(ErrorCode::TraceStoreUnavailable))
            }
        }
    }
}

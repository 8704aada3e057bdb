//! # groundcite-server
//!
//! `groundcite serve`: verified, traced, monitored answers over HTTP.
//!
//! ## Key types
//! - [`ServerConfig`] and [`Limits`]: what the service accepts and how much.
//! - [`AppState`]: the shared state (trace [`Store`], [`ApiKeys`],
//!   [`Metrics`], the configured answer [`Backend`], the [`Corpus`] of
//!   `/v1/ask`).
//! - [`app`]: the axum [`Router`], testable without a socket.
//! - [`serve`]: binds, warms up, and serves until SIGINT/SIGTERM.
//! - [`ApiError`]: the one error shape, `{"error": {"code", "message"}}`;
//!   [`ErrorCode`]: the stable codes, each with one status and one message.
//!
//! ## Endpoints
//! `POST /v1/ask` and `POST /v1/answer` (JSON, or SSE with
//! `Accept: text/event-stream`), `GET /v1/info`,
//! `POST /v1/verify`, `POST /v1/parse`, `POST /v1/convert`,
//! `GET /v1/traces/{id}`, `POST /v1/traces/{id}/verify`,
//! `POST /v1/chat/completions` (OpenAI-compatible, structured outputs),
//! `GET /metrics`, `GET /healthz`, `GET /readyz`, `GET /openapi.json`;
//! and the web app (public HTML shell and assets, embedded in the binary;
//! its data comes from the API with the user's key): `GET /`,
//! `GET /traces/{id}`, `GET /assets/{file}` (including
//! `groundcite-render.js`, the contract renderer as an ES module).
//!
//! ## Guarantees
//! - Every answer/verify/parse/convert response is sent only after its
//!   trace is committed (a trace store that fails gives 503, not an
//!   untraced answer). For a streamed answer, the final `done` event is
//!   sent after the commit.
//! - Every endpoint but health, readiness, metrics, the OpenAPI
//!   document and the web app's static files needs an API key; a tenant reads only its own traces.
//! - The service keeps no state of its own: several replicas can share one
//!   PostgreSQL store behind a load balancer.

mod auth;
mod error;
mod extract;
mod metrics;
mod openapi;
mod routes;
mod serve;
mod state;

pub use auth::{ApiKeys, InvalidTenant, KeyFileError, Tenant, key_digest, validate_tenant};
pub use error::{ApiError, ErrorCode};
pub use metrics::Metrics;
pub use routes::app;
pub use serve::serve;
pub use state::{AppState, Corpus, CorpusSource, Limits, ServerConfig};

pub use axum::Router;
pub use groundcite_providers::Backend;
pub use groundcite_store::Store;
pub use openapi::document as openapi_document;

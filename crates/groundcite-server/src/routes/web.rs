//! The web app: the HTML shell, its assets (embedded at compile time: no
//! CDN, no build step, works offline) and `GET /v1/info`, which tells the
//! page what this deployment can do.
//!
//! Pages are served with a strict Content-Security-Policy (scripts and
//! styles from this origin only, no inline script, no plugins, no framing):
//! even if a renderer bug inserted hostile HTML, it could not run.

use axum::extract::{Path, State};
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use serde_json::json;

use super::Who;
use crate::error::ApiError;
use crate::state::{AppState, CorpusSource};

const INDEX_HTML: &str = include_str!("../../web/index.html");
const TRACE_HTML: &str = include_str!("../../web/trace.html");

/// `(name, content type, body)` of every asset.
const ASSETS: &[(&str, &str, &str)] = &[
    (
        "groundcite-render.js",
        "text/javascript; charset=utf-8",
        include_str!("../../web/groundcite-render.js"),
    ),
    (
        "app.js",
        "text/javascript; charset=utf-8",
        include_str!("../../web/app.js"),
    ),
    (
        "trace.js",
        "text/javascript; charset=utf-8",
        include_str!("../../web/trace.js"),
    ),
    (
        "api.js",
        "text/javascript; charset=utf-8",
        include_str!("../../web/api.js"),
    ),
    (
        "pdf-page.js",
        "text/javascript; charset=utf-8",
        include_str!("../../web/pdf-page.js"),
    ),
    // pdf.js (pdfjs-dist, Apache-2.0), vendored by scripts/vendor-pdfjs and
    // loaded only when a cited PDF page is previewed.
    (
        "pdf.min.mjs",
        "text/javascript; charset=utf-8",
        include_str!("../../web/vendor/pdfjs/pdf.min.mjs"),
    ),
    (
        "pdf.worker.min.mjs",
        "text/javascript; charset=utf-8",
        include_str!("../../web/vendor/pdfjs/pdf.worker.min.mjs"),
    ),
    (
        "style.css",
        "text/css; charset=utf-8",
        include_str!("../../web/style.css"),
    ),
];

/// No inline script or style, nothing from other origins; `connect-src`
/// 'self' keeps the key from being sent anywhere else. `worker-src 'self'`
/// is pdf.js's worker (the page previewer); pdf.js runs with
/// `isEvalSupported: false`, so no `unsafe-eval`.
const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; \
                   connect-src 'self'; worker-src 'self'; base-uri 'none'; form-action 'none'; \
                   frame-ancestors 'none'";

fn hardened(mut response: Response) -> Response {
    let h = response.headers_mut();
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CSP),
    );
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    // Assets change with the binary; revalidation is cheap on loopback and
    // avoids a stale page after an upgrade.
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}

fn html(body: &'static str) -> Response {
    hardened(([(header::CONTENT_TYPE, "text/html; charset=utf-8")], body).into_response())
}

/// `GET /`: ask, or verify pasted chunks and an answer.
pub(crate) async fn index() -> Response {
    html(INDEX_HTML)
}

/// `GET /traces/{id}`: the trace viewer (the page reads the ID from its URL
/// and fetches the trace with the user's key).
pub(crate) async fn trace_page(Path(_id): Path<String>) -> Response {
    html(TRACE_HTML)
}

/// `GET /assets/{file}`.
pub(crate) async fn asset(Path(file): Path<String>) -> Response {
    match ASSETS.iter().find(|(name, _, _)| *name == file) {
        Some((_, content_type, body)) => {
            hardened(([(header::CONTENT_TYPE, *content_type)], *body).into_response())
        }
        None => ApiError::not_found("no such asset").into_response(),
    }
}

/// `GET /v1/info`: what this deployment serves (the page greys out what is
/// missing), and who the key belongs to.
pub(crate) async fn info(State(state): State<AppState>, who: Who) -> Response {
    let corpus = state.0.corpus.as_ref().map(|c| {
        // A search service does not say how much it holds: null.
        let stats = c.source.index().map(|i| i.stats());
        json!({
            "documents": stats.as_ref().map(|s| s.documents),
            "chunks": stats.as_ref().map(|s| s.chunks),
            "retriever": match &c.source {
                CorpusSource::Index(_) => "index",
                CorpusSource::Retriever(r) => r.name(),
            },
            "top_k": c.settings.top_k,
            "gate": c.settings.gate.mode.as_str(),
            "retrieval": if c.embed.is_some() { "hybrid" } else { "bm25" },
        })
    });
    axum::Json(json!({
        "version": env!("CARGO_PKG_VERSION"),
        "tenant": who.0.name(),
        "corpus": corpus,
        "provider": state.0.backend.as_ref().map(|b| b.generator().provider()),
        "match_profile": state.0.profile,
    }))
    .into_response()
}

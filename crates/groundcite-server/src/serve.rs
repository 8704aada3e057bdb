//! The serve loop: binds, warms the backend up, serves the router until
//! SIGINT/SIGTERM, and purges old traces. Kept out of `state.rs` so the
//! routes depend on the state and nothing depends back on the routes but
//! this.

use std::net::SocketAddr;
use std::time::Duration;

use crate::state::{AppState, CorpusSource};

/// Serves `state` on `addr` until SIGINT or SIGTERM: warms the backend up
/// (when `warmup`), then turns ready; in-flight requests finish on
/// shutdown.
pub async fn serve(addr: SocketAddr, state: AppState, warmup: bool) -> std::io::Result<()> {
    let listener = tokio::net::TcpListener::bind(addr).await?;
    let local = listener.local_addr()?;
    tracing::info!(addr = %local, store = state.store().redacted_url(), "listening");
    match state.0.corpus.as_ref().map(|c| &c.source) {
        Some(CorpusSource::Index(index)) => {
            let stats = index.stats();
            tracing::info!(
                index = %index.dir().display(),
                documents = stats.documents,
                chunks = stats.chunks,
                "corpus ready for /v1/ask"
            );
        }
        Some(CorpusSource::Retriever(r)) => {
            tracing::info!(retriever = r.name(), "search service ready for /v1/ask");
        }
        None => {}
    }
    let ready_state = state.clone();
    tokio::spawn(async move {
        if warmup && let Some(backend) = &ready_state.0.backend {
            match groundcite_providers::pipeline::warm_up(backend).await {
                Ok(took) => tracing::info!(took_ms = took.as_millis() as u64, "warm-up done"),
                Err(e) => {
                    // Stay unready: a load balancer keeps traffic away until
                    // an operator fixes the provider settings.
                    tracing::error!(error = %e, "warm-up failed; /readyz stays unready");
                    return;
                }
            }
        }
        ready_state.set_ready(true);
        tracing::info!("ready");
    });
    if let Some(keep) = state.0.retention {
        let store_state = state.clone();
        tokio::spawn(async move { retention_loop(store_state, keep).await });
    }
    let app = crate::routes::app(state.clone());
    // Streamed claims go out as small writes, one per event: with Nagle's
    // algorithm each would wait for the client's (possibly delayed) ACK
    // of the one before.
    let listener = axum::serve::ListenerExt::tap_io(listener, |tcp| {
        if let Err(e) = tcp.set_nodelay(true) {
            tracing::debug!(error = %e, "could not set TCP_NODELAY");
        }
    });
    axum::serve(listener, app)
        .with_graceful_shutdown(shutdown_signal())
        .await?;
    state.set_ready(false);
    Ok(())
}

async fn retention_loop(state: AppState, keep: Duration) {
    let mut tick = tokio::time::interval(Duration::from_secs(3600));
    loop {
        tick.tick().await;
        let cutoff = jiff::Timestamp::now()
            .checked_sub(jiff::SignedDuration::try_from(keep).unwrap_or(jiff::SignedDuration::MAX));
        let Ok(cutoff) = cutoff else { continue };
        match state.store().purge_older_than(cutoff).await {
            Ok(n) if n > 0 => tracing::info!(deleted = n, "retention: old traces deleted"),
            Ok(_) => {}
            Err(e) => tracing::warn!(error = %e, "retention: purge failed"),
        }
    }
}

async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {},
        () = term => {},
    }
    tracing::info!("shutting down");
}

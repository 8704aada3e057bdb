//! Prometheus metrics: the seed's four signals, labelled by provider and
//! model, plus request counts and latencies, and the providers' retry
//! budgets and circuit breakers (read from
//! `groundcite_providers::resilience::health` at scrape time). Alerting
//! rules on these names live in `deploy/prometheus/alerts.yml`.

use std::collections::HashSet;
use std::sync::Mutex;
use std::time::Duration;

use groundcite_core::Contract;
use groundcite_providers::resilience;
use prometheus::{
    Encoder, HistogramOpts, HistogramVec, IntCounterVec, IntGauge, IntGaugeVec, Opts, Registry,
    TextEncoder,
};

/// Distinct model labels kept before new ones become `other`: model names
/// come from clients (`/v1/verify`), and unbounded label values would grow
/// memory and the scrape without bound.
const MAX_MODEL_LABELS: usize = 64;

/// The service's metrics.
#[derive(Debug)]
pub struct Metrics {
    registry: Registry,
    claims: IntCounterVec,
    claims_failed: IntCounterVec,
    answers: IntCounterVec,
    unanswerable: IntCounterVec,
    schema_parse_errors: IntCounterVec,
    generations: IntCounterVec,
    inference: HistogramVec,
    http_requests: IntCounterVec,
    http_duration: HistogramVec,
    in_flight: IntGauge,
    traces_failed: IntCounterVec,
    provider_retries: IntCounterVec,
    provider_budget_exhausted: IntCounterVec,
    provider_breaker_rejections: IntCounterVec,
    provider_breaker_openings: IntCounterVec,
    provider_breaker_state: IntGaugeVec,
    /// Held while copying the providers' counters: two scrapes at once
    /// must not both add the same increase.
    provider_sync: Mutex<()>,
    models: Mutex<HashSet<String>>,
}

fn counter(registry: &Registry, name: &str, help: &str, labels: &[&str]) -> IntCounterVec {
    let c = IntCounterVec::new(Opts::new(name, help), labels)
        .unwrap_or_else(|e| unreachable!("metric {name}: {e}"));
    registry
        .register(Box::new(c.clone()))
        .unwrap_or_else(|e| unreachable!("metric {name}: {e}"));
    c
}

fn histogram(
    registry: &Registry,
    name: &str,
    help: &str,
    labels: &[&str],
    buckets: Vec<f64>,
) -> HistogramVec {
    let h = HistogramVec::new(HistogramOpts::new(name, help).buckets(buckets), labels)
        .unwrap_or_else(|e| unreachable!("metric {name}: {e}"));
    registry
        .register(Box::new(h.clone()))
        .unwrap_or_else(|e| unreachable!("metric {name}: {e}"));
    h
}

const PM: &[&str] = &["provider", "model"];

impl Default for Metrics {
    fn default() -> Self {
        Metrics::new()
    }
}

impl Metrics {
    /// Fresh metrics in their own registry.
    pub fn new() -> Metrics {
        let r = Registry::new();
        let inference_buckets = vec![
            0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 3.0, 5.0, 8.0, 13.0, 20.0, 30.0, 60.0,
        ];
        let http_buckets = vec![
            0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0,
        ];
        let in_flight = IntGauge::new(
            "groundcite_http_requests_in_flight",
            "Requests being served now.",
        )
        .unwrap_or_else(|e| unreachable!("{e}"));
        r.register(Box::new(in_flight.clone()))
            .unwrap_or_else(|e| unreachable!("{e}"));
        let provider_breaker_state = IntGaugeVec::new(
            Opts::new(
                "groundcite_provider_breaker_state",
                "The provider's circuit breaker: 0 closed, 1 half-open, 2 open (requests fail with 503 provider_unavailable).",
            ),
            &["provider"],
        )
        .unwrap_or_else(|e| unreachable!("{e}"));
        r.register(Box::new(provider_breaker_state.clone()))
            .unwrap_or_else(|e| unreachable!("{e}"));
        Metrics {
            claims: counter(
                &r,
                "groundcite_claims_total",
                "Claims the model produced (answers and verify requests).",
                PM,
            ),
            claims_failed: counter(
                &r,
                "groundcite_claims_failed_total",
                "Claims dropped by verification.",
                PM,
            ),
            answers: counter(&r, "groundcite_answers_total", "Contracts produced.", PM),
            unanswerable: counter(
                &r,
                "groundcite_unanswerable_total",
                "Contracts that are unanswerable (refusals included).",
                PM,
            ),
            schema_parse_errors: counter(
                &r,
                "groundcite_schema_parse_errors_total",
                "Model outputs that were truncated or not valid for the schema (refusal R3).",
                PM,
            ),
            generations: counter(
                &r,
                "groundcite_generations_total",
                "Model generations attempted.",
                PM,
            ),
            inference: histogram(
                &r,
                "groundcite_inference_duration_seconds",
                "Time to generate an answer (the provider call, retries included).",
                PM,
                inference_buckets,
            ),
            http_requests: counter(
                &r,
                "groundcite_http_requests_total",
                "HTTP requests by route template, method and status.",
                &["route", "method", "status"],
            ),
            http_duration: histogram(
                &r,
                "groundcite_http_request_duration_seconds",
                "Time to the response head, by route template and method.",
                &["route", "method"],
                http_buckets,
            ),
            traces_failed: counter(
                &r,
                "groundcite_trace_write_failures_total",
                "Traces that could not be committed (the request failed with 503).",
                &["backend"],
            ),
            provider_retries: counter(
                &r,
                "groundcite_provider_retries_total",
                "Provider requests retried (attempts after the first).",
                &["provider"],
            ),
            provider_budget_exhausted: counter(
                &r,
                "groundcite_provider_retry_budget_exhausted_total",
                "Retries refused by the retry budget (the request failed with its last error).",
                &["provider"],
            ),
            provider_breaker_rejections: counter(
                &r,
                "groundcite_provider_breaker_rejections_total",
                "Provider requests not sent because the circuit breaker was open.",
                &["provider"],
            ),
            provider_breaker_openings: counter(
                &r,
                "groundcite_provider_breaker_openings_total",
                "Times a provider's circuit breaker opened.",
                &["provider"],
            ),
            provider_breaker_state,
            in_flight,
            registry: r,
            provider_sync: Mutex::new(()),
            models: Mutex::new(HashSet::new()),
        }
    }

    /// A bounded label value for a model name.
    fn model_label(&self, model: Option<&str>) -> String {
        let Some(m) = model.filter(|m| !m.is_empty()) else {
            return "unknown".into();
        };
        let printable = m.len() <= 128 && m.chars().all(|c| !c.is_control());
        if !printable {
            return "other".into();
        }
        let Ok(mut seen) = self.models.lock() else {
            return "other".into();
        };
        if seen.contains(m) {
            return m.to_string();
        }
        if seen.len() >= MAX_MODEL_LABELS {
            return "other".into();
        }
        seen.insert(m.to_string());
        m.to_string()
    }

    /// Records one contract: claims, failed claims, answers, unanswerable.
    /// `claims_in` is how many claims the model produced.
    pub fn contract(&self, provider: &str, model: Option<&str>, claims_in: usize, c: &Contract) {
        let model = self.model_label(model);
        let l = [provider, model.as_str()];
        // One failure warning per failed claim (unsupported, uncited, or a
        // quantity its quotes do not carry), as the seed's signal counts.
        let failed = c
            .warnings
            .iter()
            .filter(|w| w.code.is_verification_failure())
            .count()
            .min(claims_in);
        self.claims.with_label_values(&l).inc_by(claims_in as u64);
        self.claims_failed
            .with_label_values(&l)
            .inc_by(failed as u64);
        self.answers.with_label_values(&l).inc();
        if !c.answerable {
            self.unanswerable.with_label_values(&l).inc();
        }
    }

    /// Records one generation: its duration and whether it was a
    /// schema-parsing error.
    pub fn generation(
        &self,
        provider: &str,
        model: Option<&str>,
        took: Duration,
        schema_error: bool,
    ) {
        let model = self.model_label(model);
        let l = [provider, model.as_str()];
        self.generations.with_label_values(&l).inc();
        self.inference
            .with_label_values(&l)
            .observe(took.as_secs_f64());
        if schema_error {
            self.schema_parse_errors.with_label_values(&l).inc();
        }
    }

    /// Records one HTTP response.
    pub fn http(&self, route: &str, method: &str, status: u16, took: Duration) {
        self.http_requests
            .with_label_values(&[route, method, &status.to_string()])
            .inc();
        self.http_duration
            .with_label_values(&[route, method])
            .observe(took.as_secs_f64());
    }

    /// A trace that could not be committed.
    pub fn trace_failed(&self, backend: &str) {
        self.traces_failed.with_label_values(&[backend]).inc();
    }

    /// The in-flight gauge.
    pub fn in_flight(&self) -> &IntGauge {
        &self.in_flight
    }

    /// Copies the providers' retry and breaker figures into the registry
    /// (the providers crate keeps them as process-wide counters).
    fn sync_providers(&self) {
        let _one_at_a_time = self
            .provider_sync
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let sync = |c: &IntCounterVec, provider: &str, total: u64| {
            let c = c.with_label_values(&[provider]);
            c.inc_by(total.saturating_sub(c.get()));
        };
        for h in resilience::health() {
            sync(&self.provider_retries, h.provider, h.retries);
            sync(
                &self.provider_budget_exhausted,
                h.provider,
                h.budget_exhausted,
            );
            sync(
                &self.provider_breaker_rejections,
                h.provider,
                h.breaker_rejections,
            );
            sync(
                &self.provider_breaker_openings,
                h.provider,
                h.breaker_openings,
            );
            self.provider_breaker_state
                .with_label_values(&[h.provider])
                .set(h.state.gauge());
        }
    }

    /// The text exposition format.
    pub fn render(&self) -> String {
        self.sync_providers();
        let mut buf = Vec::new();
        if let Err(e) = TextEncoder::new().encode(&self.registry.gather(), &mut buf) {
            tracing::error!(error = %e, "encoding metrics");
        }
        String::from_utf8(buf).unwrap_or_default()
    }
}

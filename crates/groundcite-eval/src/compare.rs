//! What changed between two runs (a prompt or model change): every metric
//! side by side, and the cases whose pass rate moved.

use serde::{Deserialize, Serialize};

use crate::metric::Metric;
use crate::result::EvalResult;

/// One metric in both runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MetricDelta {
    /// The metric's name.
    pub metric: String,
    /// The old value.
    pub old: Option<f64>,
    /// The new value.
    pub new: Option<f64>,
    /// `new - old`, when both were measured.
    pub delta: Option<f64>,
    /// Whether the change is an improvement (`None`: no change, unmeasured,
    /// or a metric with no better direction).
    pub better: Option<bool>,
}

/// One case whose pass rate changed, or that only one run has.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CaseChange {
    /// The case's ID.
    pub case_id: String,
    /// Old pass rate (`None`: not in the old run).
    pub old: Option<f64>,
    /// New pass rate (`None`: not in the new run).
    pub new: Option<f64>,
}

/// Two runs compared.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    /// The old run's provider, model and start time.
    pub old_label: String,
    /// The new run's.
    pub new_label: String,
    /// Every metric.
    pub metrics: Vec<MetricDelta>,
    /// Cases that changed.
    pub cases: Vec<CaseChange>,
    /// Whether the two runs used different suites (by name).
    pub different_suites: bool,
}

fn label(r: &EvalResult) -> String {
    format!(
        "{} {} ({})",
        r.provider,
        r.model.as_deref().unwrap_or("unknown model"),
        r.started_at
    )
}

fn pass_rate(r: &EvalResult, id: &str) -> Option<f64> {
    r.cases.iter().find(|c| c.case_id == id).map(|c| {
        if c.runs == 0 {
            0.0
        } else {
            c.passed as f64 / c.runs as f64
        }
    })
}

/// Compares `old` with `new`.
pub fn compare(old: &EvalResult, new: &EvalResult) -> Comparison {
    let metrics = Metric::ALL
        .iter()
        .map(|&m| {
            let (o, n) = (old.metrics.get(m), new.metrics.get(m));
            let delta = o.zip(n).map(|(o, n)| n - o);
            let better = match (delta, m.higher_is_better()) {
                (Some(d), Some(up)) if d.abs() > f64::EPSILON => Some((d > 0.0) == up),
                _ => None,
            };
            MetricDelta {
                metric: m.name().to_string(),
                old: o,
                new: n,
                delta,
                better,
            }
        })
        .collect();
    let mut ids: Vec<&str> = old.cases.iter().map(|c| c.case_id.as_str()).collect();
    for c in &new.cases {
        if !ids.contains(&c.case_id.as_str()) {
            ids.push(&c.case_id);
        }
    }
    let cases = ids
        .into_iter()
        .filter_map(|id| {
            let (o, n) = (pass_rate(old, id), pass_rate(new, id));
            let changed = match (o, n) {
                (Some(o), Some(n)) => (o - n).abs() > f64::EPSILON,
                _ => true,
            };
            changed.then(|| CaseChange {
                case_id: id.to_string(),
                old: o,
                new: n,
            })
        })
        .collect();
    Comparison {
        old_label: label(old),
        new_label: label(new),
        metrics,
        cases,
        different_suites: old.suite != new.suite,
    }
}

//! The one-screen terminal summary.

use std::fmt::Write;

use crate::compare::Comparison;
use crate::metric::Metric;
use crate::result::EvalResult;

/// A metric's value for people: rates as percentages, latencies in ms.
pub fn format_value(m: Metric, v: Option<f64>) -> String {
    match v {
        None => "n/a".into(),
        Some(v) if m.is_rate() => format!("{:.1}%", v * 100.0),
        Some(v) if m.is_count() => format!("{v:.1}"),
        Some(v) => format!("{v:.0} ms"),
    }
}

/// A bound for people: `≥ 80.0%`, `≤ 5000 ms`, or both.
pub fn format_bound(m: Metric, min: Option<f64>, max: Option<f64>) -> String {
    let mut parts = Vec::new();
    if let Some(lo) = min {
        parts.push(format!(">= {}", format_value(m, Some(lo))));
    }
    if let Some(hi) = max {
        parts.push(format!("<= {}", format_value(m, Some(hi))));
    }
    parts.join(" and ")
}

/// The summary: totals per kind, every metric (with its threshold), the
/// citations' breakdown, failing cases and, given one, the comparison.
pub fn text(r: &EvalResult, comparison: Option<&Comparison>) -> String {
    let mut s = String::new();
    let m = &r.metrics;
    let _ = writeln!(
        s,
        "groundcite eval: {} — {} cases x {} = {} runs, {} {}, {:.1} s",
        r.suite,
        m.cases,
        r.repeat,
        m.runs,
        r.provider,
        r.model.as_deref().unwrap_or(""),
        r.wall_s
    );
    let kinds: Vec<String> = m
        .by_kind
        .iter()
        .map(|(k, v)| format!("{k} {}/{}", v.passed, v.runs))
        .collect();
    let _ = writeln!(s, "passed: {}", kinds.join(", "));
    let _ = writeln!(s);
    for metric in Metric::ALL {
        let value = format_value(metric, m.get(metric));
        let gate = r
            .thresholds
            .iter()
            .find(|t| t.metric == metric.name())
            .map(|t| {
                format!(
                    "  {} {}",
                    if t.passed { "ok  " } else { "FAIL" },
                    format_bound(metric, t.min, t.max)
                )
            })
            .unwrap_or_default();
        let _ = writeln!(s, "  {:<24} {:>10}{gate}", metric.name(), value);
    }
    let _ = writeln!(s);
    let by_match: Vec<String> = m
        .citations_by_match
        .iter()
        .map(|(k, v)| format!("{k} {v}"))
        .collect();
    let dropped: Vec<String> = m
        .citations_dropped
        .iter()
        .map(|(k, v)| format!("{k} {v}"))
        .collect();
    let _ = writeln!(
        s,
        "citations: {} emitted, {} verified ({}); dropped: {}",
        m.citations_emitted,
        m.citations_verified,
        if by_match.is_empty() {
            "none".into()
        } else {
            by_match.join(", ")
        },
        if dropped.is_empty() {
            "none".into()
        } else {
            dropped.join(", ")
        }
    );
    let failing: Vec<String> = r
        .cases
        .iter()
        .filter(|c| c.passed < c.runs)
        .map(|c| format!("{} ({}/{})", c.case_id, c.passed, c.runs))
        .collect();
    if !failing.is_empty() {
        let shown = failing
            .iter()
            .take(12)
            .cloned()
            .collect::<Vec<_>>()
            .join(", ");
        let more = failing.len().saturating_sub(12);
        let _ = write!(s, "not passed: {shown}");
        if more > 0 {
            let _ = write!(s, " and {more} more");
        }
        let _ = writeln!(s);
    }
    let broken: Vec<&str> = r
        .hallucination
        .iter()
        .filter(|h| !h.passed)
        .map(|h| h.case_id.as_str())
        .collect();
    if !broken.is_empty() {
        let _ = writeln!(s, "HALLUCINATION NOT REJECTED on: {}", broken.join(", "));
    }
    if let Some(c) = comparison {
        let _ = writeln!(s);
        let _ = writeln!(s, "compared with {}", c.old_label);
        if c.different_suites {
            let _ = writeln!(s, "  (the runs used different suites)");
        }
        for d in &c.metrics {
            let Some(metric) = Metric::from_name(&d.metric) else {
                continue;
            };
            if d.delta.is_some_and(|x| x.abs() <= f64::EPSILON) {
                continue;
            }
            let mark = match d.better {
                Some(true) => "better",
                Some(false) => "WORSE",
                None => "",
            };
            let _ = writeln!(
                s,
                "  {:<24} {:>10} -> {:>10}  {mark}",
                d.metric,
                format_value(metric, d.old),
                format_value(metric, d.new)
            );
        }
        for case in &c.cases {
            let f = |v: Option<f64>| v.map_or("absent".into(), |v| format!("{:.0}%", v * 100.0));
            let _ = writeln!(
                s,
                "  case {}: {} -> {}",
                case.case_id,
                f(case.old),
                f(case.new)
            );
        }
    }
    let failed: Vec<&str> = r
        .thresholds
        .iter()
        .filter(|t| !t.passed)
        .map(|t| t.metric.as_str())
        .collect();
    let _ = writeln!(s);
    if r.thresholds.is_empty() {
        let _ = writeln!(s, "no thresholds set");
    } else if failed.is_empty() {
        let _ = writeln!(s, "all {} thresholds passed", r.thresholds.len());
    } else {
        let _ = writeln!(s, "THRESHOLDS FAILED: {}", failed.join(", "));
    }
    s
}

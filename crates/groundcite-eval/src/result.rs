//! The result file ([`EvalResult`]) and the thresholds' verdicts in it:
//! checking them, and parsing the command line's.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::metric::Metric;
use crate::metrics::{CaseRun, CaseScore, HallucinationCheck, Metrics};
use crate::suite::{Bound, SuiteError, check_bound};

/// The `format` of result files this version writes and reads.
pub const RESULT_FORMAT: &str = "groundcite-eval-result/1";

/// Why a command-line threshold ([`parse_threshold`]) was refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ThresholdError {
    /// A bound is not a number.
    #[error("{0:?} is not a number")]
    NotANumber(String),
    /// Neither `>=`, `<=` nor `=LO..HI`.
    #[error("write METRIC>=MIN, METRIC<=MAX or METRIC=MIN..MAX")]
    Syntax,
    /// An unknown metric, or bounds out of range (as in a suite file).
    #[error("{0}")]
    Bound(SuiteError),
}

/// Why [`EvalResult::from_json`] refused a file, in one sentence.
#[derive(Debug, thiserror::Error)]
pub enum ResultFileError {
    /// Not JSON at all.
    #[error("not JSON: {0}")]
    NotJson(serde_json::Error),
    /// Written by another version.
    #[error(
        "result format {found:?} is not {:?} (written by another version)",
        RESULT_FORMAT
    )]
    OtherFormat {
        /// The file's `format`.
        found: String,
    },
    /// No `format` field.
    #[error("not a groundcite eval result (no \"format\")")]
    NoFormat,
    /// The right format, but fields are missing or of the wrong type.
    #[error("a malformed result: {0}")]
    Malformed(serde_json::Error),
}

/// One threshold's verdict.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ThresholdResult {
    /// The metric's name.
    pub metric: String,
    /// Lower bound.
    pub min: Option<f64>,
    /// Upper bound.
    pub max: Option<f64>,
    /// The measured value (`null`: not measured, which fails).
    pub value: Option<f64>,
    /// Whether the value is within the bounds.
    pub passed: bool,
}

/// Checks every bound against `metrics`, in metric-name order.
pub fn check_thresholds(
    thresholds: &BTreeMap<String, Bound>,
    metrics: &Metrics,
) -> Vec<ThresholdResult> {
    thresholds
        .iter()
        .map(|(name, b)| {
            let value = Metric::from_name(name).and_then(|m| metrics.get(m));
            let passed = value
                .is_some_and(|v| b.min.is_none_or(|lo| v >= lo) && b.max.is_none_or(|hi| v <= hi));
            ThresholdResult {
                metric: name.clone(),
                min: b.min,
                max: b.max,
                value,
                passed,
            }
        })
        .collect()
}

/// Parses a command-line threshold: `metric>=0.8`, `metric<=0.02` or
/// `metric=LO..HI`.
pub fn parse_threshold(expr: &str) -> Result<(String, Bound), ThresholdError> {
    let parse = |v: &str| -> Result<f64, ThresholdError> {
        v.trim()
            .parse::<f64>()
            .map_err(|_| ThresholdError::NotANumber(v.trim().to_string()))
    };
    let (name, bound) = if let Some((n, v)) = expr.split_once(">=") {
        (
            n,
            Bound {
                min: Some(parse(v)?),
                max: None,
            },
        )
    } else if let Some((n, v)) = expr.split_once("<=") {
        (
            n,
            Bound {
                min: None,
                max: Some(parse(v)?),
            },
        )
    } else if let Some((n, v)) = expr.split_once('=')
        && let Some((lo, hi)) = v.split_once("..")
    {
        (
            n,
            Bound {
                min: Some(parse(lo)?),
                max: Some(parse(hi)?),
            },
        )
    } else {
        return Err(ThresholdError::Syntax);
    };
    let name = name.trim().to_string();
    check_bound(&name, &name, &bound).map_err(ThresholdError::Bound)?;
    Ok((name, bound))
}

/// The JSON result file: everything needed to read, gate and compare a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EvalResult {
    /// [`RESULT_FORMAT`].
    pub format: String,
    /// The suite's name.
    pub suite: String,
    /// Where the suite was read from.
    pub suite_path: String,
    /// The provider that answered (`local`, `openai`, …).
    pub provider: String,
    /// The model, when known.
    pub model: Option<String>,
    /// When the run started (RFC 3339).
    pub started_at: String,
    /// Wall time of the whole run, seconds.
    pub wall_s: f64,
    /// Runs per case.
    pub repeat: u32,
    /// The effective settings (top_k, gate, matching, corpus).
    pub settings: Value,
    /// The totals.
    pub metrics: Metrics,
    /// Per case.
    pub cases: Vec<CaseScore>,
    /// Every run, with its contract.
    pub runs: Vec<CaseRun>,
    /// The injected-hallucination checks.
    pub hallucination: Vec<HallucinationCheck>,
    /// The thresholds' verdicts.
    pub thresholds: Vec<ThresholdResult>,
    /// Whether every threshold passed.
    pub passed: bool,
}

impl EvalResult {
    /// Reads a result file, refusing other formats with one sentence.
    pub fn from_json(text: &str) -> Result<EvalResult, ResultFileError> {
        let v: Value = serde_json::from_str(text).map_err(ResultFileError::NotJson)?;
        match v.get("format").and_then(Value::as_str) {
            Some(RESULT_FORMAT) => {}
            Some(other) => {
                return Err(ResultFileError::OtherFormat {
                    found: other.to_string(),
                });
            }
            None => return Err(ResultFileError::NoFormat),
        }
        serde_json::from_value(v).map_err(ResultFileError::Malformed)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn thresholds_parse_and_refuse() {
        assert_eq!(
            parse_threshold("answerable_rate>=0.8").unwrap(),
            (
                "answerable_rate".into(),
                Bound {
                    min: Some(0.8),
                    max: None
                }
            )
        );
        assert_eq!(
            parse_threshold(" latency_p95_ms <= 5000").unwrap().1.max,
            Some(5000.0)
        );
        assert_eq!(
            parse_threshold("unanswerable_rate=0.1..0.4").unwrap().1,
            Bound {
                min: Some(0.1),
                max: Some(0.4)
            }
        );
        assert!(parse_threshold("answerable_rate>=80").is_err());
        assert!(parse_threshold("nope>=0.1").is_err());
        assert!(parse_threshold("answerable_rate>0.1").is_err());
        assert!(parse_threshold("answerable_rate>=x").is_err());
        assert!(parse_threshold("unanswerable_rate=0.5..0.1").is_err());
        assert!(parse_threshold("answerable_rate>=NaN").is_err());
    }

    #[test]
    fn result_files_of_other_formats_are_refused() {
        assert!(
            EvalResult::from_json(r#"{"format":"groundcite-eval-result/9"}"#)
                .unwrap_err()
                .to_string()
                .contains("another version")
        );
        assert!(
            EvalResult::from_json("{}")
                .unwrap_err()
                .to_string()
                .contains("not a groundcite")
        );
        assert!(EvalResult::from_json("[").is_err());
    }
}

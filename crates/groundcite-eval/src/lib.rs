//! `groundcite eval`'s engine, the seed's verification suite (section 6):
//! the suite format, scoring, thresholds, comparison of two runs and the
//! reports. Pure: the CLI runs the cases through the real pipeline and
//! hands the contracts here.
//!
//! Key types: [`Suite`] (corpus, settings, thresholds, cases), [`CaseRun`]
//! (what one run produced), [`score`] → [`CaseScore`] and [`Metrics`] (every
//! [`Metric`]), [`check_thresholds`], [`EvalResult`] (the JSON result file),
//! [`compare`], [`report::html`] and [`summary::text`].

pub mod compare;
pub mod metrics;
pub mod report;
pub mod suite;
pub mod summary;

use std::collections::BTreeMap;

use groundcite_core::{
    ChunkSet, Citation, Claim, ClaimPolicy, GroundedAnswer, MatchProfile, Provenance, RefusalCode,
    WarningCode, verify_with,
};
use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use compare::{Comparison, compare};
pub use metrics::{
    CaseRun, CaseScore, HallucinationCheck, KindScore, Metric, Metrics, Percentiles, score,
};
pub use suite::{Bound, Case, CaseKind, Corpus, Suite, SuiteError, SuiteSettings};

/// The `format` of result files this version writes and reads.
pub const RESULT_FORMAT: &str = "groundcite-eval-result/1";

/// The chunk ID the injected answer cites (never one of the corpus's: a
/// suffix is added if a retrieved chunk has it).
pub const FABRICATED_CHUNK_ID: &str = "groundcite-eval/fabricated#chunk-0";

/// The quote the injected answer invents.
pub const FABRICATED_QUOTE: &str =
    "This sentence was written by groundcite eval and appears in no document.";

/// The seed's hallucination-rejection check on one case's retrieved chunks:
/// an answer citing a chunk that was not retrieved, and a real chunk with a
/// fabricated quote, must lose both citations (with `unknown_chunk_id` and
/// `quote_not_found` warnings), keep no claim, and be unanswerable (R2).
pub fn hallucination_check(
    case_id: &str,
    chunks: &ChunkSet,
    profile: MatchProfile,
    policy: ClaimPolicy,
    provenance: Provenance,
) -> HallucinationCheck {
    let mut fake_id = FABRICATED_CHUNK_ID.to_string();
    while chunks.get(&fake_id).is_some() {
        fake_id.push('x');
    }
    let mut claims = vec![Claim {
        text: "Cedar Ridge was founded on the Moon in 1802.".into(),
        citations: vec![Citation {
            chunk_id: fake_id,
            quote: "founded on the Moon in 1802".into(),
        }],
    }];
    let real = chunks.chunks().first();
    if let Some(chunk) = real {
        claims.push(Claim {
            text: "Every order ships free by drone within the hour.".into(),
            citations: vec![Citation {
                chunk_id: chunk.chunk_id.clone(),
                quote: FABRICATED_QUOTE.into(),
            }],
        });
    }
    let answer = GroundedAnswer {
        answerable: true,
        claims,
    };
    let c = verify_with(&answer, chunks, profile, policy, provenance);
    let warnings: Vec<String> = c
        .warnings
        .iter()
        .map(|w| metrics::warning_code(w.code))
        .collect();
    let has = |code: WarningCode| c.warnings.iter().any(|w| w.code == code);
    let mut problems = Vec::new();
    if c.answerable {
        problems.push("the answer stayed answerable".to_string());
    }
    if !c.claims.is_empty() {
        problems.push(format!("{} fabricated claim(s) survived", c.claims.len()));
    }
    if !has(WarningCode::UnknownChunkId) {
        problems.push("no unknown_chunk_id warning".into());
    }
    if real.is_some() && !has(WarningCode::QuoteNotFound) {
        problems.push("no quote_not_found warning".into());
    }
    if c.refusal.as_ref().map(|r| r.code) != Some(RefusalCode::R2) {
        problems.push("the refusal is not R2".into());
    }
    HallucinationCheck {
        case_id: case_id.to_string(),
        passed: problems.is_empty(),
        warnings,
        detail: (!problems.is_empty()).then(|| problems.join("; ")),
    }
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
pub fn parse_threshold(expr: &str) -> Result<(String, Bound), String> {
    let parse = |v: &str| -> Result<f64, String> {
        v.trim()
            .parse::<f64>()
            .map_err(|_| format!("{:?} is not a number", v.trim()))
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
        return Err("write METRIC>=MIN, METRIC<=MAX or METRIC=MIN..MAX".into());
    };
    let name = name.trim().to_string();
    suite::check_bound(&name, &name, &bound).map_err(|e| e.to_string())?;
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
    pub fn from_json(text: &str) -> Result<EvalResult, String> {
        let v: Value = serde_json::from_str(text).map_err(|e| format!("not JSON: {e}"))?;
        match v.get("format").and_then(Value::as_str) {
            Some(RESULT_FORMAT) => {}
            Some(other) => {
                return Err(format!(
                    "result format {other:?} is not {RESULT_FORMAT:?} (written by another version)"
                ));
            }
            None => return Err("not a groundcite eval result (no \"format\")".into()),
        }
        serde_json::from_value(v).map_err(|e| format!("a malformed result: {e}"))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use groundcite_core::Chunk;

    fn chunks() -> ChunkSet {
        ChunkSet::new(vec![Chunk {
            chunk_id: "refunds.md#chunk-2".into(),
            content: "You can ask for a refund within 60 days of delivery.".into(),
            source_title: None,
            source_url: None,
            page_number: None,
            score: None,
        }])
        .unwrap()
    }

    fn prov() -> Provenance {
        Provenance {
            trace_id: "t".into(),
            created_at: "2026-01-01T00:00:00Z".into(),
            question: None,
            model: None,
        }
    }

    #[test]
    fn injected_hallucination_is_rejected() {
        let h = hallucination_check(
            "c",
            &chunks(),
            MatchProfile::Default,
            ClaimPolicy::Strict,
            prov(),
        );
        assert!(h.passed, "{h:?}");
        assert!(h.warnings.contains(&"unknown_chunk_id".to_string()));
        assert!(h.warnings.contains(&"quote_not_found".to_string()));
        // With nothing retrieved only the unknown chunk can be checked.
        let empty = ChunkSet::new(Vec::new()).unwrap();
        let h = hallucination_check(
            "c",
            &empty,
            MatchProfile::Default,
            ClaimPolicy::Strict,
            prov(),
        );
        assert!(h.passed, "{h:?}");
    }

    #[test]
    fn fabricated_id_never_collides() {
        let set = ChunkSet::new(vec![Chunk {
            chunk_id: FABRICATED_CHUNK_ID.into(),
            content: "founded on the Moon in 1802".into(),
            source_title: None,
            source_url: None,
            page_number: None,
            score: None,
        }])
        .unwrap();
        let h = hallucination_check(
            "c",
            &set,
            MatchProfile::Default,
            ClaimPolicy::Strict,
            prov(),
        );
        assert!(h.passed, "{h:?}");
    }

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
                .contains("another version")
        );
        assert!(
            EvalResult::from_json("{}")
                .unwrap_err()
                .contains("not a groundcite")
        );
        assert!(EvalResult::from_json("[").is_err());
    }
}

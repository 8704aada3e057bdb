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
mod metric;
pub mod metrics;
pub mod report;
mod result;
pub mod suite;
pub mod summary;

use groundcite_core::{
    ChunkSet, Citation, Claim, ClaimPolicy, GroundedAnswer, MatchProfile, Provenance, RefusalCode,
    WarningCode, verify_with,
};

pub use compare::{Comparison, compare};
pub use metric::Metric;
pub use metrics::{CaseRun, CaseScore, HallucinationCheck, KindScore, Metrics, Percentiles, score};
pub use result::{
    EvalResult, RESULT_FORMAT, ResultFileError, ThresholdError, ThresholdResult, check_thresholds,
    parse_threshold,
};
pub use suite::{Bound, Case, CaseKind, Corpus, Suite, SuiteError, SuiteSettings};

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
}

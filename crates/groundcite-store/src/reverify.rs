//! Re-verification of a stored trace with the same rule (the incident
//! runbook's first step), shared by `groundcite trace verify` and the
//! service's `POST /v1/traces/{id}/verify`.

use groundcite_core::{
    AnswerForm, Chunk, ChunkSet, ClaimPolicy, Contract, GroundedAnswer, MatchProfile, Provenance,
    RefusalCode, verify_with,
};

use crate::JsonText;
use crate::record::TraceRecord;

/// The outcome of [`reverify`].
#[derive(Debug, Clone)]
pub struct Reverified {
    /// The contract verification gives today.
    pub contract: Contract,
    /// Whether it equals the stored contract exactly.
    pub same: bool,
    /// Why the stored output was refused (R3), when it was.
    pub note: Option<String>,
}

/// Re-runs verification on the stored raw output against the stored chunks
/// with the stored matching profile and claim policy.
///
/// A trace without raw output (a relevance gate, or a failed generation)
/// re-verifies "no answer". Errors: the trace's own fields are unusable
/// (chunks, profile or policy that do not parse), as a sentence.
pub fn reverify(record: &TraceRecord) -> Result<Reverified, String> {
    let opt = |k: &str| record.options.get(k).cloned();
    let profile: MatchProfile = opt("match")
        .map(serde_json::from_value)
        .transpose()
        .map_err(|e| format!("the trace's match profile: {e}"))?
        .unwrap_or(MatchProfile::Default);
    let policy: ClaimPolicy = opt("claims")
        .map(serde_json::from_value)
        .transpose()
        .map_err(|e| format!("the trace's claim policy: {e}"))?
        .unwrap_or(ClaimPolicy::Strict);
    let chunks: Vec<Chunk> = record
        .chunks
        .parse()
        .map_err(|e| format!("the trace's chunks: {e}"))?;
    let chunks = ChunkSet::new(chunks).map_err(|e| format!("the trace's chunks: {e}"))?;
    let stored = record.contract.as_ref().map(JsonText::to_value);
    let provenance = Provenance {
        trace_id: record.trace_id.clone(),
        created_at: stored
            .as_ref()
            .and_then(|c| c.get("created_at"))
            .and_then(|v| v.as_str())
            .map_or_else(|| record.created_at.to_string(), str::to_string),
        question: record.question.clone(),
        model: record.model.clone(),
    };
    // An extractive answer's claims take their text from their quotes: the
    // same rule as when it was verified.
    let form: AnswerForm = record
        .answer_form
        .as_deref()
        .map(str::parse)
        .transpose()
        .map_err(|e| format!("the trace's answer form: {e}"))?
        .unwrap_or_default();
    let answer = match &record.raw_output {
        Some(raw) => form.parse_answer(raw.as_bytes()),
        None => Ok(GroundedAnswer {
            answerable: false,
            claims: Vec::new(),
        }),
    };
    let (contract, note) = match answer {
        Ok(a) => (verify_with(&a, &chunks, profile, policy, provenance), None),
        Err(e) => (
            Contract::refused(RefusalCode::R3, provenance, profile, Vec::new()),
            Some(format!("the stored raw output is not a valid answer ({e})")),
        ),
    };
    // Compared as values, not texts: traces written before contracts were
    // kept as text may spell the same JSON differently.
    let same = stored.is_some_and(|s| serde_json::to_value(&contract).is_ok_and(|c| c == s));
    Ok(Reverified {
        contract,
        same,
        note,
    })
}

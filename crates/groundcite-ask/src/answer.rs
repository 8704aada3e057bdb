//! Generate and verify, after the gate.

use std::time::{Duration, Instant};

use groundcite_core::{Candidate, ClaimOutcome, Contract, GroundedAnswer, Provenance, verify_with};
use groundcite_providers::GenerationRequest;
use groundcite_providers::pipeline::{self, AnswerSettings, Answered, Backend};

use crate::error::AskError;
use crate::retrieve::Retrieval;
use crate::settings::{AskSettings, GateMode};

/// One answered question: the contract and everything behind it.
#[derive(Debug)]
pub struct Asked {
    /// What retrieval found.
    pub retrieval: Retrieval,
    /// The verified contract.
    pub contract: Contract,
    /// The generation, when the gate let the question through.
    pub answered: Option<Answered>,
    /// The request sent to the model, when one was sent.
    pub request: Option<GenerationRequest>,
    /// The provider's name (`none` when the gate answered).
    pub provider: String,
    /// Time spent generating and verifying.
    pub generate_time: Duration,
}

/// Generates and verifies an answer from `retrieval`; when the gate
/// stopped the question, answers unanswerable (R1) without the model.
///
/// A backend that quotes among candidate sentences
/// ([`Backend::wants_candidates`]) gets `retrieval.candidates` (unless
/// `settings.candidates` is 0). `on_claim` is called as in
/// [`pipeline::answer`] (streaming only).
pub async fn answer(
    retrieval: Retrieval,
    backend: Option<&Backend>,
    question: &str,
    settings: &AskSettings,
    provenance: Provenance,
    on_claim: &mut (dyn FnMut(usize, &ClaimOutcome) -> bool + Send),
) -> Result<Asked, AskError> {
    let started = Instant::now();
    if !retrieval.gate_passed() {
        let unanswerable = GroundedAnswer {
            answerable: false,
            claims: Vec::new(),
        };
        let contract = verify_with(
            &unanswerable,
            &retrieval.chunks,
            settings.profile,
            settings.policy,
            provenance,
        );
        return Ok(Asked {
            retrieval,
            contract,
            answered: None,
            request: None,
            provider: "none".into(),
            generate_time: started.elapsed(),
        });
    }
    let backend = backend.ok_or(AskError::NoBackend)?;
    let candidates: &[Candidate] = if backend.wants_candidates() && settings.candidates > 0 {
        &retrieval.candidates
    } else {
        &[]
    };
    let mut request = backend.request_with(&retrieval.chunks, question, candidates);
    if settings.gate.mode == GateMode::Evidence {
        request.min_p_answerable = Some(settings.gate.min_p_answerable);
    }
    let answered = pipeline::answer(
        backend.generator(),
        &request,
        &retrieval.chunks,
        AnswerSettings {
            profile: settings.profile,
            policy: settings.policy,
            stream: settings.stream,
        },
        provenance,
        on_claim,
    )
    .await
    .map_err(AskError::Answer)?;
    Ok(Asked {
        contract: answered.contract.clone(),
        provider: backend.generator().provider().to_string(),
        retrieval,
        answered: Some(answered),
        request: Some(request),
        generate_time: started.elapsed(),
    })
}

//! The question-answering pipeline over groundcite's own index, shared by
//! `groundcite ask`, `groundcite eval` and the service's `POST /v1/ask`:
//! retrieve (BM25, fused with sentence vectors when an embedding model is
//! configured), rank candidate quotes, apply the gate, generate, verify, and
//! describe the whole run as a trace record.
//!
//! Key types: [`AskSettings`] (top-k, [`GateSettings`], candidates,
//! matching), [`Retrieval`] (chunks, ranked [`Candidate`]s, the [`Signals`]
//! the gate read, its [`Verdict`]), [`Asked`] (contract, the generation
//! behind it, timings) with [`Asked::trace_record`].
//!
//! ## The gate
//! No question is refused for its wording. [`GateMode::Retrieval`] (the
//! default of hosted providers, which decide answerability themselves)
//! refuses only when retrieval found nothing: an empty corpus, or no chunk
//! above the BM25 floor and none above the cosine floor.
//! [`GateMode::Evidence`] (the default of the embedded model) also refuses
//! when the best candidate sentence is not similar enough to the question
//! (a semantic score that survives paraphrase; lexical coverage when no
//! embedding model is configured), and the embedded model answers only
//! when its own probability of `"answerable": true` clears
//! [`GateSettings::min_p_answerable`]. docs/local.md gives the measured
//! precision and recall of the rule.

use std::sync::Arc;

use groundcite_index::Embed;

mod answer;
#[cfg(feature = "embed")]
mod embedder;
mod error;
mod pool;
mod rank;
mod retrieve;
pub mod retriever;
mod settings;
mod trace;

pub use answer::{Asked, answer};
#[cfg(feature = "embed")]
pub use embedder::{EmbedModel, load_embedder};
pub use error::AskError;
pub use rank::question_parts;
pub use retrieve::{
    ExternalHits, Retrieval, Signals, UnknownCode, Verdict, gate, retrieve, retrieve_external,
};
pub use retriever::{
    AzureSearchOptions, AzureSearchRetriever, OpenSearchRetriever, PostgresColumns,
    PostgresRetriever, Retriever, RetrieverError,
};
pub use settings::{
    AskSettings, DEFAULT_CANDIDATES, DEFAULT_TOP_K, GateMode, GateSettings, MAX_CANDIDATES,
    MAX_TOP_K, OutOfRange, READER_TOP_K, UnknownGate,
};
pub use trace::{Failure, gate_options, record_failure, record_outcome};

/// 64-bit FNV-1a: stable names and hashes, not a security boundary.
pub fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// A shared embedding model, as the CLI and the service hold it.
pub type SharedEmbed = Arc<dyn Embed>;

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use groundcite_core::{
        Chunk, ChunkSet, ClaimPolicy, Contract, GroundedAnswer, MatchProfile, Provenance,
        verify_with,
    };
    use groundcite_providers::pipeline::Answered;
    use groundcite_providers::{GenerationRequest, ProviderError, StopReason};
    use groundcite_store::TraceOptions;

    use super::*;
    use crate::rank::{answer_kinds, states_kind};

    #[test]
    fn questions_that_ask_several_things_are_split_into_parts() {
        assert_eq!(
            question_parts("how much is express shipping and how long does it take?"),
            vec!["how much is express shipping", "how long does it take"]
        );
        assert_eq!(
            question_parts(
                "going to London for 3 nights, how much can I spend on the hotel and what daily allowance do I get for food?"
            ),
            vec![
                "going to London for 3 nights how much can I spend on the hotel",
                "going to London for 3 nights what daily allowance do I get for food"
            ]
        );
        assert_eq!(
            question_parts(
                "lost my card. will my subscription keep working and how soon does it get here?"
            ),
            vec![
                "lost my card will my subscription keep working",
                "lost my card how soon does it get here"
            ]
        );
        // One question, however long, stays whole.
        for q in [
            "How long does standard shipping take?",
            "if I work on a bank holiday do I get extra pay or a day off instead?",
            "open a db read-only in the cli, and also run a sketchy .sql script",
            "I want to leave but I'm overdrawn and have savings in a pot",
            "",
        ] {
            assert_eq!(question_parts(q), vec![q.to_string()], "{q}");
        }
    }

    fn chunks() -> ChunkSet {
        ChunkSet::new(vec![Chunk {
            chunk_id: "refunds#1".into(),
            content: "Refunds are available within 30 days of purchase.".into(),
            source_title: None,
            source_url: None,
            page_number: None,
            score: None,
        }])
        .expect("chunks")
    }

    fn provenance() -> Provenance {
        Provenance {
            trace_id: "t-1".into(),
            created_at: "2026-12-02T00:00:00Z".into(),
            question: Some("How long do refunds take?".into()),
            model: None,
        }
    }

    fn retrieval() -> Retrieval {
        let mut r = Retrieval::given(chunks());
        r.time = Duration::from_micros(12_500);
        r
    }

    /// The extra options a caller adds (the service's ask route, the CLI).
    fn extra() -> TraceOptions {
        TraceOptions {
            stream: Some(true),
            docs: Some("docs".into()),
            ..TraceOptions::default()
        }
    }

    #[test]
    fn an_answered_ask_is_traced_with_typed_options_and_float_timings() {
        let settings = AskSettings::with_gate(GateMode::Off);
        let raw = r#"{"answerable": true, "claims": [{"text": "Refunds take up to 30 days.", "citations": [{"chunk_id": "refunds#1", "quote": "Refunds are available within 30 days of purchase."}]}]}"#;
        let answer: GroundedAnswer = serde_json::from_str(raw).expect("answer");
        let contract = verify_with(
            &answer,
            &chunks(),
            settings.profile,
            settings.policy,
            provenance(),
        );
        let asked = Asked {
            retrieval: retrieval(),
            contract: contract.clone(),
            answered: Some(Answered {
                contract,
                raw_output: Some(raw.into()),
                model: Some("m-1".into()),
                usage: Some(groundcite_providers::Usage {
                    input_tokens: Some(100),
                    output_tokens: Some(20),
                }),
                stop_reason: StopReason::Stop,
                p_answerable: Some(0.9),
                form: groundcite_core::AnswerForm::Grounded,
                native: None,
                request_id: Some("req-1".into()),
                generate_time: Duration::from_millis(840),
                error: None,
                note: None,
            }),
            request: Some(GenerationRequest {
                system: "sys".into(),
                user: "user".into(),
                schema: None,
                chunks: Vec::new(),
                native_sources: Default::default(),
                max_tokens: 512,
                temperature: None,
                candidates: Vec::new(),
                form: groundcite_core::AnswerForm::Grounded,
                min_p_answerable: None,
            }),
            provider: "openai".into(),
            generate_time: Duration::from_micros(840_250),
        };
        let r = asked.trace_record(
            "t-1",
            "ask",
            "How long do refunds take?",
            &settings,
            extra(),
        );
        assert_eq!(r.options.profile, Some(MatchProfile::Default));
        assert_eq!(r.options.policy, Some(ClaimPolicy::Strict));
        assert_eq!(r.options.top_k, Some(settings.top_k));
        assert_eq!(r.options.candidates, Some(settings.candidates));
        assert_eq!(r.options.p_answerable, Some(0.9));
        assert_eq!(
            r.options.gate_verdict,
            Some(serde_json::json!({"verdict": "pass"}))
        );
        assert!(r.options.gate.is_some() && r.options.signals.is_some());
        assert_eq!(r.options.stream, Some(true));
        assert_eq!(r.options.docs.as_deref(), Some("docs"));
        assert!(r.options.extra.is_empty(), "{}", r.options);
        // Fractions of a millisecond are kept: one unit, float ms.
        assert_eq!(r.timings.retrieve_ms, Some(12.5));
        assert_eq!(r.timings.generate_ms, Some(840.25));
        assert_eq!(r.timings.total_ms, None, "the caller adds total_ms");
        assert_eq!(
            (r.timings.input_tokens, r.timings.output_tokens),
            (Some(100), Some(20))
        );
        assert_eq!((r.input_tokens, r.output_tokens), (Some(100), Some(20)));
        assert_eq!(r.stop_reason.as_deref(), Some("stop"));
        assert_eq!(r.answer_form.as_deref(), Some("grounded"));
        assert_eq!(r.provider.as_deref(), Some("openai"));
        assert_eq!(r.model.as_deref(), Some("m-1"));
        assert_eq!(r.provider_request_id.as_deref(), Some("req-1"));
        assert_eq!(
            r.prompt,
            Some(serde_json::json!({"system": "sys", "user": "user"}))
        );
        assert_eq!(r.answerable(), Some(true));
        assert_eq!(r.chunks.len(), 1);
    }

    #[test]
    fn a_refused_and_a_failed_ask_are_traced_with_the_gate_options() {
        let settings = AskSettings::with_gate(GateMode::Off);
        let mut refused_retrieval = retrieval();
        refused_retrieval.verdict = Verdict::Refuse("off topic".into());
        let asked = Asked {
            retrieval: refused_retrieval,
            contract: Contract::refused(
                groundcite_core::RefusalCode::R1,
                provenance(),
                settings.profile,
                Vec::new(),
            ),
            answered: None,
            request: None,
            provider: "none".into(),
            generate_time: Duration::from_micros(250),
        };
        let r = asked.trace_record("t-2", "ask", "q", &settings, TraceOptions::default());
        assert_eq!(
            r.options.gate_verdict,
            Some(serde_json::json!({"verdict": "refuse", "reason": "off topic"}))
        );
        assert_eq!(r.options.p_answerable, None);
        assert_eq!(r.options.stream, None);
        assert_eq!(r.timings.retrieve_ms, Some(12.5));
        assert_eq!(r.timings.generate_ms, Some(0.25));
        assert_eq!(r.timings.input_tokens, None);
        assert_eq!(
            (r.raw_output.as_deref(), r.stop_reason.as_deref()),
            (None, None)
        );
        assert_eq!(r.provider.as_deref(), Some("none"));
        assert_eq!(r.answerable(), Some(false));

        let error = ProviderError::new(
            groundcite_providers::ErrorKind::Connection,
            "openai",
            "connection reset",
        );
        let r = retrieval().failed_trace_record(
            "t-3",
            "ask",
            "q",
            &settings,
            Failure {
                provider: "openai",
                error: &error,
                raw_output: Some("{\"answerable\"".into()),
            },
            extra(),
        );
        assert_eq!(r.options.profile, Some(MatchProfile::Default));
        assert_eq!(
            r.options.gate_verdict,
            Some(serde_json::json!({"verdict": "pass"}))
        );
        assert_eq!(r.options.stream, Some(true));
        assert_eq!(r.options.docs.as_deref(), Some("docs"));
        assert_eq!(r.timings.retrieve_ms, Some(12.5));
        assert_eq!(r.timings.generate_ms, None);
        assert_eq!(r.raw_output.as_deref(), Some("{\"answerable\""));
        assert_eq!(r.stop_reason.as_deref(), Some("error"));
        assert!(r.error.is_some());
        assert_eq!(r.contract, None);
    }

    #[test]
    fn answer_kinds_follow_the_question_words() {
        assert!(answer_kinds("How long does a refund take?").contains("duration"));
        assert!(answer_kinds("how much is express shipping").contains("money"));
        assert!(answer_kinds("how many failed attempts lock me out").contains("count"));
        assert!(answer_kinds("What is the interest rate?").contains("percent"));
        assert!(answer_kinds("Can I return opened software?").is_empty());
        assert!(states_kind(
            "Refunds take 5 business days.",
            &answer_kinds("how soon do i get my money")
        ));
    }
}

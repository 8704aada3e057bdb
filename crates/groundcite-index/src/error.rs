//! The one error type of this crate.

use std::io;
use std::path::{Path, PathBuf};

/// Why an index operation failed. Small (one pointer); see
/// [`IndexError::kind`] for the details.
///
/// Problems with single documents (bad UTF-8, too large, unreadable) are not
/// errors: they are listed in [`UpdateReport::skipped`](crate::UpdateReport::skipped).
#[derive(Debug, thiserror::Error)]
#[error(transparent)]
pub struct IndexError(Box<IndexErrorKind>);

/// What went wrong, with the path concerned.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum IndexErrorKind {
    /// A file-system operation on the index or documents directory failed.
    #[error("cannot {action} {}: {source}", path.display())]
    Io {
        /// What we were doing (`"create directory"`, `"write manifest"`, …).
        action: &'static str,
        /// The path concerned.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: io::Error,
    },
    /// The documents directory given to [`Index::update`](crate::Index::update)
    /// is not a directory.
    #[error("documents directory {} is not a directory", path.display())]
    NotADirectory {
        /// The path given.
        path: PathBuf,
    },
    /// The index directory exists, is not empty, and holds no index: we
    /// refuse to write into it.
    #[error(
        "{} is not empty and holds no groundcite index; choose an empty or new directory",
        path.display()
    )]
    NotAnIndex {
        /// The index directory.
        path: PathBuf,
    },
    /// The index was built with another schema (another version of this
    /// crate, or another program).
    #[error(
        "the index at {} has an incompatible schema; delete the directory and index again",
        path.display()
    )]
    IncompatibleSchema {
        /// The index directory.
        path: PathBuf,
    },
    /// Another writer holds the index lock.
    #[error(
        "the index at {} is locked by another writer; wait for it to finish",
        path.display()
    )]
    Locked {
        /// The index directory.
        path: PathBuf,
    },
    /// The embedding model failed on a document's sentences.
    #[error("embedding the sentences of {document} (index at {}): {message}", path.display())]
    Embedding {
        /// The index directory.
        path: PathBuf,
        /// The document's relative path.
        document: String,
        /// The model's error.
        message: String,
    },
    /// The search engine (tantivy) failed.
    #[error("search index at {}: {source}", path.display())]
    Engine {
        /// The index directory.
        path: PathBuf,
        /// The engine's error, kept opaque so that its type is not part of
        /// this crate's API.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
}

impl IndexError {
    /// The details.
    pub fn kind(&self) -> &IndexErrorKind {
        &self.0
    }

    pub(crate) fn io(action: &'static str, path: &Path, source: io::Error) -> IndexError {
        IndexErrorKind::Io {
            action,
            path: path.to_owned(),
            source,
        }
        .into()
    }

    pub(crate) fn embedding(path: &Path, document: &str, message: String) -> IndexError {
        IndexErrorKind::Embedding {
            path: path.to_owned(),
            document: document.to_string(),
            message,
        }
        .into()
    }

    pub(crate) fn engine(path: &Path, source: tantivy::TantivyError) -> IndexError {
        match source {
            tantivy::TantivyError::LockFailure(..) => IndexErrorKind::Locked {
                path: path.to_owned(),
            },
            other => IndexErrorKind::Engine {
                path: path.to_owned(),
                source: Box::new(other),
            },
        }
        .into()
    }
}

impl From<IndexErrorKind> for IndexError {
    fn from(kind: IndexErrorKind) -> Self {
        IndexError(Box::new(kind))
    }
}

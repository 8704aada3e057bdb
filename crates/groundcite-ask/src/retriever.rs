//! Search services a team already runs, searched instead of groundcite's
//! own index: one trait, [`Retriever`], and its implementations:
//! [`PostgresRetriever`] (PostgreSQL full-text search),
//! [`OpenSearchRetriever`] (OpenSearch and Elasticsearch) and
//! [`AzureSearchRetriever`] (Azure AI Search), the last two over REST.
//!
//! A retriever returns chunks with the service's own score; fields the
//! service does not map (title, URL, page) are null, never invented. The
//! ranking of candidate sentences and the gate then work from the question
//! and those chunks alone (see [`crate::retrieve_external`]).

use groundcite_core::Chunk;

mod azure_search;
mod http;
mod opensearch;
mod postgres;

pub use azure_search::{AZURE_SEARCH_API_VERSION, AzureSearchOptions, AzureSearchRetriever};
pub use http::{Auth, FieldMap};
pub use opensearch::OpenSearchRetriever;
pub use postgres::{PostgresColumns, PostgresRetriever};

/// A search service, searched per question.
pub trait Retriever: Send + Sync {
    /// Its kind, for traces and messages (`postgres`, `opensearch`,
    /// `azure-search`).
    fn name(&self) -> &'static str;
    /// Up to `limit` chunks for `question`, best first, `score` the
    /// service's own (its scale, not BM25's).
    fn search(&self, question: &str, limit: usize) -> Result<Vec<Chunk>, RetrieverError>;
    /// Hits scoring below this are dropped before ranking (on the
    /// service's own scale; set per retriever).
    fn score_floor(&self) -> f64;
}

/// Why a search service could not be searched.
#[derive(Debug, thiserror::Error)]
#[error("{retriever}: {message}")]
pub struct RetrieverError {
    /// The retriever's kind.
    pub retriever: &'static str,
    /// What went wrong (never a password or key).
    pub message: String,
}

impl RetrieverError {
    pub(crate) fn new(retriever: &'static str, message: impl Into<String>) -> Self {
        RetrieverError {
            retriever,
            message: message.into(),
        }
    }
}

/// A SQL identifier from settings (`name` or `schema.name`), quoted; `None`
/// when it is not plain letters, digits and underscores.
pub(crate) fn quoted_identifier(name: &str) -> Option<String> {
    let part_ok = |p: &str| {
        !p.is_empty()
            && p.len() <= 63
            && p.chars()
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && p.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    };
    let parts: Vec<&str> = name.split('.').collect();
    (parts.len() <= 2 && parts.iter().all(|p| part_ok(p))).then(|| {
        parts
            .iter()
            .map(|p| format!("\"{p}\""))
            .collect::<Vec<_>>()
            .join(".")
    })
}

#[cfg(test)]
mod tests {
    use super::quoted_identifier;

    #[test]
    fn identifiers_from_settings_are_plain_or_refused() {
        assert_eq!(quoted_identifier("chunks").as_deref(), Some("\"chunks\""));
        assert_eq!(
            quoted_identifier("kb.chunks_v2").as_deref(),
            Some("\"kb\".\"chunks_v2\"")
        );
        for bad in [
            "",
            "1chunks",
            "chunks; DROP TABLE x",
            "a.b.c",
            "ch\"unks",
            "chunks--",
            "a.",
            &"x".repeat(64),
        ] {
            assert_eq!(quoted_identifier(bad), None, "{bad:?}");
        }
    }
}

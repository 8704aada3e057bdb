//! Azure AI Search (the seed's retriever): `POST
//! {endpoint}/indexes/{index}/docs/search?api-version=…` with an `api-key`
//! header, full-text search over any of the question's words
//! (`searchMode: any`), or the semantic ranker when a semantic
//! configuration is named (its `@search.rerankerScore`, 0-4, is then the
//! score the floor applies to). Hits are `value[]`.

use std::time::Duration;

use groundcite_core::Chunk;
use serde_json::{Value, json};

use super::http::{Auth, Client, FieldMap, check_field};
use super::{Retriever, RetrieverError};

const NAME: &str = "azure-search";
/// The REST API version sent unless set (generally available).
pub const AZURE_SEARCH_API_VERSION: &str = "2024-07-01";

/// Search in an Azure AI Search index.
pub struct AzureSearchRetriever {
    client: Client,
    url: url::Url,
    auth: Auth,
    fields: FieldMap,
    semantic: Option<String>,
    floor: f64,
}

impl std::fmt::Debug for AzureSearchRetriever {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AzureSearchRetriever")
            .field("url", &self.url.as_str())
            .field("auth", &self.auth)
            .field("fields", &self.fields)
            .field("semantic", &self.semantic)
            .finish_non_exhaustive()
    }
}

/// Azure AI Search's settings beyond the field map.
#[derive(Debug, Clone, PartialEq)]
pub struct AzureSearchOptions {
    /// `https://NAME.search.windows.net`.
    pub endpoint: String,
    /// The index.
    pub index: String,
    /// The REST API version.
    pub api_version: String,
    /// A semantic configuration: rank with the semantic ranker.
    pub semantic_configuration: Option<String>,
    /// The least score kept (`@search.score`, or `@search.rerankerScore`
    /// with the semantic ranker).
    pub floor: f64,
    /// One request, body included.
    pub timeout: Duration,
}

impl AzureSearchRetriever {
    /// `api_key`: a query key (sent as `api-key`).
    pub fn new(
        options: &AzureSearchOptions,
        api_key: groundcite_providers::SecretString,
        fields: FieldMap,
    ) -> Result<Self, RetrieverError> {
        if fields.id.is_none() {
            return Err(RetrieverError::new(
                NAME,
                "name the index's key field as the id field (Azure AI Search has no separate document ID)",
            ));
        }
        fields.check(NAME)?;
        if let Some(cfg) = &options.semantic_configuration {
            check_field(NAME, "semantic configuration", cfg)?;
        }
        let plain = |s: &str| {
            !s.is_empty()
                && s.len() <= 128
                && s.chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_'))
        };
        if !plain(&options.index) {
            return Err(RetrieverError::new(
                NAME,
                format!("the index {:?} is not a plain name", options.index),
            ));
        }
        if !plain(&options.api_version) {
            return Err(RetrieverError::new(
                NAME,
                "the API version is not a plain version string",
            ));
        }
        let mut url = super::http::endpoint(NAME, &options.endpoint)?;
        let path = format!(
            "{}/indexes/{}/docs/search",
            url.path().trim_end_matches('/'),
            options.index
        );
        url.set_path(&path);
        url.set_query(Some(&format!("api-version={}", options.api_version)));
        Ok(AzureSearchRetriever {
            client: Client::new(NAME, options.timeout)?,
            url,
            auth: Auth::Header("api-key", api_key),
            fields,
            semantic: options.semantic_configuration.clone(),
            floor: options.floor,
        })
    }

    fn body(&self, question: &str, limit: usize) -> Value {
        let mut body = json!({
            "search": question,
            "top": limit,
            "select": self.fields.selected().join(","),
            "searchMode": "any",
        });
        match &self.semantic {
            Some(cfg) => {
                body["queryType"] = "semantic".into();
                body["semanticConfiguration"] = cfg.clone().into();
            }
            None => body["queryType"] = "simple".into(),
        }
        body
    }
}

impl Retriever for AzureSearchRetriever {
    fn name(&self) -> &'static str {
        NAME
    }

    fn search(&self, question: &str, limit: usize) -> Result<Vec<Chunk>, RetrieverError> {
        let body = self.body(question, limit);
        let hits = self
            .client
            .hits(&self.url, &self.auth, question, &body, "/value")?;
        let score_key = if self.semantic.is_some() {
            "@search.rerankerScore"
        } else {
            "@search.score"
        };
        Ok(hits
            .iter()
            .take(limit)
            .filter_map(|h| {
                self.fields
                    .chunk(h, None, h.get(score_key).and_then(Value::as_f64))
            })
            .collect())
    }

    fn score_floor(&self) -> f64 {
        self.floor
    }
}

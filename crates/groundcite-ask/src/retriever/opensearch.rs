//! OpenSearch and Elasticsearch: `POST {endpoint}/{index}/_search` with a
//! `multi_match` over the text (and the title, when mapped) of the
//! question's words, any of them (`operator: or`), BM25-scored by the
//! service. Hits are `hits.hits[]` with `_id`, `_score` and `_source`.

use std::time::Duration;

use groundcite_core::Chunk;
use serde_json::{Value, json};

use super::http::{Auth, Client, FieldMap};
use super::{Retriever, RetrieverError};

const NAME: &str = "opensearch";

/// Search in an OpenSearch or Elasticsearch index.
pub struct OpenSearchRetriever {
    client: Client,
    url: url::Url,
    auth: Auth,
    fields: FieldMap,
    floor: f64,
}

impl std::fmt::Debug for OpenSearchRetriever {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenSearchRetriever")
            .field("url", &self.url.as_str())
            .field("auth", &self.auth)
            .field("fields", &self.fields)
            .field("floor", &self.floor)
            .finish_non_exhaustive()
    }
}

impl OpenSearchRetriever {
    /// `endpoint` (`https://search.internal:9200`), `index` (a name, no
    /// wildcard or comma), `floor` the least `_score` kept.
    pub fn new(
        endpoint: &str,
        index: &str,
        auth: Auth,
        fields: FieldMap,
        floor: f64,
        timeout: Duration,
    ) -> Result<Self, RetrieverError> {
        let valid_index = !index.is_empty()
            && index.len() <= 255
            && !index.starts_with(['-', '_', '+', '.'])
            && index.chars().all(|c| {
                c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '-' | '_' | '.')
            });
        if !valid_index {
            return Err(RetrieverError::new(
                NAME,
                format!(
                    "the index {index:?} is not a plain index name (lower case, digits, - _ .)"
                ),
            ));
        }
        fields.check(NAME)?;
        let base = super::http::endpoint(NAME, endpoint)?;
        let url = base
            .join(&format!(
                "{}/{index}/_search",
                base.path().trim_end_matches('/')
            ))
            .map_err(|e| RetrieverError::new(NAME, format!("the endpoint: {e}")))?;
        Ok(OpenSearchRetriever {
            client: Client::new(NAME, timeout)?,
            url,
            auth,
            fields,
            floor,
        })
    }

    /// The request body for `question`.
    fn body(&self, question: &str, limit: usize) -> Value {
        let mut match_fields = vec![Value::from(self.fields.content.clone())];
        if let Some(t) = &self.fields.title {
            match_fields.push(Value::from(t.clone()));
        }
        json!({
            "size": limit,
            "query": {"multi_match": {"query": question, "fields": match_fields, "operator": "or"}},
            "_source": self.fields.selected(),
        })
    }
}

impl Retriever for OpenSearchRetriever {
    fn name(&self) -> &'static str {
        NAME
    }

    fn search(&self, question: &str, limit: usize) -> Result<Vec<Chunk>, RetrieverError> {
        let body = self.body(question, limit);
        let hits = self
            .client
            .hits(&self.url, &self.auth, question, &body, "/hits/hits")?;
        Ok(hits
            .iter()
            .take(limit)
            .filter_map(|h| {
                let source = h.get("_source")?;
                self.fields.chunk(
                    source,
                    h.get("_id"),
                    h.get("_score").and_then(Value::as_f64),
                )
            })
            .collect())
    }

    fn score_floor(&self) -> f64 {
        self.floor
    }
}

//! What the REST retrievers share: one HTTP client on a runtime of its own,
//! a JSON POST with a size-limited body, errors that name the status and
//! never the key, and hit fields read by name (a missing field is null).

use std::time::Duration;

use groundcite_core::Chunk;
use serde_json::Value;

use super::RetrieverError;

/// Larger responses are refused rather than held in memory.
const MAX_RESPONSE_BYTES: usize = 8 << 20;
/// Kept of an error body, for the message.
const MAX_ERROR_CHARS: usize = 300;

/// A service's search endpoint and its credential.
pub(crate) struct Client {
    name: &'static str,
    runtime: tokio::runtime::Runtime,
    http: reqwest::Client,
}

impl Client {
    pub(crate) fn new(name: &'static str, timeout: Duration) -> Result<Self, RetrieverError> {
        // reqwest is built without a default crypto provider (no C build);
        // an error means one is installed already.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let http = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(10).min(timeout))
            .timeout(timeout)
            .user_agent(concat!("groundcite/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| RetrieverError::new(name, format!("building the HTTP client: {e}")))?;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| RetrieverError::new(name, format!("starting its runtime: {e}")))?;
        Ok(Client {
            name,
            runtime,
            http,
        })
    }

    /// POSTs `body` to `url` with `auth` and returns the JSON answer.
    pub(crate) fn post_json(
        &self,
        url: &url::Url,
        auth: &Auth,
        body: &Value,
    ) -> Result<Value, RetrieverError> {
        let run = || self.runtime.block_on(self.send(url, auth, body));
        // From inside another runtime (an async task), on a thread of its own.
        if tokio::runtime::Handle::try_current().is_ok() {
            std::thread::scope(|s| s.spawn(run).join())
                .map_err(|_| RetrieverError::new(self.name, "the search thread panicked"))?
        } else {
            run()
        }
    }

    /// The hits of a search: the array at `pointer` of the JSON answer to
    /// `body` (none for a blank question, which no service should get).
    pub(crate) fn hits(
        &self,
        url: &url::Url,
        auth: &Auth,
        question: &str,
        body: &Value,
        pointer: &str,
    ) -> Result<Vec<Value>, RetrieverError> {
        if question.trim().is_empty() {
            return Ok(Vec::new());
        }
        match self
            .post_json(url, auth, body)?
            .pointer_mut(pointer)
            .map(Value::take)
        {
            Some(Value::Array(hits)) => Ok(hits),
            _ => Err(RetrieverError::new(
                self.name,
                format!(
                    "the response has no {} array",
                    pointer.trim_start_matches('/').replace('/', ".")
                ),
            )),
        }
    }

    async fn send(
        &self,
        url: &url::Url,
        auth: &Auth,
        body: &Value,
    ) -> Result<Value, RetrieverError> {
        let err = |m: String| RetrieverError::new(self.name, m);
        let mut req = self.http.post(url.clone()).json(body);
        req = match auth {
            Auth::None => req,
            Auth::Header(name, value) => req.header(*name, value.expose()),
            Auth::Basic(user, password) => req.basic_auth(user, Some(password.expose())),
        };
        let mut resp = req.send().await.map_err(|e| {
            err(if e.is_timeout() {
                "the search service timed out".into()
            } else {
                format!("cannot reach the search service: {}", e.without_url())
            })
        })?;
        let status = resp.status();
        let mut bytes: Vec<u8> = Vec::new();
        while let Some(piece) = resp
            .chunk()
            .await
            .map_err(|e| err(format!("reading the response: {}", e.without_url())))?
        {
            if bytes.len() + piece.len() > MAX_RESPONSE_BYTES {
                return Err(err(format!(
                    "the response is larger than {MAX_RESPONSE_BYTES} bytes"
                )));
            }
            bytes.extend_from_slice(&piece);
        }
        if !status.is_success() {
            let text: String = String::from_utf8_lossy(&bytes)
                .chars()
                .take(MAX_ERROR_CHARS)
                .collect();
            return Err(err(format!("HTTP {}: {text}", status.as_u16())));
        }
        serde_json::from_slice(&bytes).map_err(|e| err(format!("the response is not JSON: {e}")))
    }
}

/// How a request proves who it is. Secrets are never printed.
#[derive(Debug, Clone)]
pub enum Auth {
    /// Nothing (a service on a private network).
    None,
    /// One header (`api-key: KEY`, `Authorization: ApiKey KEY`).
    Header(&'static str, groundcite_providers::SecretString),
    /// HTTP basic authentication.
    Basic(String, groundcite_providers::SecretString),
}

/// How a hit's fields map to a chunk's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldMap {
    /// The chunk ID's field; `None`: the service's own document ID.
    pub id: Option<String>,
    /// The text.
    pub content: String,
    /// The source title (`None`: not mapped).
    pub title: Option<String>,
    /// The source URL.
    pub url: Option<String>,
    /// The page number (an integer).
    pub page: Option<String>,
}

impl Default for FieldMap {
    fn default() -> Self {
        FieldMap {
            id: Some("chunk_id".into()),
            content: "content".into(),
            title: Some("source_title".into()),
            url: Some("source_url".into()),
            page: Some("page_number".into()),
        }
    }
}

impl FieldMap {
    /// Every mapped name is a plain field name (it goes into the request).
    pub(crate) fn check(&self, retriever: &'static str) -> Result<(), RetrieverError> {
        for (what, f) in [
            ("content field", Some(&self.content)),
            ("id field", self.id.as_ref()),
            ("title field", self.title.as_ref()),
            ("url field", self.url.as_ref()),
            ("page field", self.page.as_ref()),
        ] {
            if let Some(f) = f {
                check_field(retriever, what, f)?;
            }
        }
        Ok(())
    }

    /// The fields to ask the service for.
    pub(crate) fn selected(&self) -> Vec<&str> {
        let mut v: Vec<&str> = vec![self.content.as_str()];
        for f in [&self.id, &self.title, &self.url, &self.page]
            .into_iter()
            .flatten()
        {
            v.push(f);
        }
        v
    }

    /// A chunk from a hit's fields (`doc`), its service ID and score; `None`
    /// when it has no ID or no text (it could not be cited).
    pub(crate) fn chunk(
        &self,
        doc: &Value,
        service_id: Option<&Value>,
        score: Option<f64>,
    ) -> Option<Chunk> {
        let id = match &self.id {
            Some(f) => field_text(doc.get(f)),
            None => field_text(service_id),
        }?;
        let content = field_text(doc.get(&self.content))?;
        if id.is_empty() || content.trim().is_empty() {
            return None;
        }
        let field = |f: &Option<String>| f.as_ref().and_then(|f| field_text(doc.get(f)));
        let page = self
            .page
            .as_ref()
            .and_then(|f| doc.get(f))
            .and_then(Value::as_u64)
            .and_then(|p| u32::try_from(p).ok())
            .filter(|p| *p > 0);
        Some(Chunk {
            chunk_id: id,
            content,
            source_title: field(&self.title),
            source_url: field(&self.url),
            page_number: page,
            score: score.filter(|s| s.is_finite()),
        })
    }
}

/// A hit's field as a chunk's text: a string, or a number written out.
fn field_text(v: Option<&Value>) -> Option<String> {
    match v? {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// A service's endpoint: an http(s) URL with a host.
pub(crate) fn endpoint(retriever: &'static str, s: &str) -> Result<url::Url, RetrieverError> {
    url::Url::parse(s)
        .ok()
        .filter(|u| matches!(u.scheme(), "http" | "https") && u.host().is_some())
        .ok_or_else(|| RetrieverError::new(retriever, "the endpoint is not an http(s) URL"))
}

/// A field name from settings: plain enough to put in a request.
pub(crate) fn check_field(
    retriever: &'static str,
    what: &str,
    name: &str,
) -> Result<(), RetrieverError> {
    let ok = !name.is_empty()
        && name.len() <= 128
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '@'));
    if ok {
        Ok(())
    } else {
        Err(RetrieverError::new(
            retriever,
            format!("the {what} {name:?} is not a plain field name"),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Any JSON value: what a search service may put in a hit's field.
    fn json() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::from),
            any::<u64>().prop_map(Value::from),
            any::<f64>().prop_map(Value::from),
            ".{0,12}".prop_map(Value::String),
        ];
        leaf.prop_recursive(3, 16, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                prop::collection::btree_map(".{0,8}", inner, 0..4)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    /// A hit: some of the mapped fields (and others), any values.
    fn hit() -> impl Strategy<Value = Value> {
        let name = prop_oneof![
            Just("chunk_id".to_string()),
            Just("content".to_string()),
            Just("source_title".to_string()),
            Just("source_url".to_string()),
            Just("page_number".to_string()),
            ".{0,8}",
        ];
        prop_oneof![
            prop::collection::btree_map(name, json(), 0..7)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
            json(),
        ]
    }

    proptest! {
        /// Whatever a service returns, a hit becomes a citable chunk or
        /// nothing, never a panic: an ID and non-blank text, a positive page
        /// that fits, a finite score.
        #[test]
        fn any_hit_decodes_to_a_citable_chunk_or_nothing(
            doc in hit(),
            service_id in proptest::option::of(json()),
            score in proptest::option::of(any::<f64>()),
        ) {
            for map in [FieldMap::default(), FieldMap { id: None, ..FieldMap::default() }] {
                if let Some(c) = map.chunk(&doc, service_id.as_ref(), score) {
                    prop_assert!(!c.chunk_id.is_empty());
                    prop_assert!(!c.content.trim().is_empty());
                    prop_assert!(c.page_number.is_none_or(|p| p > 0));
                    prop_assert!(c.score.is_none_or(f64::is_finite));
                    // The text and the ID are the mapped fields', as given.
                    prop_assert_eq!(Some(c.content), field_text(doc.get("content")));
                    let id = match &map.id {
                        Some(f) => field_text(doc.get(f)),
                        None => field_text(service_id.as_ref()),
                    };
                    prop_assert_eq!(Some(c.chunk_id), id);
                }
            }
        }
    }
}

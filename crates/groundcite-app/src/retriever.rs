//! Which retriever `ask`, `eval` and `serve` search: groundcite's own index
//! of a docs folder (the default) or a search service the team already
//! runs (`--retriever postgres`), and that service's settings:
//! flag > environment > `[retriever]` in groundcite.toml.
//!
//! ```toml
//! [retriever]
//! kind = "postgres"               # or "opensearch", "azure_search"
//! [retriever.postgres]
//! # url: better GROUNDCITE_RETRIEVER_URL (it may hold a password)
//! table = "kb.chunks"
//! id_column = "chunk_id"
//! content_column = "content"
//! title_column = "source_title"   # "" = none: null in every chunk
//! url_column = "source_url"
//! page_column = "page_number"
//! language = "english"
//! floor = 0.0                     # least ts_rank_cd kept
//! [retriever.opensearch]          # OpenSearch or Elasticsearch
//! endpoint = "https://search.internal:9200"
//! index = "kb-chunks"
//! id_field = "chunk_id"           # "" = the service's own _id
//! # content_field, title_field, url_field, page_field, floor, timeout_secs
//! # key: GROUNDCITE_RETRIEVER_API_KEY (Authorization: ApiKey …), or
//! # GROUNDCITE_RETRIEVER_USER + GROUNDCITE_RETRIEVER_PASSWORD (basic)
//! [retriever.azure_search]
//! endpoint = "https://NAME.search.windows.net"
//! index = "kb-chunks"
//! id_field = "id"                 # the index's key field
//! semantic_configuration = "kb"   # optional: the semantic ranker
//! # api_version, content_field, …; key: AZURE_SEARCH_API_KEY
//! ```

use std::time::Duration;

use groundcite_ask::retriever::{AZURE_SEARCH_API_VERSION, Auth, FieldMap};
use groundcite_ask::{
    AzureSearchOptions, AzureSearchRetriever, OpenSearchRetriever, PostgresColumns,
    PostgresRetriever, Retriever,
};
use groundcite_providers::SecretString;
use serde::Deserialize;

use crate::env::Env;
use crate::error::SettingsError;
use crate::flags::RetrievalFlags;

/// Where chunks come from.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum RetrieverKind {
    /// groundcite's own index of the docs folder.
    #[default]
    Index,
    /// PostgreSQL full-text search over a table of chunks.
    Postgres,
    /// OpenSearch or Elasticsearch.
    #[value(name = "opensearch")]
    #[serde(rename = "opensearch")]
    OpenSearch,
    /// Azure AI Search.
    #[value(name = "azure-search")]
    #[serde(rename = "azure_search")]
    AzureSearch,
}

/// `[retriever]`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RetrieverSection {
    /// `kind`.
    pub kind: Option<RetrieverKind>,
    /// `[retriever.postgres]`.
    #[serde(default)]
    pub postgres: PostgresSection,
    /// `[retriever.opensearch]`.
    #[serde(default)]
    pub opensearch: RestSection,
    /// `[retriever.azure_search]`.
    #[serde(default)]
    pub azure_search: RestSection,
}

/// `[retriever.opensearch]` and `[retriever.azure_search]`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RestSection {
    /// The service's URL.
    pub endpoint: Option<String>,
    /// The index.
    pub index: Option<String>,
    /// Chunk ID field ("" for the service's own ID, OpenSearch only).
    pub id_field: Option<String>,
    /// Text field.
    pub content_field: Option<String>,
    /// Title field ("" for none).
    pub title_field: Option<String>,
    /// URL field ("" for none).
    pub url_field: Option<String>,
    /// Page number field ("" for none).
    pub page_field: Option<String>,
    /// Least score kept, on the service's scale.
    pub floor: Option<f64>,
    /// One request's time limit.
    pub timeout_secs: Option<f64>,
    /// Azure AI Search's REST API version.
    pub api_version: Option<String>,
    /// Azure AI Search's semantic configuration (the semantic ranker).
    pub semantic_configuration: Option<String>,
}

/// `[retriever.postgres]`.
#[derive(Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PostgresSection {
    /// Connection URL (prefer the environment variable).
    pub url: Option<String>,
    /// Table, `name` or `schema.name`.
    pub table: Option<String>,
    /// Chunk ID column.
    pub id_column: Option<String>,
    /// Text column.
    pub content_column: Option<String>,
    /// Title column ("" for none).
    pub title_column: Option<String>,
    /// URL column ("" for none).
    pub url_column: Option<String>,
    /// Page number column ("" for none).
    pub page_column: Option<String>,
    /// Text search configuration.
    pub language: Option<String>,
    /// Least `ts_rank_cd` kept.
    pub floor: Option<f64>,
}

impl std::fmt::Debug for PostgresSection {
    // The URL may hold a password.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PostgresSection")
            .field("url", &self.url.as_ref().map(|_| "[REDACTED]"))
            .field("table", &self.table)
            .field("floor", &self.floor)
            .finish_non_exhaustive()
    }
}

/// The environment variable of the retriever's connection URL.
pub const RETRIEVER_URL_ENV: &str = "GROUNDCITE_RETRIEVER_URL";
/// The REST retrievers' API key.
pub const RETRIEVER_KEY_ENV: &str = "GROUNDCITE_RETRIEVER_API_KEY";
/// Azure AI Search's key, as Azure's own tools name it.
pub const AZURE_SEARCH_KEY_ENV: &str = "AZURE_SEARCH_API_KEY";

/// The retriever kind: `--retriever` > `GROUNDCITE_RETRIEVER` (read by
/// clap into the flag) > `[retriever] kind` > the index.
pub fn kind(flags: &RetrievalFlags, file: &RetrieverSection) -> RetrieverKind {
    flags.retriever.or(file.kind).unwrap_or_default()
}

/// The external retriever the settings name; `None` for the index.
pub fn external(
    flags: &RetrievalFlags,
    file: &RetrieverSection,
    env: &dyn Env,
) -> Result<Option<Box<dyn Retriever>>, SettingsError> {
    match kind(flags, file) {
        RetrieverKind::Index => Ok(None),
        RetrieverKind::Postgres => {
            let p = &file.postgres;
            let url = flags
                .retriever_url
                .as_ref()
                .map(|u| u.expose().to_string())
                .or_else(|| env.var(RETRIEVER_URL_ENV))
                .or_else(|| p.url.clone())
                .ok_or_else(|| SettingsError::Missing {
                    what: "The PostgreSQL retriever's database URL".into(),
                    ways: format!(
                        "pass --retriever-url, set {RETRIEVER_URL_ENV}, or set [retriever.postgres] url in groundcite.toml"
                    ),
                })?;
            let d = PostgresColumns::default();
            // A column set to "" is not mapped: null in every chunk.
            let opt = |set: &Option<String>, default: Option<String>| match set {
                Some(s) if s.is_empty() => None,
                Some(s) => Some(s.clone()),
                None => default,
            };
            let columns = PostgresColumns {
                table: p.table.clone().unwrap_or(d.table),
                id: p.id_column.clone().unwrap_or(d.id),
                content: p.content_column.clone().unwrap_or(d.content),
                title: opt(&p.title_column, d.title),
                url: opt(&p.url_column, d.url),
                page: opt(&p.page_column, d.page),
                language: p.language.clone().unwrap_or(d.language),
            };
            let floor = p.floor.unwrap_or(0.0);
            if !floor.is_finite() {
                return Err(SettingsError::Invalid {
                    setting: "[retriever.postgres] floor".into(),
                    message: "must be a finite number".into(),
                });
            }
            let r = PostgresRetriever::new(&url, &columns, floor).map_err(|e| {
                SettingsError::Invalid {
                    setting: "[retriever.postgres]".into(),
                    message: e.to_string(),
                }
            })?;
            Ok(Some(Box::new(r)))
        }
        RetrieverKind::OpenSearch => {
            let (endpoint, index, fields, floor, timeout) =
                rest_common(flags, &file.opensearch, "opensearch", env, Some("chunk_id"))?;
            let auth = match (
                env.secret(RETRIEVER_KEY_ENV),
                env.var("GROUNDCITE_RETRIEVER_USER"),
                env.secret("GROUNDCITE_RETRIEVER_PASSWORD"),
            ) {
                (Some(key), _, _) => Auth::Header(
                    "authorization",
                    SecretString::new(format!("ApiKey {}", key.expose())),
                ),
                (None, Some(user), Some(password)) => Auth::Basic(user, password),
                _ => Auth::None,
            };
            let r = OpenSearchRetriever::new(&endpoint, &index, auth, fields, floor, timeout)
                .map_err(|e| invalid("[retriever.opensearch]", e))?;
            Ok(Some(Box::new(r)))
        }
        RetrieverKind::AzureSearch => {
            let s = &file.azure_search;
            let (endpoint, index, fields, floor, timeout) =
                rest_common(flags, s, "azure_search", env, Some("id"))?;
            let key = env
                .secret(AZURE_SEARCH_KEY_ENV)
                .or_else(|| env.secret(RETRIEVER_KEY_ENV))
                .ok_or_else(|| SettingsError::Missing {
                    what: "The Azure AI Search query key".into(),
                    ways: format!("set {AZURE_SEARCH_KEY_ENV} (or {RETRIEVER_KEY_ENV})"),
                })?;
            let options = AzureSearchOptions {
                endpoint,
                index,
                api_version: s
                    .api_version
                    .clone()
                    .unwrap_or_else(|| AZURE_SEARCH_API_VERSION.to_string()),
                semantic_configuration: s.semantic_configuration.clone().filter(|c| !c.is_empty()),
                floor,
                timeout,
            };
            let r = AzureSearchRetriever::new(&options, key, fields)
                .map_err(|e| invalid("[retriever.azure_search]", e))?;
            Ok(Some(Box::new(r)))
        }
    }
}

fn invalid(setting: &str, e: impl std::fmt::Display) -> SettingsError {
    SettingsError::Invalid {
        setting: setting.into(),
        message: e.to_string(),
    }
}

/// A REST retriever's endpoint (`--retriever-url` > `GROUNDCITE_RETRIEVER_URL`
/// > the file), index, field map, floor and time limit.
fn rest_common(
    flags: &RetrievalFlags,
    s: &RestSection,
    section: &str,
    env: &dyn Env,
    default_id: Option<&str>,
) -> Result<(String, String, FieldMap, f64, Duration), SettingsError> {
    let endpoint = flags
        .retriever_url
        .as_ref()
        .map(|u| u.expose().to_string())
        .or_else(|| env.var(RETRIEVER_URL_ENV))
        .or_else(|| s.endpoint.clone())
        .ok_or_else(|| SettingsError::Missing {
            what: "The search service's endpoint".into(),
            ways: format!(
                "pass --retriever-url, set {RETRIEVER_URL_ENV}, or set [retriever.{section}] endpoint in groundcite.toml"
            ),
        })?;
    let index = s.index.clone().ok_or_else(|| SettingsError::Missing {
        what: "The search service's index".into(),
        ways: format!("set [retriever.{section}] index in groundcite.toml"),
    })?;
    let d = FieldMap::default();
    let opt = |set: &Option<String>, default: Option<String>| match set {
        Some(v) if v.is_empty() => None,
        Some(v) => Some(v.clone()),
        None => default,
    };
    let fields = FieldMap {
        id: opt(&s.id_field, default_id.map(str::to_string)),
        content: s.content_field.clone().unwrap_or(d.content),
        title: opt(&s.title_field, d.title),
        url: opt(&s.url_field, d.url),
        page: opt(&s.page_field, d.page),
    };
    let floor = s.floor.unwrap_or(0.0);
    let secs = s.timeout_secs.unwrap_or(10.0);
    if !floor.is_finite() || !secs.is_finite() || secs <= 0.0 || secs > 600.0 {
        return Err(SettingsError::Invalid {
            setting: format!("[retriever.{section}]"),
            message: "floor must be a finite number and timeout_secs in (0, 600]".into(),
        });
    }
    Ok((
        endpoint,
        index,
        fields,
        floor,
        Duration::from_secs_f64(secs),
    ))
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::env::MapEnv;

    fn flags(kind: Option<RetrieverKind>, url: Option<&str>) -> RetrievalFlags {
        RetrievalFlags {
            retriever: kind,
            retriever_url: url.map(groundcite_providers::SecretString::new),
            ..RetrievalFlags::default()
        }
    }

    #[test]
    fn the_index_unless_a_retriever_is_named_flag_over_file() {
        let file: RetrieverSection = toml::from_str(
            "kind = \"postgres\"\n[postgres]\nurl = \"postgres://f@127.0.0.1:1/db\"\n",
        )
        .expect("toml");
        let none = RetrieverSection::default();
        let env = MapEnv(BTreeMap::new());
        assert_eq!(kind(&flags(None, None), &none), RetrieverKind::Index);
        assert!(
            external(&flags(None, None), &none, &env)
                .expect("ok")
                .is_none()
        );
        assert_eq!(kind(&flags(None, None), &file), RetrieverKind::Postgres);
        assert_eq!(
            kind(&flags(Some(RetrieverKind::Index), None), &file),
            RetrieverKind::Index
        );
        let r = external(&flags(None, None), &file, &env)
            .expect("ok")
            .expect("postgres");
        assert_eq!(r.name(), "postgres");
    }

    #[test]
    fn a_postgres_retriever_needs_a_url_and_plain_identifiers() {
        let env = MapEnv(BTreeMap::new());
        let none = RetrieverSection::default();
        let e = external(&flags(Some(RetrieverKind::Postgres), None), &none, &env)
            .err()
            .expect("missing url");
        assert!(e.to_string().contains("--retriever-url"), "{e}");
        let env = MapEnv(BTreeMap::from([(
            RETRIEVER_URL_ENV.to_string(),
            "postgres://u:pw@127.0.0.1:1/db".to_string(),
        )]));
        assert!(external(&flags(Some(RetrieverKind::Postgres), None), &none, &env).is_ok());
        let bad: RetrieverSection =
            toml::from_str("[postgres]\ntable = \"x; drop\"\n").expect("toml");
        let e = external(&flags(Some(RetrieverKind::Postgres), None), &bad, &env)
            .err()
            .expect("bad table");
        assert!(e.to_string().contains("not a plain SQL identifier"), "{e}");
        let unknown = toml::from_str::<RetrieverSection>("[postgres]\ntabel = \"x\"\n");
        assert!(unknown.is_err(), "a misspelt key is an error");
    }

    #[test]
    fn rest_retrievers_need_an_endpoint_an_index_and_for_azure_a_key() {
        let file: RetrieverSection = toml::from_str(
            "kind = \"azure_search\"\n[azure_search]\nendpoint = \"https://kb.search.windows.net\"\nindex = \"kb\"\n[opensearch]\nindex = \"kb\"\n",
        )
        .expect("toml");
        let none = MapEnv(BTreeMap::new());
        let e = external(&flags(None, None), &file, &none)
            .err()
            .expect("no key");
        assert!(e.to_string().contains(AZURE_SEARCH_KEY_ENV), "{e}");
        let keyed = MapEnv(BTreeMap::from([(
            AZURE_SEARCH_KEY_ENV.to_string(),
            "secret-key".to_string(),
        )]));
        let r = external(&flags(None, None), &file, &keyed)
            .expect("ok")
            .expect("azure");
        assert_eq!(r.name(), "azure-search");
        let e = external(&flags(Some(RetrieverKind::OpenSearch), None), &file, &none)
            .err()
            .expect("no endpoint");
        assert!(e.to_string().contains("--retriever-url"), "{e}");
        let r = external(
            &flags(
                Some(RetrieverKind::OpenSearch),
                Some("http://127.0.0.1:9200"),
            ),
            &file,
            &none,
        )
        .expect("ok")
        .expect("opensearch");
        assert_eq!(r.name(), "opensearch");
        let no_index = RetrieverSection::default();
        let e = external(
            &flags(
                Some(RetrieverKind::OpenSearch),
                Some("http://127.0.0.1:9200"),
            ),
            &no_index,
            &none,
        )
        .err()
        .expect("no index");
        assert!(e.to_string().contains("index"), "{e}");
    }
}

//! Which retriever `ask`, `eval` and `serve` search: groundcite's own index
//! of a docs folder (the default) or a search service the team already
//! runs (`--retriever postgres`), and that service's settings:
//! flag > environment > `[retriever]` in groundcite.toml.
//!
//! ```toml
//! [retriever]
//! kind = "postgres"
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
//! ```

use groundcite_ask::{PostgresColumns, PostgresRetriever, Retriever};
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
    }
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
}

//! PostgreSQL full-text search over a table the team already has.
//!
//! The question becomes an OR of its words (`plainto_tsquery`, its `&`
//! turned into `|`: a question's words are not all in the passage that
//! answers it), ranked by `ts_rank_cd`. Table and columns come from
//! settings, checked as plain identifiers and quoted, never spliced in as
//! given; the question is a bound parameter.

use std::time::Duration;

use groundcite_core::Chunk;
use sqlx::Row;
use sqlx::postgres::{PgPool, PgPoolOptions};

use super::{Retriever, RetrieverError, quoted_identifier};

const NAME: &str = "postgres";

/// Which columns hold what; a column not named is null in every chunk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PostgresColumns {
    /// The table (`name` or `schema.name`).
    pub table: String,
    /// The chunk ID (any type; read as text).
    pub id: String,
    /// The chunk's text.
    pub content: String,
    /// The source title.
    pub title: Option<String>,
    /// The source URL.
    pub url: Option<String>,
    /// The page number (an integer column).
    pub page: Option<String>,
    /// The text search configuration (`english`, `simple`, …).
    pub language: String,
}

impl Default for PostgresColumns {
    fn default() -> Self {
        PostgresColumns {
            table: "chunks".into(),
            id: "chunk_id".into(),
            content: "content".into(),
            title: Some("source_title".into()),
            url: Some("source_url".into()),
            page: Some("page_number".into()),
            language: "english".into(),
        }
    }
}

/// Full-text search in PostgreSQL.
pub struct PostgresRetriever {
    runtime: tokio::runtime::Runtime,
    pool: PgPool,
    sql: String,
    language: String,
    floor: f64,
}

impl std::fmt::Debug for PostgresRetriever {
    // The URL may hold a password: never printed.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PostgresRetriever")
            .field("sql", &self.sql)
            .field("floor", &self.floor)
            .finish_non_exhaustive()
    }
}

impl PostgresRetriever {
    /// Connects (lazily: the first search opens the connection) to `url`
    /// and checks the column settings. `floor`: the least `ts_rank_cd` kept.
    pub fn new(url: &str, columns: &PostgresColumns, floor: f64) -> Result<Self, RetrieverError> {
        let q = |what: &str, name: &str| {
            quoted_identifier(name).ok_or_else(|| {
                RetrieverError::new(
                    NAME,
                    format!("the {what} {name:?} is not a plain SQL identifier (letters, digits, _; schema.name for a table)"),
                )
            })
        };
        let table = q("table", &columns.table)?;
        let id = q("id column", &columns.id)?;
        let content = q("content column", &columns.content)?;
        let opt = |what: &str, c: &Option<String>, cast: &str| -> Result<String, RetrieverError> {
            Ok(match c {
                Some(name) => format!("{}::{cast}", q(what, name)?),
                None => format!("NULL::{cast}"),
            })
        };
        let title = opt("title column", &columns.title, "text")?;
        let url_col = opt("url column", &columns.url, "text")?;
        let page = opt("page column", &columns.page, "int8")?;
        if quoted_identifier(&columns.language).is_none() {
            return Err(RetrieverError::new(
                NAME,
                format!(
                    "the text search configuration {:?} is not a plain name",
                    columns.language
                ),
            ));
        }
        let sql = format!(
            "SELECT {id}::text AS id, {content}::text AS content, {title} AS title, {url_col} AS url, {page} AS page, \
             ts_rank_cd(to_tsvector($1::regconfig, {content}), q)::float8 AS score \
             FROM {table}, to_tsquery($1::regconfig, replace(plainto_tsquery($1::regconfig, $2)::text, '&', '|')) AS q \
             WHERE q::text <> '' AND to_tsvector($1::regconfig, {content}) @@ q \
             ORDER BY score DESC, id LIMIT $3"
        );
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| RetrieverError::new(NAME, format!("starting its runtime: {e}")))?;
        let pool = {
            let _guard = runtime.enter();
            PgPoolOptions::new()
                .max_connections(2)
                .acquire_timeout(Duration::from_secs(5))
                .connect_lazy(url)
                .map_err(|e| {
                    RetrieverError::new(
                        NAME,
                        format!("bad database URL: {}", redact(&e.to_string(), url)),
                    )
                })?
        };
        Ok(PostgresRetriever {
            runtime,
            pool,
            sql,
            language: columns.language.clone(),
            floor,
        })
    }

    async fn query(&self, question: &str, limit: usize) -> Result<Vec<Chunk>, sqlx::Error> {
        let rows = sqlx::query(&self.sql)
            .bind(&self.language)
            .bind(question)
            .bind(i64::try_from(limit).unwrap_or(i64::MAX))
            .fetch_all(&self.pool)
            .await?;
        let mut out = Vec::with_capacity(rows.len());
        for row in rows {
            let id: Option<String> = row.try_get("id")?;
            let content: Option<String> = row.try_get("content")?;
            let (Some(chunk_id), Some(content)) = (id, content) else {
                continue; // a row without an ID or text cannot be cited
            };
            let page: Option<i64> = row.try_get("page")?;
            out.push(Chunk {
                chunk_id,
                content,
                source_title: row.try_get("title")?,
                source_url: row.try_get("url")?,
                page_number: page.and_then(|p| u32::try_from(p).ok()).filter(|p| *p > 0),
                score: row.try_get("score")?,
            });
        }
        Ok(out)
    }
}

impl Retriever for PostgresRetriever {
    fn name(&self) -> &'static str {
        NAME
    }

    fn search(&self, question: &str, limit: usize) -> Result<Vec<Chunk>, RetrieverError> {
        let run = || self.runtime.block_on(self.query(question, limit));
        // Called from inside another runtime (the service's blocking pool
        // is fine; an async task is not): run on a thread of its own.
        let result = if tokio::runtime::Handle::try_current().is_ok() {
            std::thread::scope(|s| s.spawn(run).join())
                .map_err(|_| RetrieverError::new(NAME, "the search thread panicked"))?
        } else {
            run()
        };
        result.map_err(|e| RetrieverError::new(NAME, e.to_string()))
    }

    fn score_floor(&self) -> f64 {
        self.floor
    }
}

/// `message` without the URL's password.
fn redact(message: &str, url: &str) -> String {
    match url::Url::parse(url)
        .ok()
        .and_then(|u| u.password().map(str::to_string))
    {
        Some(p) if !p.is_empty() => message.replace(&p, "***"),
        _ => message.to_string(),
    }
}

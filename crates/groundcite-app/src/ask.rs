//! The settings of the commands that answer from a docs folder (`ask`,
//! `eval`, `serve`, `index`): retrieval and the gate, the embedding model,
//! where the index and the trace store live.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use groundcite_ask::{AskSettings, GateMode, MAX_CANDIDATES, MAX_TOP_K};
use groundcite_index::Embed;

use crate::config::FileConfig;
use crate::env::Env;
use crate::error::SettingsError;
use crate::flags::RetrievalFlags;
use crate::values::{ProviderName, RetrievalMode};

/// The variable naming the trace store when `--database` does not.
pub const DATABASE_ENV: &str = "GROUNDCITE_DATABASE";

/// The pipeline's settings for `provider`: flag > `[ask]` in the file > the
/// provider's defaults. The embedded model gates on evidence and quotes among
/// [`DEFAULT_CANDIDATES`] ranked sentences of [`DEFAULT_TOP_K`] chunks;
/// hosted models decide answerability themselves and read the
/// [`READER_TOP_K`] best chunks whole (no candidates: their chunks would
/// displace the chunk ranking's, which finds the answer's chunk more often).
///
/// [`DEFAULT_CANDIDATES`]: groundcite_ask::DEFAULT_CANDIDATES
/// [`DEFAULT_TOP_K`]: groundcite_ask::DEFAULT_TOP_K
/// [`READER_TOP_K`]: groundcite_ask::READER_TOP_K
pub fn ask_settings(
    flags: &RetrievalFlags,
    file: &FileConfig,
    provider: ProviderName,
) -> Result<AskSettings, SettingsError> {
    let gate = match flags.gate.or(file.ask.gate) {
        Some(g) => g,
        None if provider == ProviderName::Local => GateMode::Evidence,
        None => GateMode::Retrieval,
    };
    let mut s = AskSettings::with_gate(gate);
    let reader = provider != ProviderName::Local;
    if reader {
        s.top_k = groundcite_ask::READER_TOP_K;
        s.candidates = 0;
    }
    s.top_k = flags.top_k.or(file.ask.top_k).unwrap_or(s.top_k);
    if s.top_k == 0 || s.top_k > MAX_TOP_K {
        return Err(SettingsError::invalid(
            "--top-k",
            format!("must be between 1 and {MAX_TOP_K}"),
        ));
    }
    s.candidates = flags
        .candidates
        .or(file.ask.candidates)
        .unwrap_or(s.candidates);
    s.spelling = !flags.no_spelling && file.ask.spelling.unwrap_or(true);
    if s.candidates > MAX_CANDIDATES {
        return Err(SettingsError::invalid(
            "--candidates",
            format!("must be between 0 and {MAX_CANDIDATES}"),
        ));
    }
    let bounded = |flag: &str, v: Option<f32>, lo: f32| match v {
        Some(v) if !(lo..=1.0).contains(&v) => Err(SettingsError::invalid(
            flag,
            format!("must be between {lo} and 1"),
        )),
        v => Ok(v),
    };
    let g = &mut s.gate;
    if let Some(v) = bounded(
        "--min-similarity",
        flags.min_similarity.or(file.ask.min_similarity),
        -1.0,
    )? {
        g.min_similarity = v;
    }
    if let Some(v) = bounded(
        "--min-typed-similarity",
        flags.min_typed_similarity.or(file.ask.min_typed_similarity),
        -1.0,
    )? {
        g.min_typed_similarity = v;
    }
    if let Some(v) = bounded(
        "--min-p-answerable",
        flags.min_p_answerable.or(file.ask.min_p_answerable),
        0.0,
    )? {
        g.min_p_answerable = v;
    }
    s.validate()
        .map_err(|m| SettingsError::invalid("settings", m))?;
    Ok(s)
}

/// The retrieval mode: flag > file > hybrid.
pub fn retrieval_mode(flags: &RetrievalFlags, file: &FileConfig) -> RetrievalMode {
    flags.retrieval.or(file.ask.retrieval).unwrap_or_default()
}

/// The embedding model for hybrid retrieval, or `None` for BM25.
pub struct Embedder {
    /// The loaded model.
    pub model: Option<Arc<dyn Embed>>,
    /// Why there is none although hybrid retrieval was asked for (no model
    /// installed): one line for the user.
    pub note: Option<&'static str>,
}

/// Loads the embedding model `--embed-model` > `GROUNDCITE_EMBED_MODEL` >
/// `[ask] embed_model` > the model cache > the installed package names, or
/// none for BM25 (asked for, or no model installed: then with a note). A
/// model that is named but cannot be loaded is an error.
pub fn embedder(
    flags: &RetrievalFlags,
    file: &FileConfig,
    env: &dyn Env,
) -> Result<Embedder, SettingsError> {
    if retrieval_mode(flags, file) == RetrievalMode::Bm25 {
        return Ok(Embedder {
            model: None,
            note: None,
        });
    }
    let explicit = flags
        .embed_model
        .clone()
        .or_else(|| env.var("GROUNDCITE_EMBED_MODEL"))
        .or_else(|| file.ask.embed_model.clone())
        .map(PathBuf::from);
    match groundcite_ask::load_embedder(explicit.as_deref()) {
        Ok(Some(model)) => Ok(Embedder {
            model: Some(model),
            note: None,
        }),
        Ok(None) => Ok(Embedder {
            model: None,
            note: Some(
                "no sentence-embedding model is installed (scripts/setup installs it); retrieving with BM25 alone",
            ),
        }),
        Err(e) => Err(SettingsError::invalid("--embed-model", e)),
    }
}

/// The docs folder: flag > `[ask] docs`; it must be a directory.
pub fn docs_dir(flag: Option<&str>, file: &FileConfig) -> Result<Option<PathBuf>, SettingsError> {
    let Some(docs) = flag.map(str::to_string).or_else(|| file.ask.docs.clone()) else {
        return Ok(None);
    };
    let docs = PathBuf::from(docs);
    if !docs.is_dir() {
        return Err(SettingsError::invalid(
            docs.display().to_string(),
            "is not a directory",
        ));
    }
    Ok(Some(docs))
}

/// Where the index of `docs` lives: flag > `[ask] index` > one directory
/// per absolute docs path under the cache directory.
pub fn index_dir(
    flag: Option<&str>,
    file: &FileConfig,
    docs: &Path,
    env: &dyn Env,
) -> Result<PathBuf, SettingsError> {
    match flag.map(str::to_string).or_else(|| file.ask.index.clone()) {
        Some(d) => Ok(PathBuf::from(d)),
        None => default_index_dir(docs, env),
    }
}

/// The index directory of `docs` when none is set: one per absolute docs
/// path under the cache directory.
pub fn default_index_dir(docs: &Path, env: &dyn Env) -> Result<PathBuf, SettingsError> {
    let abs = std::fs::canonicalize(docs).map_err(|e| {
        SettingsError::invalid(
            docs.display().to_string(),
            format!("cannot resolve it: {e}"),
        )
    })?;
    let name = abs
        .file_name()
        .map_or_else(|| "root".to_string(), |n| n.to_string_lossy().into_owned());
    let base = cache_dir(env).ok_or_else(|| {
        SettingsError::invalid(
            "settings",
            "No cache directory (HOME is not set): pass --index DIR.",
        )
    })?;
    Ok(base.join("index").join(format!(
        "{name}-{:016x}",
        groundcite_ask::fnv1a(abs.to_string_lossy().as_bytes())
    )))
}

/// The cache directory (`groundcite_core::paths::cache_dir`'s rule).
fn cache_dir(env: &dyn Env) -> Option<PathBuf> {
    groundcite_core::paths::cache_dir(|k| env.var(k))
}

/// The trace store's URL: `--database` > `GROUNDCITE_DATABASE` > the
/// command's own file key (`[serve] database` for `serve`) > `[ask]
/// database` > `traces.sqlite3` in the data directory.
pub fn database_url(
    flag: Option<&str>,
    command_key: Option<&str>,
    file: &FileConfig,
    env: &dyn Env,
) -> Result<String, SettingsError> {
    if let Some(u) = flag
        .map(str::to_string)
        .or_else(|| env.var(DATABASE_ENV))
        .or_else(|| command_key.map(str::to_string))
        .or_else(|| file.ask.database.clone())
    {
        return Ok(u);
    }
    let dir = env
        .var("XDG_DATA_HOME")
        .map(|d| Path::new(&d).join("groundcite"))
        .or_else(|| {
            env.var("HOME").map(|h| {
                Path::new(&h)
                    .join(".local")
                    .join("share")
                    .join("groundcite")
            })
        })
        .ok_or_else(|| {
            SettingsError::invalid(
                "settings",
                "No data directory (HOME is not set): pass --database FILE.",
            )
        })?;
    Ok(dir.join("traces.sqlite3").display().to_string())
}

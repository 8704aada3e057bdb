//! `groundcite ask`: the whole pipeline on one machine. Index a docs folder
//! (only changed files), retrieve, generate (the embedded model unless
//! another provider is configured), verify, store the trace, print.
//!
//! The pipeline itself (retrieval, the relevance gate, generation,
//! verification, the trace record) is `groundcite_ask`, shared with `eval`
//! and the service.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use anyhow::Context;
use groundcite_ask::{AskError, Failure};
use groundcite_core::{ClaimPolicy, MatchProfile, Provenance, render_text, validate_trace_id};
use groundcite_index::{Index, IndexConfig};
use groundcite_providers::pipeline::AnswerError;
use groundcite_store::{Store, TraceRecord};

use crate::answer_cmd::{self, ProviderArgs};
use crate::config::{self, FileConfig};
use crate::input::BadInput;
use crate::retrieval_args::{self, RetrievalArgs};
use crate::verify_cmd::Format;

#[derive(Debug, clap::Args)]
pub struct AskArgs {
    /// The question.
    question: String,
    /// Folder of Markdown and text documents to answer from (else `[ask]
    /// docs` in groundcite.toml). Indexed on first use; later runs re-index
    /// only changed files.
    #[arg(long, value_name = "DIR")]
    docs: Option<String>,
    /// Where the index lives (default: a directory per docs folder under the
    /// cache directory).
    #[arg(long, value_name = "DIR")]
    index: Option<String>,
    #[command(flatten)]
    r: RetrievalArgs,
    /// Base URL of the documents: a chunk's `source_url` is this URL + the
    /// document's path (else `[ask] base_url`; none: `source_url` is null).
    #[arg(long, value_name = "URL")]
    source_base_url: Option<String>,
    /// Output format: `text` (answer with footnotes) or `json` (contract v1).
    #[arg(long, value_enum, default_value = "text")]
    format: Format,
    /// Trace ID to use instead of a fresh UUIDv7.
    #[arg(long, value_name = "ID")]
    trace_id: Option<String>,
    /// Matching profile: `default` or `lenient`.
    #[arg(long = "match", value_name = "PROFILE", default_value = "default")]
    profile: MatchProfile,
    /// Claims whose quotes do not carry their quantities: `strict` drops them,
    /// `lenient` keeps them with a warning.
    #[arg(long = "claims", value_name = "POLICY", default_value = "strict")]
    policy: ClaimPolicy,
    /// Trace store: a SQLite file or a postgres:// URL (else `[ask]
    /// database`, else GROUNDCITE_DATABASE, else traces.sqlite3 in the data
    /// directory).
    #[arg(long, value_name = "URL")]
    database: Option<String>,
    /// Do not store a trace.
    #[arg(long)]
    no_trace: bool,
    #[command(flatten)]
    p: ProviderArgs,
}

pub fn run(args: AskArgs) -> anyhow::Result<ExitCode> {
    if let Some(id) = &args.trace_id {
        validate_trace_id(id).map_err(|m| BadInput::new("--trace-id", m))?;
    }
    if args.question.trim().is_empty() {
        return Err(BadInput::new("QUESTION", "is empty").into());
    }
    let (file, _) = config::load(args.p.config.as_deref())?;
    let docs = args
        .docs
        .clone()
        .or_else(|| file.ask.docs.clone())
        .ok_or_else(|| {
            BadInput::new(
                "settings",
                "The documents folder is not set: pass --docs DIR, or set [ask] docs in groundcite.toml.",
            )
        })?;
    let docs = PathBuf::from(docs);
    if !docs.is_dir() {
        return Err(BadInput::new(&docs.display().to_string(), "is not a directory").into());
    }
    let provider = answer_cmd::choose_provider(&args.p, &file)?;
    let mut settings = retrieval_args::ask_settings(&args.r, &file, provider)?;
    settings.profile = args.profile;
    settings.policy = args.policy;
    let trace_id = args.trace_id.clone().unwrap_or_else(crate::new_trace_id);

    // Retrieve (after indexing changed files).
    let started = Instant::now();
    let index_dir = match args.index.clone().or_else(|| file.ask.index.clone()) {
        Some(d) => PathBuf::from(d),
        None => default_index_dir(&docs)?,
    };
    let embed = retrieval_args::embedder(&args.r, &file)?;
    let mut index = Index::open_or_create(&index_dir)?;
    let cfg = IndexConfig {
        base_url: args
            .source_base_url
            .clone()
            .or_else(|| file.ask.base_url.clone()),
        ..IndexConfig::default()
    };
    crate::index_cmd::update_with_progress(&mut index, &docs, &cfg, embed.as_deref(), true)?;
    let retrieval = groundcite_ask::retrieve(&index, embed.as_deref(), &args.question, &settings)?;
    if let Some(note) = retrieval.gate_note() {
        eprintln!("note: {note}: answering unanswerable without the model");
    }

    let provenance = Provenance {
        trace_id: trace_id.clone(),
        created_at: crate::now_rfc3339(),
        question: Some(args.question.clone()),
        model: None,
    };
    // The provider's settings are only needed when the model is asked.
    let backend = if retrieval.gate_passed() {
        Some(answer_cmd::backend(provider, &args.p, &file)?)
    } else {
        None
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    let quotes = args
        .p
        .quotes
        .clone()
        .or_else(|| file.local.quotes.clone())
        .unwrap_or_else(|| "verbatim".into());
    let extra = groundcite_store::TraceOptions {
        quotes: Some(quotes),
        docs: Some(docs.display().to_string()),
        ..Default::default()
    };
    let kept = retrieval.clone();
    let asked = runtime.block_on(groundcite_ask::answer(
        retrieval,
        backend.as_ref(),
        &args.question,
        &settings,
        provenance,
        &mut |_, _| true,
    ));
    let asked = match asked {
        Ok(a) => a,
        // A failed generation still leaves a trace that shows why.
        Err(AskError::Answer(AnswerError::Provider { error, raw_output })) => {
            let provider_name = backend
                .as_ref()
                .map_or("none", |b| b.generator().provider());
            let mut record = kept.failed_trace_record(
                &trace_id,
                "ask",
                &args.question,
                &settings,
                Failure {
                    provider: provider_name,
                    error: &error,
                    raw_output,
                },
                extra.clone(),
            );
            record.timings.total_ms = Some(groundcite_store::Timings::millis(started.elapsed()));
            if !args.no_trace {
                let url = database_url(args.database.as_deref(), &file)?;
                store_trace(&url, &record)?;
                eprintln!("trace: {trace_id}");
            }
            let mut msg = error.to_string();
            if let Some(body) = error.body() {
                let cut: String = body.chars().take(500).collect();
                msg.push_str(&format!("; response body: {cut}"));
            }
            return Err(anyhow::anyhow!(msg));
        }
        Err(other) => return Err(anyhow::anyhow!(other)),
    };
    if let Some(a) = &asked.answered {
        if let Some(e) = &a.error {
            eprintln!("note: {e}");
        }
        if let Some(note) = &a.note {
            eprintln!("note: {note}; refusing with R3");
        }
    }
    let mut record = asked.trace_record(&trace_id, "ask", &args.question, &settings, extra);
    record.timings.total_ms = Some(groundcite_store::Timings::millis(started.elapsed()));
    let contract = asked.contract;

    // The trace is committed before anything is printed.
    if !args.no_trace {
        let url = database_url(args.database.as_deref(), &file)?;
        store_trace(&url, &record)?;
    }

    let mut out = std::io::stdout().lock();
    match args.format {
        Format::Json => {
            serde_json::to_writer_pretty(&mut out, &contract)?;
            out.write_all(b"\n")?;
        }
        Format::Text => {
            out.write_all(render_text(&contract).as_bytes())?;
        }
    }
    out.flush()?;
    if !args.no_trace {
        eprintln!("trace: {trace_id}");
    }
    Ok(ExitCode::SUCCESS)
}

/// The index directory of `docs` when none is set: one per absolute docs
/// path under the cache directory.
pub fn default_index_dir(docs: &Path) -> anyhow::Result<PathBuf> {
    let abs =
        std::fs::canonicalize(docs).with_context(|| format!("resolving {}", docs.display()))?;
    let name = abs
        .file_name()
        .map_or_else(|| "root".to_string(), |n| n.to_string_lossy().into_owned());
    let base = cache_dir().ok_or_else(|| {
        BadInput::new(
            "settings",
            "No cache directory (HOME is not set): pass --index DIR.",
        )
    })?;
    Ok(base.join("index").join(format!(
        "{name}-{:016x}",
        groundcite_ask::fnv1a(abs.to_string_lossy().as_bytes())
    )))
}

fn cache_dir() -> Option<PathBuf> {
    let var = |k: &str| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    var("GROUNDCITE_CACHE_DIR")
        .or_else(|| var("XDG_CACHE_HOME").map(|d| d.join("groundcite")))
        .or_else(|| var("HOME").map(|h| h.join(".cache").join("groundcite")))
}

/// The trace store's URL: flag > `[ask] database` > GROUNDCITE_DATABASE >
/// `traces.sqlite3` in the data directory.
pub fn database_url(flag: Option<&str>, file: &FileConfig) -> anyhow::Result<String> {
    if let Some(u) = flag
        .map(str::to_string)
        .or_else(|| file.ask.database.clone())
        .or_else(|| {
            std::env::var("GROUNDCITE_DATABASE")
                .ok()
                .filter(|v| !v.is_empty())
        })
    {
        return Ok(u);
    }
    let var = |k: &str| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    let dir = var("XDG_DATA_HOME")
        .map(|d| d.join("groundcite"))
        .or_else(|| var("HOME").map(|h| h.join(".local").join("share").join("groundcite")))
        .ok_or_else(|| {
            BadInput::new(
                "settings",
                "No data directory (HOME is not set): pass --database FILE.",
            )
        })?;
    Ok(dir.join("traces.sqlite3").display().to_string())
}

fn store_trace(url: &str, record: &TraceRecord) -> anyhow::Result<()> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    runtime.block_on(async {
        let store = Store::open(url).await?;
        store.insert(record).await?;
        store.close().await;
        Ok::<_, groundcite_store::StoreError>(())
    })?;
    Ok(())
}

//! `groundcite ask`: the whole pipeline on one machine. Index a docs folder
//! (only changed files), retrieve, generate (the embedded model unless
//! another provider is configured), verify, store the trace, print.
//!
//! Retrieval has a relevance gate: when the retrieved chunks share too few
//! of the question's words, weighted by rarity (see `Index::coverage`), the
//! answer is
//! unanswerable (R1) without asking the model. A 135M-parameter model
//! given off-topic chunks still writes claims with real quotes; the gate is
//! what keeps "What is the CEO's birthday?" from being answered with a
//! refund policy.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use anyhow::Context;
use groundcite_core::{
    ChunkSet, ClaimPolicy, Contract, GroundedAnswer, MatchProfile, Provenance, render_text,
    validate_trace_id, verify_with,
};
use groundcite_index::{Index, IndexConfig};
use groundcite_providers::{GenerationRequest, ProviderError};
use groundcite_store::{Store, TraceRecord};
use serde_json::json;

use crate::answer_cmd::{self, AnswerOpts, ProviderArgs, ProviderName};
use crate::config::{self, FileConfig};
use crate::input::BadInput;
use crate::verify_cmd::Format;

/// Default number of chunks retrieved.
const DEFAULT_TOP_K: usize = 3;

/// Default share of the question's content words that the retrieved chunks
/// must contain.
const DEFAULT_MIN_COVERAGE: f64 = 0.5;

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
    /// Chunks to retrieve (default 3).
    #[arg(long, value_name = "N")]
    top_k: Option<usize>,
    /// Share (0 to 1) of the question's words, weighted by rarity, that the
    /// retrieved chunks must contain for the question to go to the model; a
    /// word no document uses also stops it (default 0.5; 0 turns the gate
    /// off).
    #[arg(long, value_name = "SHARE")]
    min_coverage: Option<f64>,
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
    let min_coverage = args.min_coverage.unwrap_or(DEFAULT_MIN_COVERAGE);
    if !(0.0..=1.0).contains(&min_coverage) {
        return Err(BadInput::new("--min-coverage", "must be between 0 and 1").into());
    }
    let top_k = args.top_k.or(file.ask.top_k).unwrap_or(DEFAULT_TOP_K);
    if top_k == 0 || top_k > 50 {
        return Err(BadInput::new("--top-k", "must be between 1 and 50").into());
    }
    let started = Instant::now();
    let trace_id = args.trace_id.clone().unwrap_or_else(crate::new_trace_id);

    // Retrieve.
    let index_dir = match args.index.clone().or_else(|| file.ask.index.clone()) {
        Some(d) => PathBuf::from(d),
        None => default_index_dir(&docs)?,
    };
    let t = Instant::now();
    let mut index = Index::open_or_create(&index_dir)?;
    let cfg = IndexConfig {
        base_url: args
            .source_base_url
            .clone()
            .or_else(|| file.ask.base_url.clone()),
        ..IndexConfig::default()
    };
    crate::index_cmd::update_with_progress(&mut index, &docs, &cfg, true)?;
    let retrieved = index.search(&args.question, top_k)?;
    let retrieve_ms = ms(t.elapsed());
    let chunks = ChunkSet::new(retrieved.clone())
        .map_err(|e| anyhow::anyhow!("the index returned unusable chunks: {e}"))?;
    let cov = index.coverage(&args.question, chunks.chunks())?;

    let opts = AnswerOpts {
        stream: false,
        format: args.format,
        profile: args.profile,
        policy: args.policy,
    };
    let provenance = Provenance {
        trace_id: trace_id.clone(),
        created_at: crate::now_rfc3339(),
        question: Some(args.question.clone()),
        model: None,
    };
    let mut record = TraceRecord::new(&trace_id, "ask");
    record.question = Some(args.question.clone());
    record.chunks = serde_json::to_value(chunks.chunks())?;
    // A word the corpus never uses means the corpus cannot answer a question
    // about it: "Tokyo", "CEO", "cryptocurrency" in a corpus without it.
    let gate_passed = !chunks.is_empty()
        && (min_coverage == 0.0 || (cov.share >= min_coverage && cov.unknown.is_empty()));
    let t = Instant::now();
    let (contract, provider_name) = if gate_passed {
        let provider = answer_cmd::choose_provider(&args.p, &file)?;
        let (contract, request, model) = generate(
            &args,
            &file,
            provider,
            &chunks,
            opts,
            provenance,
            &mut record,
        )?;
        record.prompt = Some(json!({"system": request.system, "user": request.user}));
        record.schema_hash = request
            .schema
            .as_ref()
            .map(|s| schema_hash(&s.schema.to_string()));
        record.model = model;
        (contract, provider_name(provider))
    } else {
        if cov.unknown.is_empty() {
            eprintln!(
                "note: the retrieved chunks hold {:.0}% of the question's weighted words (the gate is {:.0}%): answering unanswerable without the model",
                cov.share * 100.0,
                min_coverage * 100.0
            );
        } else {
            eprintln!(
                "note: the documents never use {}: answering unanswerable without the model",
                cov.unknown
                    .iter()
                    .map(|w| format!("{w:?}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
        let unanswerable = GroundedAnswer {
            answerable: false,
            claims: Vec::new(),
        };
        (
            verify_with(
                &unanswerable,
                &chunks,
                args.profile,
                args.policy,
                provenance,
            ),
            "none".to_string(),
        )
    };
    let generate_ms = ms(t.elapsed());
    record.provider = Some(provider_name);
    record.options = json!({
        "match": args.profile,
        "claims": args.policy,
        "top_k": top_k,
        "min_coverage": min_coverage,
        "coverage": cov.share,
        "unknown_words": cov.unknown,
        "gate_passed": gate_passed,
        "quotes": args.p.quotes.clone().or_else(|| file.local.quotes.clone()).unwrap_or_else(|| "verbatim".into()),
        "docs": docs.display().to_string(),
    });
    record.warnings = contract
        .warnings
        .iter()
        .filter_map(|w| serde_json::to_value(w.code).ok())
        .filter_map(|v| v.as_str().map(str::to_string))
        .collect();
    record.contract = Some(serde_json::to_value(&contract)?);
    let mut timings = json!({
        "retrieve_ms": retrieve_ms,
        "generate_ms": generate_ms,
        "total_ms": ms(started.elapsed()),
    });
    if let (Some(t), Some(tokens)) = (timings.as_object_mut(), record.timings.as_object()) {
        t.extend(tokens.clone());
    }
    record.timings = timings;

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

fn provider_name(p: ProviderName) -> String {
    clap::ValueEnum::to_possible_value(&p)
        .map_or_else(|| "unknown".into(), |v| v.get_name().to_string())
}

/// Runs the provider and verifies; fills the trace's raw output, error and
/// usage.
fn generate(
    args: &AskArgs,
    file: &FileConfig,
    provider: ProviderName,
    chunks: &ChunkSet,
    opts: AnswerOpts,
    provenance: Provenance,
    record: &mut TraceRecord,
) -> anyhow::Result<(Contract, GenerationRequest, Option<String>)> {
    let backend = answer_cmd::backend(provider, &args.p, file)?;
    let request = backend.request(chunks, &args.question);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    let answered = runtime.block_on(answer_cmd::run_pipeline(
        opts,
        chunks,
        backend.generator(),
        &request,
        provenance,
    ))?;
    record.raw_output = answered.raw_output;
    record.error = answered.error.as_ref().map(ProviderError::summary);
    record.provider_request_id = answered.request_id.clone();
    if let Some(u) = answered.usage {
        record.timings = json!({"input_tokens": u.input_tokens, "output_tokens": u.output_tokens});
    }
    Ok((answered.contract, request, answered.model))
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
        fnv1a(abs.to_string_lossy().as_bytes())
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

/// 64-bit FNV-1a: a stable directory name, not a security boundary.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// A short stable hash of the schema text, for the trace.
fn schema_hash(schema: &str) -> String {
    format!("fnv1a64:{:016x}", fnv1a(schema.as_bytes()))
}

fn ms(d: std::time::Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

//! `groundcite ask`: the whole pipeline on one machine. Index a docs folder
//! (only changed files), retrieve, generate (the embedded model unless
//! another provider is configured), verify, store the trace, print.
//!
//! The pipeline itself (retrieval, the relevance gate, generation,
//! verification, the trace record) is `groundcite_ask`, shared with `eval`
//! and the service.

use std::io::Write;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::Context;
use groundcite_app::{
    ProcessEnv, ProviderFlags, ProviderName, RetrievalFlags, Settings, ask, config,
};
use groundcite_ask::{AskError, Failure, GateMode};
use groundcite_core::{
    ChunkSet, ClaimPolicy, MatchProfile, Provenance, RefusalCode, render_text, source_label,
    validate_trace_id,
};
use groundcite_index::{Index, IndexConfig};
use groundcite_providers::pipeline::AnswerError;
use groundcite_store::{Store, TraceRecord};

use crate::input::BadInput;
use crate::verify_cmd::Format;

#[derive(Debug, clap::Args)]
pub struct AskArgs {
    /// The question.
    question: String,
    /// Folder of documents (Markdown, reStructuredText, AsciiDoc, text,
    /// PDF, HTML, DOCX, ODT, EPUB) to answer from (else `[ask] docs` in
    /// groundcite.toml). Indexed on first use; later runs re-index only
    /// changed files.
    #[arg(long, value_name = "DIR")]
    docs: Option<String>,
    /// Where the index lives (default: a directory per docs folder under the
    /// cache directory).
    #[arg(long, value_name = "DIR")]
    index: Option<String>,
    #[command(flatten)]
    r: RetrievalFlags,
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
    /// database`, else traces.sqlite3 in the data directory).
    #[arg(long, value_name = "URL", env = "GROUNDCITE_DATABASE")]
    database: Option<String>,
    /// Do not store a trace.
    #[arg(long)]
    no_trace: bool,
    #[command(flatten)]
    p: ProviderFlags,
}

pub fn run(args: AskArgs) -> anyhow::Result<ExitCode> {
    if let Some(id) = &args.trace_id {
        validate_trace_id(id).map_err(|m| BadInput::new("--trace-id", m.to_string()))?;
    }
    if args.question.trim().is_empty() {
        return Err(BadInput::new("QUESTION", "is empty").into());
    }
    let (file, _) = config::load(args.p.config.as_deref(), &ProcessEnv)?;
    // A search service the team runs, or the index of a docs folder.
    let external = groundcite_app::retriever::external(&args.r, &file.retriever, &ProcessEnv)?;
    let docs = match &external {
        Some(_) => None,
        None => Some(ask::docs_dir(args.docs.as_deref(), &file)?.ok_or_else(|| {
            BadInput::new(
                "settings",
                "The documents folder is not set: pass --docs DIR, or set [ask] docs in groundcite.toml (or search a service you run: --retriever postgres).",
            )
        })?),
    };
    let resolver = Settings::new(&args.p, &file, &ProcessEnv);
    let provider = resolver.provider()?;
    let mut settings = ask::ask_settings(&args.r, &file, provider)?;
    settings.profile = args.profile;
    settings.policy = args.policy;
    let trace_id = args
        .trace_id
        .clone()
        .unwrap_or_else(groundcite_store::new_trace_id);

    // Retrieve (after indexing changed files).
    let started = Instant::now();
    let embed = crate::progress::embedder(&args.r, &file)?;
    // The docs folder's index, kept to place quotes of PDF chunks on their
    // pages (an external retriever has no page layout).
    let mut local_index = None;
    let retrieval = match (&external, &docs) {
        (Some(r), _) => groundcite_ask::retrieve_external(
            r.as_ref(),
            embed.as_deref(),
            &args.question,
            &settings,
        )?,
        (None, None) => {
            return Err(BadInput::new("settings", "no docs folder and no retriever").into());
        }
        (None, Some(docs)) => {
            let index_dir = ask::index_dir(args.index.as_deref(), &file, docs, &ProcessEnv)?;
            let mut index = Index::open_or_create(&index_dir)?;
            let cfg = IndexConfig {
                base_url: args
                    .source_base_url
                    .clone()
                    .or_else(|| file.ask.base_url.clone()),
                ..IndexConfig::default()
            };
            crate::progress::update_index(&mut index, docs, &cfg, embed.as_deref(), true)?;
            let retrieval =
                groundcite_ask::retrieve(&index, embed.as_deref(), &args.question, &settings)?;
            local_index = Some(index);
            retrieval
        }
    };
    if !retrieval.signals.corrected.is_empty() {
        let read: Vec<String> = retrieval
            .signals
            .corrected
            .iter()
            .map(|c| format!("{:?} as {:?}", c.from, c.to))
            .collect();
        eprintln!("note: searched reading {}", read.join(", "));
    }
    if let Some(note) = retrieval.gate_note() {
        eprintln!("note: {note}: answering unanswerable without the model");
        // Weak evidence is a judgement the user can hand to the model; an
        // empty retrieval is not.
        if retrieval.refused_on_evidence() {
            eprintln!(
                "note: `--gate retrieval` leaves that decision to the model (docs/local.md, \"The gate\")"
            );
            // Retrieval usually finds the right section even when the gate
            // refuses; where to look is not a claim, so it may be shown.
            for line in nearest_sections(&retrieval.chunks) {
                eprintln!("{line}");
            }
        }
    }

    let provenance = Provenance {
        trace_id: trace_id.clone(),
        created_at: groundcite_store::now_rfc3339(),
        question: Some(args.question.clone()),
        model: None,
    };
    // The provider's settings are only needed when the model is asked.
    let backend = if retrieval.gate_passed() {
        let backend = resolver.backend(provider)?;
        if provider == ProviderName::Azure {
            let route = resolver.azure_route();
            if route.worth_noting() {
                eprintln!("note: {}", route.note());
            }
        }
        Some(backend)
    } else {
        None
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    let quotes = resolver.quotes().as_str().to_string();
    let extra = groundcite_store::TraceOptions {
        quotes: Some(quotes),
        docs: docs.as_ref().map(|d| d.display().to_string()),
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
    let mut asked = match asked {
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
                let url = ask::database_url(args.database.as_deref(), None, &file, &ProcessEnv)?;
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
        // A refusal after the gate let the question through says whose
        // judgement it was, and where to look, as the gate's refusal does.
        if a.error.is_none()
            && a.note.is_none()
            && let Some(why) = asked
                .contract
                .refusal
                .as_ref()
                .and_then(|r| model_refusal_note(r.code, a.p_answerable, &settings))
        {
            eprintln!("note: {why}");
            for line in nearest_sections(&asked.retrieval.chunks) {
                eprintln!("{line}");
            }
        }
    }
    // Quotes of PDF chunks get their rectangles on the page (contract v1's
    // optional `location`), before the trace records the contract.
    if let Some(index) = &local_index {
        index.attach_locations(&mut asked.contract);
    }
    let mut record = asked.trace_record(&trace_id, "ask", &args.question, &settings, extra);
    record.timings.total_ms = Some(groundcite_store::Timings::millis(started.elapsed()));
    let contract = asked.contract;

    // The trace is committed before anything is printed.
    if !args.no_trace {
        let url = ask::database_url(args.database.as_deref(), None, &file, &ProcessEnv)?;
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

/// Why the answer is a refusal although the gate let the question through:
/// the model's own judgement (R1), with its probability where the embedded
/// model measured it, or no claim that verified (R2).
fn model_refusal_note(
    code: RefusalCode,
    p_answerable: Option<f64>,
    settings: &groundcite_ask::AskSettings,
) -> Option<String> {
    match code {
        RefusalCode::R1 => {
            let mut note =
                "the model judged that the retrieved sources do not answer the question".to_owned();
            if let Some(p) = p_answerable {
                note.push_str(&format!(
                    " (its probability of \"answerable\": true was {p:.2}"
                ));
                if settings.gate.mode == GateMode::Evidence {
                    note.push_str(&format!(
                        ", under --min-p-answerable {:.2}",
                        settings.gate.min_p_answerable
                    ));
                }
                note.push(')');
            }
            Some(note)
        }
        RefusalCode::R2 => Some(
            "the model answered, but none of its quotes is in the sources it was given \
             (`groundcite trace show` prints what it wrote)"
                .to_owned(),
        ),
        _ => None,
    }
}

/// The sections retrieval found for a question the gate refused, best
/// first, one line each (one per document and page), as the text rendering
/// names sources; they are where to look, not verified answers.
fn nearest_sections(chunks: &ChunkSet) -> Vec<String> {
    let mut seen = Vec::new();
    let mut lines = Vec::new();
    for c in chunks.chunks() {
        let key = (
            c.source_title.as_deref(),
            c.source_url.as_deref(),
            c.page_number,
        );
        if seen.contains(&key) {
            continue;
        }
        seen.push(key);
        let line = source_label(
            c.source_title.as_deref(),
            &c.chunk_id,
            c.page_number,
            c.source_url.as_deref(),
        );
        lines.push(format!("  {line}"));
    }
    if !lines.is_empty() {
        lines.insert(
            0,
            "note: the nearest sections retrieved (where to look, not a verified answer):"
                .to_string(),
        );
    }
    lines
}

//! `groundcite trace`: read stored traces, and re-run verification on a
//! stored raw output with the same rule (the incident runbook's first step).

use std::io::Write;
use std::process::ExitCode;

use anyhow::Context;
use groundcite_core::{Contract, render_text};
use groundcite_store::{Store, TraceRecord};

use crate::input::BadInput;
use crate::verify_cmd::Format;
use groundcite_app::{ProcessEnv, ask, config};

#[derive(Debug, clap::Args)]
pub struct TraceArgs {
    #[command(subcommand)]
    command: TraceCommand,
    /// Trace store: a SQLite file or a postgres:// URL (default: as `ask`).
    #[arg(long, value_name = "URL", global = true, env = "GROUNDCITE_DATABASE")]
    database: Option<String>,
    /// Configuration file (else ./groundcite.toml, else groundcite.toml in
    /// the user configuration directory).
    #[arg(long, value_name = "FILE", global = true, env = "GROUNDCITE_CONFIG")]
    config: Option<String>,
}

#[derive(Debug, clap::Subcommand)]
enum TraceCommand {
    /// Print a stored trace: question, chunks, prompt, raw output, contract,
    /// timings.
    Show {
        /// The trace ID.
        id: String,
        /// `json` (the whole record) or `text` (a summary and the answer).
        #[arg(long, value_enum, default_value = "json")]
        format: Format,
    },
    /// Re-verify the stored raw output against the stored chunks with the
    /// stored matching profile and claim policy; print the new contract.
    /// Exit 0 when it equals the stored contract, 1 when it differs.
    Verify {
        /// The trace ID.
        id: String,
    },
    /// List recent traces.
    List {
        /// How many.
        #[arg(long, default_value = "20")]
        limit: u32,
    },
}

pub fn run(args: TraceArgs) -> anyhow::Result<ExitCode> {
    let (file, _) = config::load(args.config.as_deref(), &ProcessEnv)?;
    let url = ask::database_url(args.database.as_deref(), None, &file, &ProcessEnv)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    match args.command {
        TraceCommand::Show { id, format } => {
            let record = runtime.block_on(fetch(&url, &id))?;
            let mut out = std::io::stdout().lock();
            match format {
                Format::Json => {
                    serde_json::to_writer_pretty(&mut out, &record)?;
                    out.write_all(b"\n")?;
                }
                Format::Text => write_summary(&mut out, &record)?,
            }
            Ok(ExitCode::SUCCESS)
        }
        TraceCommand::Verify { id } => {
            let record = runtime.block_on(fetch(&url, &id))?;
            let (contract, same) = reverify(&record)?;
            let mut out = std::io::stdout().lock();
            serde_json::to_writer_pretty(&mut out, &contract)?;
            out.write_all(b"\n")?;
            out.flush()?;
            if same {
                eprintln!("same result as stored: the stored contract is reproduced exactly");
                Ok(ExitCode::SUCCESS)
            } else {
                eprintln!("DIFFERENT from the stored contract");
                Ok(ExitCode::from(1))
            }
        }
        TraceCommand::List { limit } => {
            let rows = runtime.block_on(async {
                let store = Store::open(&url).await?;
                let rows = store.list_recent(None, limit).await;
                store.close().await;
                rows
            })?;
            let mut out = std::io::stdout().lock();
            for r in rows {
                writeln!(
                    out,
                    "{}  {}  {:<6} {}",
                    r.trace_id,
                    r.created_at,
                    r.kind,
                    r.question.as_deref().unwrap_or("")
                )?;
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

async fn fetch(url: &str, id: &str) -> anyhow::Result<TraceRecord> {
    groundcite_store::validate_trace_id(id).map_err(|e| BadInput::new("trace", e.to_string()))?;
    let store = Store::open(url).await?;
    let record = store.get(id, None).await;
    store.close().await;
    record?.ok_or_else(|| {
        BadInput::new(
            "trace",
            format!(
                "no trace {id:?} in {}",
                groundcite_store::redact_store_url(url)
            ),
        )
        .into()
    })
}

/// Re-runs verification on the stored raw output; `true` when the new
/// contract equals the stored one.
pub fn reverify(record: &TraceRecord) -> anyhow::Result<(Contract, bool)> {
    let r = groundcite_store::reverify(record).map_err(|e| anyhow::anyhow!(e))?;
    if let Some(note) = &r.note {
        eprintln!("note: {note}; refusing with R3");
    }
    Ok((r.contract, r.same))
}

fn write_summary(out: &mut impl Write, r: &TraceRecord) -> anyhow::Result<()> {
    writeln!(out, "trace     {}", r.trace_id)?;
    writeln!(out, "time      {}", r.created_at)?;
    writeln!(out, "kind      {}", r.kind)?;
    if let Some(q) = &r.question {
        writeln!(out, "question  {q}")?;
    }
    // Question words retrieval read as the corpus's (`ask`'s spelling rule).
    let read: Vec<String> = r
        .options
        .signals
        .as_ref()
        .and_then(|s| s.get("corrected"))
        .and_then(|c| c.as_array())
        .into_iter()
        .flatten()
        .filter_map(|c| {
            Some(format!(
                "{:?} as {:?}",
                c.get("from")?.as_str()?,
                c.get("to")?.as_str()?
            ))
        })
        .collect();
    if !read.is_empty() {
        writeln!(out, "searched  reading {}", read.join(", "))?;
    }
    writeln!(
        out,
        "provider  {} {}",
        r.provider.as_deref().unwrap_or("-"),
        r.model.as_deref().unwrap_or("")
    )?;
    let n = r.chunks.len();
    writeln!(out, "chunks    {n}")?;
    writeln!(out, "timings   {}", r.timings)?;
    if let Some(reason) = &r.stop_reason {
        let count = |n: Option<u64>| n.map_or_else(|| "?".to_string(), |n| n.to_string());
        writeln!(
            out,
            "stopped   {reason} ({} output tokens, {} prompt tokens)",
            count(r.output_tokens),
            count(r.input_tokens)
        )?;
    }
    if let Some(form) = &r.answer_form {
        writeln!(out, "form      {form}")?;
    }
    if !r.warnings.is_empty() {
        writeln!(out, "warnings  {}", r.warnings.join(", "))?;
    }
    if let Some(e) = &r.error {
        writeln!(out, "error     {e}")?;
    }
    if let Some(raw) = &r.raw_output {
        writeln!(out, "raw       {raw}")?;
    }
    if let Some(c) = &r.contract {
        match c.parse::<Contract>() {
            Ok(c) => {
                writeln!(out)?;
                out.write_all(render_text(&c).as_bytes())?;
            }
            Err(_) => writeln!(out, "contract  {c}")?,
        }
    }
    Ok(())
}

//! `groundcite verify`: one answer, or a JSON Lines batch in constant memory.

use std::io::{Read, Write};
use std::process::ExitCode;

use groundcite_batch::{BatchError, Options, Stamp, verify_stream};
use groundcite_core::{
    ClaimPolicy, MatchProfile, Provenance, render_text, validate_trace_id, verify_with,
};

use crate::input::{self, BadInput, display_name};

/// Output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Renderer contract v1 as JSON.
    Json,
    /// The answer with footnotes, for a terminal.
    Text,
}

#[derive(Debug, clap::Args)]
pub struct VerifyArgs {
    /// Retrieved chunks: a JSON array or JSON Lines of {chunk_id, content,
    /// source_title?, source_url?, page_number?, score?}; `-` reads stdin.
    #[arg(long, value_name = "FILE", required_unless_present = "batch")]
    chunks: Option<String>,
    /// The model's answer: {answerable, claims: [{text, citations: [{chunk_id, quote}]}]}; `-` reads stdin.
    #[arg(long, value_name = "FILE", required_unless_present = "batch")]
    answer: Option<String>,
    /// The user's question, copied into the contract.
    #[arg(long, value_name = "TEXT", conflicts_with = "batch")]
    question: Option<String>,
    /// The model that produced the answer, copied into the contract.
    #[arg(long, value_name = "NAME")]
    model: Option<String>,
    /// Trace ID to use instead of a fresh UUIDv7.
    #[arg(long, value_name = "ID", conflicts_with = "batch")]
    trace_id: Option<String>,
    /// Matching profile: `default`, or the opt-in `lenient` (NFKC, dashes, ellipses, invisibles).
    #[arg(long = "match", value_name = "PROFILE", default_value = "default")]
    profile: MatchProfile,
    /// What to do with a claim asserting a quantity (amount, duration, date,
    /// percentage, count) that its verified quotes do not carry: `strict`
    /// drops it, `lenient` keeps it with an `unsupported_quantity` warning.
    #[arg(long = "claims", value_name = "POLICY", default_value = "strict")]
    claim_policy: ClaimPolicy,
    /// Output format.
    #[arg(long, value_enum, default_value = "json")]
    format: Format,
    /// Verify many requests: JSON Lines of {question?, chunks, answer, trace_id?, model?};
    /// writes one contract per line, in input order (`-` reads stdin).
    #[arg(long, value_name = "FILE.jsonl", conflicts_with_all = ["chunks", "answer"])]
    batch: Option<String>,
    /// Worker threads for --batch (default: the number of cores).
    #[arg(long, value_name = "N", requires = "batch")]
    jobs: Option<usize>,
}

pub fn run(args: VerifyArgs) -> anyhow::Result<ExitCode> {
    if let Some(batch) = &args.batch {
        if args.format != Format::Json {
            return Err(BadInput::new(
                "--format",
                "--batch writes JSON Lines; --format text is not available",
            )
            .into());
        }
        return run_batch(batch, &args);
    }
    let (Some(chunks_path), Some(answer_path)) = (&args.chunks, &args.answer) else {
        return Err(BadInput::new("arguments", "--chunks and --answer are both required").into());
    };
    if chunks_path == "-" && answer_path == "-" {
        return Err(BadInput::new(
            "<stdin>",
            "only one of --chunks and --answer can read stdin",
        )
        .into());
    }
    if let Some(id) = &args.trace_id {
        validate_trace_id(id).map_err(|m| BadInput::new("--trace-id", m.to_string()))?;
    }
    let chunks = input::read_chunks(chunks_path)?;
    let answer = input::read_answer(answer_path)?;
    let contract = verify_with(
        &answer,
        &chunks,
        args.profile,
        args.claim_policy,
        Provenance {
            trace_id: args.trace_id.clone().unwrap_or_else(crate::new_trace_id),
            created_at: crate::now_rfc3339(),
            question: args.question.clone(),
            model: args.model.clone(),
        },
    );
    let mut out = std::io::stdout().lock();
    match args.format {
        Format::Json => {
            serde_json::to_writer_pretty(&mut out, &contract)?;
            out.write_all(b"\n")?;
        }
        Format::Text => out.write_all(render_text(&contract).as_bytes())?,
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

/// `--batch`: the file (or stdin) through [`groundcite_batch::verify_stream`]
/// to stdout; bad lines are listed on stderr and make the exit code 2.
fn run_batch(path: &str, args: &VerifyArgs) -> anyhow::Result<ExitCode> {
    let name = display_name(path);
    let reader: Box<dyn Read + Send> = if path == "-" {
        Box::new(std::io::stdin())
    } else {
        Box::new(
            std::fs::File::open(path)
                .map_err(|e| BadInput::new(&name, format!("cannot read: {e}")))?,
        )
    };
    let options = Options {
        profile: args.profile,
        policy: args.claim_policy,
        model: args.model.clone(),
        jobs: args.jobs,
        stamp: Stamp {
            trace_id: crate::new_trace_id,
            created_at: crate::now_rfc3339,
        },
    };
    let summary =
        verify_stream(reader, std::io::stdout().lock(), &options).map_err(|e| match e {
            BatchError::Read { line, source } => BadInput {
                line: Some(line),
                ..BadInput::new(&name, format!("cannot read: {source}"))
            }
            .into(),
            BatchError::Write(e) => anyhow::Error::new(e).context("writing the batch output"),
            BatchError::ReaderPanicked => anyhow::anyhow!("the batch reader thread panicked"),
        })?;
    for e in &summary.bad {
        eprintln!("error: {}", e.located(&name));
    }
    Ok(if summary.bad.is_empty() {
        ExitCode::SUCCESS
    } else {
        eprintln!(
            "error: {} line(s) of {name} were bad input; each has an error object in its place in the output",
            summary.bad.len()
        );
        ExitCode::from(2)
    })
}

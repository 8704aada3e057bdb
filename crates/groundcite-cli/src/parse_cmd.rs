//! `groundcite parse`: a free-form answer with citation markers in its text,
//! parsed by the tolerant prose parser and verified like `groundcite verify`.
//!
//! An answer from which no citation can be extracted is not an empty result
//! but an error: exit code 3, with the answer's length, the number of chunks
//! and its first 120 characters on stderr.

use std::fmt;
use std::io::Write;
use std::process::ExitCode;

use groundcite_core::prose::{self, CitationFormatError};
use groundcite_core::{
    ClaimPolicy, Contract, MatchProfile, Provenance, render_text, validate_trace_id,
};

use crate::input::{self, BadInput, display_name};
use crate::verify_cmd::Format;

/// No citation could be extracted from a non-empty answer (exit code 3).
#[derive(Debug)]
pub struct CitationFormat {
    /// The answer file, as shown to the user.
    pub file: String,
    /// The core's error.
    pub error: CitationFormatError,
}

impl fmt::Display for CitationFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.file, self.error)
    }
}

impl std::error::Error for CitationFormat {}

/// Options shared by `parse` and `convert`: provenance, profile, format.
#[derive(Debug, clap::Args)]
pub struct OutputArgs {
    /// The user's question, copied into the contract.
    #[arg(long, value_name = "TEXT")]
    question: Option<String>,
    /// The model that produced the answer, copied into the contract.
    #[arg(long, value_name = "NAME")]
    model: Option<String>,
    /// Trace ID to use instead of a fresh UUIDv7.
    #[arg(long, value_name = "ID")]
    trace_id: Option<String>,
    /// Matching profile: `default`, or the opt-in `lenient` (NFKC, dashes, ellipses, invisibles).
    #[arg(long = "match", value_name = "PROFILE", default_value = "default")]
    pub profile: MatchProfile,
    /// What to do with a claim asserting a quantity (amount, duration, date,
    /// percentage, count) that its verified quotes do not carry: `strict`
    /// drops it, `lenient` keeps it with an `unsupported_quantity` warning.
    #[arg(long = "claims", value_name = "POLICY", default_value = "strict")]
    pub policy: ClaimPolicy,
    /// Output format.
    #[arg(long, value_enum, default_value = "json")]
    format: Format,
}

impl OutputArgs {
    /// The provenance to stamp (the trace ID is validated first).
    pub fn provenance(&self) -> Result<Provenance, BadInput> {
        if let Some(id) = &self.trace_id {
            validate_trace_id(id).map_err(|m| BadInput::new("--trace-id", m.to_string()))?;
        }
        Ok(Provenance {
            trace_id: self.trace_id.clone().unwrap_or_else(crate::new_trace_id),
            created_at: crate::now_rfc3339(),
            question: self.question.clone(),
            model: self.model.clone(),
        })
    }

    /// Prints the contract on stdout in the chosen format.
    pub fn print(&self, contract: &Contract) -> anyhow::Result<()> {
        let mut out = std::io::stdout().lock();
        match self.format {
            Format::Json => {
                serde_json::to_writer_pretty(&mut out, contract)?;
                out.write_all(b"\n")?;
            }
            Format::Text => out.write_all(render_text(contract).as_bytes())?,
        }
        out.flush()?;
        Ok(())
    }
}

#[derive(Debug, clap::Args)]
pub struct ParseArgs {
    /// Chunks in the order they were shown to the model (`[1]` is the first):
    /// a JSON array or JSON Lines of {chunk_id, content, source_title?, …}; `-` reads stdin.
    #[arg(long, value_name = "FILE")]
    chunks: String,
    /// The answer as free text (Markdown allowed); `-` reads stdin.
    #[arg(long, value_name = "FILE")]
    text: String,
    #[command(flatten)]
    out: OutputArgs,
}

pub fn run(args: ParseArgs) -> anyhow::Result<ExitCode> {
    if args.chunks == "-" && args.text == "-" {
        return Err(
            BadInput::new("<stdin>", "only one of --chunks and --text can read stdin").into(),
        );
    }
    let provenance = args.out.provenance()?;
    let chunks = input::read_chunks(&args.chunks)?;
    let text = input::read_text(&args.text)?;
    let name = display_name(&args.text);
    if text.trim().is_empty() {
        return Err(BadInput::new(&name, "answer text is empty").into());
    }
    let contract = prose::verify_prose_with(
        &text,
        &chunks,
        args.out.profile,
        args.out.policy,
        provenance,
    )
    .map_err(|error| CitationFormat { file: name, error })?;
    args.out.print(&contract)?;
    Ok(ExitCode::SUCCESS)
}

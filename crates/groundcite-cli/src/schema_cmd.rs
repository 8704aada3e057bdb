//! `groundcite schema`: print the strict structured-output fragment for a
//! provider, or lint any JSON schema against a provider's strict subset.

use std::io::Write;
use std::process::ExitCode;

use groundcite_core::schema::{self, Target, Violation};
use serde::Serialize;

use crate::input::{self, display_name};

/// A provider, as the CLI spells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum TargetArg {
    /// OpenAI (current limits: 5,000 properties, 10 levels, 1,000 enum values).
    #[value(name = "openai")]
    OpenAi,
    /// Azure OpenAI (100 properties, 5 levels, 500 enum values, no type-specific keywords).
    Azure,
    /// Anthropic `output_config.format` (no bounds, no recursion, 24 optional / 16 union properties).
    Anthropic,
    /// Amazon Bedrock Converse `outputConfig.textFormat` (the schema as a JSON string; Anthropic's subset and limits).
    Bedrock,
}

impl From<TargetArg> for Target {
    fn from(t: TargetArg) -> Target {
        match t {
            TargetArg::OpenAi => Target::OpenAi,
            TargetArg::Azure => Target::Azure,
            TargetArg::Anthropic => Target::Anthropic,
            TargetArg::Bedrock => Target::Bedrock,
        }
    }
}

/// Lint output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum LintFormat {
    /// One line per violation.
    Text,
    /// `{target, file, violations: [{pointer, rule, message, provider_error}]}`.
    Json,
}

#[derive(Debug, clap::Args)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub struct SchemaArgs {
    #[command(subcommand)]
    command: Option<SchemaCommand>,
    /// Provider whose request fragment to print.
    #[arg(long, value_enum, required = true)]
    target: Option<TargetArg>,
    /// Retrieved chunks (JSON array or JSON Lines; `-` reads stdin): chunk_id
    /// becomes an enum of their IDs where the provider's limits allow it.
    #[arg(long, value_name = "FILE")]
    chunk_ids_from: Option<String>,
}

#[derive(Debug, clap::Subcommand)]
enum SchemaCommand {
    /// Check a JSON schema, or a whole request fragment, against a provider's
    /// strict subset; exit 1 if anything would be rejected.
    Lint {
        /// The schema or fragment (`-` reads stdin).
        file: String,
        /// Provider whose strict subset to check against.
        #[arg(long, value_enum)]
        target: TargetArg,
        /// Output format.
        #[arg(long, value_enum, default_value = "text")]
        format: LintFormat,
    },
}

pub fn run(args: SchemaArgs) -> anyhow::Result<ExitCode> {
    match args.command {
        Some(SchemaCommand::Lint {
            file,
            target,
            format,
        }) => lint(&file, target.into(), format),
        None => {
            // clap enforces --target when no subcommand is given.
            let target: Target = args.target.map_or(Target::OpenAi, Target::from);
            print_fragment(target, args.chunk_ids_from.as_deref())
        }
    }
}

fn print_fragment(target: Target, chunks_path: Option<&str>) -> anyhow::Result<ExitCode> {
    let ids: Option<Vec<String>> = match chunks_path {
        Some(path) => Some(
            input::read_chunks(path)?
                .chunks()
                .iter()
                .map(|c| c.chunk_id.clone())
                .collect(),
        ),
        None => None,
    };
    let fragment = schema::request_fragment(target, ids.as_deref());
    {
        let mut err = std::io::stderr().lock();
        for note in &fragment.notes {
            writeln!(err, "note: {note}")?;
        }
    }
    let mut out = std::io::stdout().lock();
    serde_json::to_writer_pretty(&mut out, &fragment.value)?;
    writeln!(out)?;
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

#[derive(Serialize)]
struct LintReport<'a> {
    target: Target,
    file: &'a str,
    violations: &'a [Violation],
}

fn lint(path: &str, target: Target, format: LintFormat) -> anyhow::Result<ExitCode> {
    let name = display_name(path);
    let text = input::read_text(path)?;
    let doc: serde_json::Value = input::parse_json(&name, &text)?;
    let violations = schema::lint(&doc, target);
    let mut out = std::io::stdout().lock();
    match format {
        LintFormat::Json => {
            let report = LintReport {
                target,
                file: &name,
                violations: &violations,
            };
            serde_json::to_writer_pretty(&mut out, &report)?;
            writeln!(out)?;
        }
        LintFormat::Text => {
            for v in &violations {
                writeln!(out, "{v}")?;
            }
            match violations.len() {
                0 => writeln!(out, "{name}: no violations for target {target}")?,
                n => writeln!(
                    out,
                    "{name}: {n} violation{} for target {target}",
                    if n == 1 { "" } else { "s" }
                )?,
            }
        }
    }
    out.flush()?;
    Ok(if violations.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

//! The `groundcite` command: verify claim-level citations and print renderer
//! contract v1. See `groundcite --help`.
//!
//! Exit codes: 0 success (claims may have been dropped: that is a result,
//! not an error); 1 a check found problems (`schema lint`) or an I/O failure;
//! 2 bad input (the message names file, line and JSON path); 3 no citation
//! could be extracted from a non-empty free-form answer (`parse`).

mod answer_cmd;
mod ask_cmd;
mod convert_cmd;
mod eval_cmd;
mod index_cmd;
mod input;
mod parse_cmd;
mod progress;
mod schema_cmd;
mod serve_cmd;
mod trace_cmd;
mod verify_cmd;

use std::io::Write;
use std::process::ExitCode;

use clap::{CommandFactory, Parser, Subcommand};

// Many small, short-lived allocations (JSON trees, strings) per request or
// batch line: mimalloc handles them faster than glibc's malloc.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// groundcite: every claim a user sees is linked to a chunk that was really
/// retrieved and to a quote that really is in that chunk.
#[derive(Debug, Parser)]
#[command(name = "groundcite", version = version(), about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Verify a model's structured answer against the retrieved chunks and
    /// print renderer contract v1.
    Verify(verify_cmd::VerifyArgs),
    /// Print the strict structured-output schema for a provider, or lint a schema against a provider's strict subset.
    Schema(schema_cmd::SchemaArgs),
    /// Parse a free-form answer whose citations are written in its text
    /// (`[1]`, `[^1]`, `[doc1]`, `(Source: title)`, a trailing "Sources" list),
    /// verify them and print renderer contract v1. Exit code 3 when no
    /// citation can be extracted.
    Parse(parse_cmd::ParseArgs),
    /// Convert a provider's native citations (Anthropic, Bedrock
    /// RetrieveAndGenerate, Bedrock Converse) into verified renderer
    /// contract v1.
    Convert(convert_cmd::ConvertArgs),
    /// Ask a provider (Azure OpenAI, OpenAI, Anthropic, an OpenAI-compatible
    /// server) to answer from the chunks, verify its citations and print
    /// renderer contract v1; a refusal or unusable output prints refusal R4
    /// or R3. Settings come from flags, environment variables and
    /// groundcite.toml (see docs/providers.md).
    Answer(answer_cmd::AnswerArgs),
    /// Answer a question from a docs folder, offline by default: index the
    /// folder (changed files only), retrieve, generate with the embedded
    /// model under decoding held to the sources, verify, store the trace and
    /// print the answer with footnotes.
    Ask(ask_cmd::AskArgs),
    /// Build or refresh the embedded BM25 index of a docs folder.
    Index(index_cmd::IndexArgs),
    /// Run an evaluation suite through the whole pipeline (retrieve,
    /// generate, verify) and score it: answerable rate, citation validity
    /// and recall, multi-chunk synthesis, unanswerable precision,
    /// hallucination rejection, latency and the four monitored rates. Writes
    /// results.json and a self-contained report.html; exits 4 when a
    /// threshold fails.
    Eval(eval_cmd::EvalArgs),
    /// Show stored traces, or re-verify a stored raw output with the same
    /// rule.
    Trace(trace_cmd::TraceArgs),
    /// Run the HTTP service: verify, parse, convert and answer over HTTP,
    /// streamed or not, every request traced, metrics at /metrics, an
    /// OpenAI-compatible /v1/chat/completions backed by the embedded model.
    Serve(serve_cmd::ServeArgs),
    /// Create API keys for `serve`.
    Key(serve_cmd::KeyArgs),
    /// Print a shell completion script (e.g. `groundcite completions bash >
    /// /etc/bash_completion.d/groundcite`).
    Completions {
        /// The shell.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the man page (roff) on stdout (e.g. `groundcite man >
    /// groundcite.1`).
    Man,
}

/// `--version`: the crate version and the features this binary was built
/// with (the embedded model, Amazon Bedrock).
fn version() -> &'static str {
    let features = groundcite_app::features();
    let text = if features.is_empty() {
        format!("{} (features: none)", env!("CARGO_PKG_VERSION"))
    } else {
        format!(
            "{} (features: {})",
            env!("CARGO_PKG_VERSION"),
            features.join(", ")
        )
    };
    // Once per process, for clap's static string.
    Box::leak(text.into_boxed_str())
}

/// Diagnostics on stderr for every command: the filter is GROUNDCITE_LOG,
/// else RUST_LOG, else `default` (warnings for commands, info for the
/// service); colour only for a person at a terminal, and never with
/// NO_COLOR set (<https://no-color.org>).
pub(crate) fn init_logging(default: &str, json: bool) {
    use tracing_subscriber::EnvFilter;
    let filter = EnvFilter::try_from_env("GROUNDCITE_LOG")
        .or_else(|_| EnvFilter::try_from_default_env())
        .unwrap_or_else(|_| EnvFilter::new(default));
    let colour = std::io::IsTerminal::is_terminal(&std::io::stderr())
        && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(colour);
    let _ = if json {
        builder.json().try_init()
    } else {
        builder.try_init()
    };
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    // The service sets up its own (JSON by default) before it starts.
    if !matches!(cli.command, Command::Serve(_)) {
        init_logging("warn", false);
    }
    let result = match cli.command {
        Command::Verify(args) => verify_cmd::run(args),
        Command::Schema(args) => schema_cmd::run(args),
        Command::Parse(args) => parse_cmd::run(args),
        Command::Convert(args) => convert_cmd::run(args),
        Command::Answer(args) => answer_cmd::run(args),
        Command::Ask(args) => ask_cmd::run(args),
        Command::Index(args) => index_cmd::run(args),
        Command::Eval(args) => eval_cmd::run(args),
        Command::Trace(args) => trace_cmd::run(args),
        Command::Serve(args) => serve_cmd::run(args),
        Command::Key(args) => serve_cmd::key(args),
        Command::Completions { shell } => {
            clap_complete::generate(
                shell,
                &mut Cli::command(),
                "groundcite",
                &mut std::io::stdout(),
            );
            Ok(ExitCode::SUCCESS)
        }
        Command::Man => clap_mangen::Man::new(Cli::command())
            .render(&mut std::io::stdout())
            .map(|()| ExitCode::SUCCESS)
            .map_err(anyhow::Error::from),
    };
    match result {
        Ok(code) => code,
        Err(err) => report(err),
    }
}

/// Maps an error to its exit code after printing it once, on stderr.
fn report(err: anyhow::Error) -> ExitCode {
    // A reader that closed the pipe (`| head`) is not an error worth a message.
    let broken_pipe = err.chain().any(|e| {
        e.downcast_ref::<std::io::Error>()
            .map(std::io::Error::kind)
            .or_else(|| {
                e.downcast_ref::<serde_json::Error>()
                    .and_then(serde_json::Error::io_error_kind)
            })
            == Some(std::io::ErrorKind::BrokenPipe)
    });
    if broken_pipe {
        return ExitCode::SUCCESS;
    }
    let code = if err.downcast_ref::<input::BadInput>().is_some()
        || err
            .downcast_ref::<groundcite_app::SettingsError>()
            .is_some()
    {
        2
    } else if err.downcast_ref::<parse_cmd::CitationFormat>().is_some() {
        3
    } else {
        1
    };
    let _ = writeln!(std::io::stderr(), "error: {err:#}");
    ExitCode::from(code)
}

// One rule for fresh trace IDs and `created_at`, shared with the service.
pub(crate) use groundcite_store::{new_trace_id, now_rfc3339};

#[cfg(test)]
mod tests {
    #[test]
    fn the_command_line_is_consistent() {
        <super::Cli as clap::CommandFactory>::command().debug_assert();
    }

    #[test]
    fn version_names_the_built_features() {
        let v = super::version();
        assert!(v.starts_with(env!("CARGO_PKG_VERSION")), "{v}");
        assert_eq!(v.contains("local"), cfg!(feature = "local"), "{v}");
        assert_eq!(v.contains("bedrock"), cfg!(feature = "bedrock"), "{v}");
    }
}

//! `groundcite answer`: build the prompt, call a provider, verify, print
//! contract v1.
//!
//! A model refusal or content filter prints a contract with refusal R4; a
//! truncated or invalid output prints R3 (a schema-parsing error); both exit
//! 0, because the command ran. A provider that cannot be reached, rejects
//! the credentials or keeps failing after the retries is an error (exit 1,
//! with status and request ID). A missing setting is bad input (exit 2), in
//! one sentence naming the flag, the environment variable and the
//! `groundcite.toml` key that would set it.
//!
//! With `--stream`, each claim is verified and printed as soon as its JSON
//! object closes in the stream (JSON Lines: `{"claim": …}` or
//! `{"dropped": …}`), then the final contract on the last line. Native
//! citations (`anthropic-citations`, `bedrock-citations`) have no claim
//! objects to stream: the contract comes at the end.
//!
//! `--schema FILE` (or `[answer] schema`) sends a caller's own JSON schema
//! instead of the built-in `GroundedAnswer` one: it must pass the core's
//! strict lint in the provider's dialect and still describe the
//! `GroundedAnswer` shape, since the output is verified as one.

use std::io::Write;
use std::process::ExitCode;

use anyhow::Context;
use groundcite_app::{
    ProcessEnv, ProviderFlags, ProviderName, Settings, config, with_custom_schema,
};
use groundcite_core::{
    ChunkSet, ClaimOutcome, ClaimPolicy, MatchProfile, Provenance, render_text, truncate_chars,
    validate_trace_id,
};
use groundcite_providers::pipeline::{self, AnswerError, AnswerSettings, Answered};
use groundcite_providers::{GenerationRequest, Generator};

use crate::input::{self, BadInput};
use crate::verify_cmd::Format;

#[derive(Debug, clap::Args)]
pub struct AnswerArgs {
    /// Retrieved chunks: a JSON array or JSON Lines of {chunk_id, content,
    /// source_title?, source_url?, page_number?, score?}; `-` reads stdin.
    #[arg(long, value_name = "FILE")]
    chunks: String,
    /// The user's question.
    #[arg(long, value_name = "TEXT")]
    question: String,
    /// Verify and print each claim as soon as it closes in the stream.
    #[arg(long)]
    stream: bool,
    /// Send one minimal request with the exact schema first, so the
    /// provider compiles its grammar before the real request (its time is
    /// printed on stderr).
    #[arg(long)]
    warmup: bool,
    /// Output format.
    #[arg(long, value_enum, default_value = "json")]
    format: Format,
    /// Trace ID to use instead of a fresh UUIDv7.
    #[arg(long, value_name = "ID")]
    trace_id: Option<String>,
    /// A JSON schema to send instead of the built-in GroundedAnswer schema
    /// (else `[answer] schema`): linted for the provider's dialect, and it
    /// must still describe GroundedAnswer (extra fields allowed).
    #[arg(long, value_name = "FILE")]
    schema: Option<String>,
    /// Matching profile: `default` or `lenient`.
    #[arg(long = "match", value_name = "PROFILE", default_value = "default")]
    profile: MatchProfile,
    /// Claims whose quotes do not carry their quantities: `strict` drops them,
    /// `lenient` keeps them with a warning.
    #[arg(long = "claims", value_name = "POLICY", default_value = "strict")]
    policy: ClaimPolicy,
    #[command(flatten)]
    p: ProviderFlags,
}

pub fn run(args: AnswerArgs) -> anyhow::Result<ExitCode> {
    if let Some(id) = &args.trace_id {
        validate_trace_id(id).map_err(|m| BadInput::new("--trace-id", m.to_string()))?;
    }
    let (file, _) = config::load(args.p.config.as_deref(), &ProcessEnv)?;
    let settings = Settings::new(&args.p, &file, &ProcessEnv);
    let provider = settings.provider()?;
    let chunks = input::read_chunks(&args.chunks)?;
    if chunks.is_empty() {
        return Err(BadInput::new(
            &input::display_name(&args.chunks),
            "holds no chunk; there is nothing to answer from",
        )
        .into());
    }
    let mut backend = settings.backend(provider)?;
    if provider == ProviderName::Azure {
        let route = settings.azure_route();
        if route.worth_noting() {
            eprintln!("note: {}", route.note());
        }
    }
    if let Some(path) = args.schema.as_ref().or(file.answer.schema.as_ref()) {
        backend = with_custom_schema(backend, provider, path)?;
    }
    let request = backend.request(&chunks, &args.question);
    let provenance = Provenance {
        trace_id: args
            .trace_id
            .clone()
            .unwrap_or_else(groundcite_store::new_trace_id),
        created_at: groundcite_store::now_rfc3339(),
        question: Some(args.question.clone()),
        model: args.p.model.clone(),
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    let opts = AnswerOpts {
        stream: args.stream,
        format: args.format,
        profile: args.profile,
        policy: args.policy,
    };
    if args.warmup {
        let took = runtime
            .block_on(pipeline::warm_up(&backend))
            .map_err(|e| anyhow::anyhow!("warm-up: {e}"))?;
        eprintln!("note: warm-up took {} ms", took.as_millis());
    }
    let contract = runtime
        .block_on(run_pipeline(
            opts,
            &chunks,
            backend.generator(),
            &request,
            provenance,
        ))?
        .contract;
    let mut out = std::io::stdout().lock();
    match (args.format, args.stream) {
        (Format::Json, true) => {
            serde_json::to_writer(&mut out, &contract)?;
            out.write_all(b"\n")?;
        }
        (Format::Json, false) => {
            serde_json::to_writer_pretty(&mut out, &contract)?;
            out.write_all(b"\n")?;
        }
        (Format::Text, _) => out.write_all(render_text(&contract).as_bytes())?,
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

/// How `answer` and `ask` verify and print.
#[derive(Debug, Clone, Copy)]
pub struct AnswerOpts {
    pub stream: bool,
    pub format: Format,
    pub profile: MatchProfile,
    pub policy: ClaimPolicy,
}

/// Runs the shared pipeline ([`groundcite_providers::answer`]), printing
/// each streamed claim as it is verified. Output failures are refusal
/// contracts (a note on stderr says why); a provider that gives no answer
/// is an error naming its status and (truncated) response body.
pub async fn run_pipeline(
    opts: AnswerOpts,
    chunks: &ChunkSet,
    generator: &dyn Generator,
    request: &GenerationRequest,
    provenance: Provenance,
) -> anyhow::Result<Answered> {
    let settings = AnswerSettings {
        profile: opts.profile,
        policy: opts.policy,
        stream: opts.stream,
    };
    let mut write_error = None;
    let mut on_claim =
        |index: usize, outcome: &ClaimOutcome| match print_outcome(opts.format, index, outcome) {
            Ok(()) => true,
            Err(e) => {
                write_error = Some(e);
                false
            }
        };
    let result = pipeline::answer(
        generator,
        request,
        chunks,
        settings,
        provenance,
        &mut on_claim,
    )
    .await;
    if let Some(e) = write_error {
        return Err(e);
    }
    match result {
        Ok(answered) => {
            if let Some(e) = &answered.error {
                eprintln!("note: {e}");
            }
            if let Some(note) = &answered.note {
                eprintln!("note: {note}; refusing with R3");
            }
            Ok(answered)
        }
        Err(AnswerError::Provider { error, .. }) => {
            let mut msg = error.to_string();
            if let Some(body) = error.body() {
                msg.push_str(&format!("; response body: {}", truncate_chars(body, 500)));
            }
            anyhow::bail!(msg)
        }
        Err(AnswerError::Cancelled) => anyhow::bail!("the answer was cancelled"),
    }
}

fn print_outcome(format: Format, index: usize, outcome: &ClaimOutcome) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    match format {
        Format::Json => {
            let line = match outcome {
                ClaimOutcome::Kept(c) => serde_json::json!({"claim": c}),
                ClaimOutcome::Dropped(w) => {
                    serde_json::json!({"dropped": {"index": index, "warnings": w}})
                }
            };
            serde_json::to_writer(&mut out, &line)?;
            out.write_all(b"\n")?;
        }
        Format::Text => match outcome {
            ClaimOutcome::Kept(c) => {
                let refs: Vec<String> = c
                    .citations
                    .iter()
                    .map(|x| format!("[{}]", x.reference))
                    .collect();
                writeln!(out, "{} {}", c.text, refs.join(""))?;
            }
            ClaimOutcome::Dropped(_) => writeln!(out, "(claim {index} dropped: not verified)")?,
        },
    }
    out.flush()?;
    Ok(())
}

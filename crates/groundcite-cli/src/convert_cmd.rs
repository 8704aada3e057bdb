//! `groundcite convert`: provider-native citations (Anthropic, Amazon
//! Bedrock RetrieveAndGenerate and Converse, Google Gemini grounding, Cohere,
//! OpenAI Responses file search) verified into contract v1.

use std::process::ExitCode;

use groundcite_core::InputError;
use groundcite_core::native::{self, NativeFormat, NativeInput, anthropic};
use serde_json::Value;

use crate::input::{self, BadInput, display_name};
use crate::parse_cmd::OutputArgs;

/// The provider response shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Provider {
    /// Anthropic Messages API response with citations (JSON, an SSE stream,
    /// or stream events as a JSON array or JSON Lines).
    Anthropic,
    /// Amazon Bedrock Knowledge Bases RetrieveAndGenerate response.
    BedrockRag,
    /// Amazon Bedrock Converse response with `citationsContent` blocks.
    BedrockConverse,
    /// Google Gemini `generateContent` response with `groundingMetadata`
    /// (segment offsets in UTF-8 bytes).
    Gemini,
    /// Cohere Chat v2 response with `message.citations` (offsets in code
    /// points).
    Cohere,
    /// OpenAI Responses API response with `file_citation` annotations; the
    /// request must have asked `include: ["file_search_call.results"]`.
    OpenaiResponses,
}

impl Provider {
    fn format(self) -> NativeFormat {
        match self {
            Provider::Anthropic => NativeFormat::Anthropic,
            Provider::BedrockRag => NativeFormat::BedrockRag,
            Provider::BedrockConverse => NativeFormat::BedrockConverse,
            Provider::Gemini => NativeFormat::Gemini,
            Provider::Cohere => NativeFormat::Cohere,
            Provider::OpenaiResponses => NativeFormat::OpenaiResponses,
        }
    }
}

#[derive(Debug, clap::Args)]
pub struct ConvertArgs {
    /// Which provider shape `--response` holds.
    #[arg(long, value_enum, value_name = "PROVIDER")]
    from: Provider,
    /// The provider's response; `-` reads stdin.
    #[arg(long, value_name = "FILE")]
    response: String,
    /// The chunks, in the order their sources were sent: a JSON array or
    /// JSON Lines of {chunk_id, content, source_title?, …}; `-` reads stdin.
    #[arg(long, value_name = "FILE")]
    chunks: String,
    /// The request that was sent (anthropic, bedrock-converse): its documents
    /// and search results say which chunks each cited index holds (a
    /// content-block document or search result is one chunk per block).
    /// Without it, chunk i is document i and search result i.
    #[arg(long, value_name = "FILE")]
    request: Option<String>,
    #[command(flatten)]
    out: OutputArgs,
}

/// Core input errors about a file, as the CLI reports them.
fn bad(file: &str, e: InputError) -> BadInput {
    BadInput::from_core(file, e)
}

pub fn run(args: ConvertArgs) -> anyhow::Result<ExitCode> {
    let stdin_users = [
        Some(&args.response),
        Some(&args.chunks),
        args.request.as_ref(),
    ]
    .into_iter()
    .flatten()
    .filter(|p| p.as_str() == "-")
    .count();
    if stdin_users > 1 {
        return Err(BadInput::new(
            "<stdin>",
            "only one of --response, --chunks and --request can read stdin",
        )
        .into());
    }
    if args.request.is_some() && !args.from.format().takes_request() {
        return Err(BadInput::new(
            "--request",
            "applies to --from anthropic and --from bedrock-converse only",
        )
        .into());
    }
    let provenance = args.out.provenance()?;
    let chunks = input::read_chunks(&args.chunks)?;
    let name = display_name(&args.response);
    let body = input::read_text(&args.response)?;
    if body.trim().is_empty() {
        return Err(BadInput::new(&name, "is empty; expected a provider response").into());
    }
    let response: Value = match args.from {
        Provider::Anthropic => anthropic::read_response(&body).map_err(|e| bad(&name, e))?,
        _ => input::parse_json(&name, &body)?,
    };
    let request = match &args.request {
        Some(path) => {
            let name = display_name(path);
            let text = input::read_text(path)?;
            Some((name.clone(), input::parse_json::<Value>(&name, &text)?))
        }
        None => None,
    };
    let format = args.from.format();
    let contract = native::convert(
        format,
        &response,
        request.as_ref().map(|(_, r)| r),
        &chunks,
        args.out.profile,
        args.out.policy,
        provenance,
    )
    .map_err(|(which, e)| match (which, &request) {
        (NativeInput::Request, Some((request_name, _))) => bad(request_name, e),
        _ => bad(&name, e),
    })?;
    args.out.print(&contract)?;
    Ok(ExitCode::SUCCESS)
}

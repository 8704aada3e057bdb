//! Building the Converse request: `outputConfig.textFormat` with the schema
//! as JSON text (native structured output) or the forced tool and its input
//! schema (tool use), one document block per chunk (native citations), the
//! user message, the system prompt and the inference settings.

use aws_sdk_bedrockruntime as sdk;
use aws_smithy_types::Document;
use sdk::types::{
    CitationsConfig, ContentBlock, ConversationRole, DocumentBlock, DocumentFormat, DocumentSource,
    InferenceConfiguration, JsonSchemaDefinition, Message, OutputConfig, OutputFormat,
    OutputFormatStructure, OutputFormatType, SpecificToolChoice, SystemContentBlock, Tool,
    ToolChoice, ToolConfiguration, ToolInputSchema, ToolSpecification,
};
use serde_json::Value;

use crate::error::{ErrorKind, ProviderError};
use crate::types::GenerationRequest;

use super::config::{BedrockConfig, BedrockMode, BedrockStructured, provider_name};

/// The tool's description (what the model reads about it).
const TOOL_DESCRIPTION: &str = "Record the answer: whether the sources answer the question, and each claim with the chunk IDs and verbatim quotes that support it.";

/// The typed pieces of one Converse request.
pub(super) struct ConverseParts {
    pub(super) message: Message,
    pub(super) system: SystemContentBlock,
    pub(super) inference: InferenceConfiguration,
    pub(super) tool_config: Option<ToolConfiguration>,
    /// Native structured output: `outputConfig.textFormat`.
    pub(super) output_config: Option<OutputConfig>,
    pub(super) tool_name: Option<String>,
}

impl ConverseParts {
    /// The Converse request for `request`, as typed SDK values.
    pub(super) fn new(
        config: &BedrockConfig,
        request: &GenerationRequest,
    ) -> Result<ConverseParts, ProviderError> {
        let provider = provider_name(config.mode);
        let build = |e: aws_smithy_types::error::operation::BuildError| {
            ProviderError::new(
                ErrorKind::Config,
                provider,
                format!("cannot build the request: {e}"),
            )
        };
        let mut content = Vec::new();
        let mut tool_config = None;
        let mut output_config = None;
        let mut tool_name = None;
        match config.mode {
            BedrockMode::ToolUse if config.structured_output() == BedrockStructured::Native => {
                let Some(schema) = &request.schema else {
                    return Err(ProviderError::new(
                        ErrorKind::Config,
                        provider,
                        "structured output needs a schema",
                    ));
                };
                // The schema as JSON text, exactly as the core's Bedrock
                // fragment carries it.
                let definition = JsonSchemaDefinition::builder()
                    .schema(groundcite_core::schema::schema_text(&schema.schema))
                    .name(&schema.name)
                    .build()
                    .map_err(build)?;
                output_config = Some(
                    OutputConfig::builder()
                        .text_format(
                            OutputFormat::builder()
                                .r#type(OutputFormatType::JsonSchema)
                                .structure(OutputFormatStructure::JsonSchema(definition))
                                .build()
                                .map_err(build)?,
                        )
                        .build(),
                );
                content.push(ContentBlock::Text(request.user.clone()));
            }
            BedrockMode::ToolUse => {
                let Some(schema) = &request.schema else {
                    return Err(ProviderError::new(
                        ErrorKind::Config,
                        provider,
                        "tool use needs a schema",
                    ));
                };
                let name = tool_name_for(&schema.name);
                let mut spec = ToolSpecification::builder()
                    .name(&name)
                    .description(TOOL_DESCRIPTION)
                    .input_schema(ToolInputSchema::Json(to_document(&schema.schema)));
                if config.strict_tool {
                    spec = spec.strict(true);
                }
                tool_config = Some(
                    ToolConfiguration::builder()
                        .tools(Tool::ToolSpec(spec.build().map_err(build)?))
                        .tool_choice(ToolChoice::Tool(
                            SpecificToolChoice::builder()
                                .name(&name)
                                .build()
                                .map_err(build)?,
                        ))
                        .build()
                        .map_err(build)?,
                );
                tool_name = Some(name);
                content.push(ContentBlock::Text(request.user.clone()));
            }
            BedrockMode::Citations => {
                if request.schema.is_some() {
                    return Err(ProviderError::new(
                        ErrorKind::Config,
                        provider,
                        "native citations cannot be combined with a structured-output schema",
                    ));
                }
                if request.chunks.is_empty() {
                    return Err(ProviderError::new(
                        ErrorKind::Config,
                        provider,
                        "native citations need at least one chunk to send as a document",
                    ));
                }
                for (i, c) in request.chunks.iter().enumerate() {
                    // Neutral, valid names (letters, digits, single spaces):
                    // chunk IDs hold characters Bedrock rejects, and the
                    // documentIndex, not the name, maps a citation back.
                    content.push(ContentBlock::Document(
                        DocumentBlock::builder()
                            .format(DocumentFormat::Txt)
                            .name(format!("Document {}", i + 1))
                            .source(DocumentSource::Text(c.content.clone()))
                            .citations(
                                CitationsConfig::builder()
                                    .enabled(true)
                                    .build()
                                    .map_err(build)?,
                            )
                            .build()
                            .map_err(build)?,
                    ));
                }
                content.push(ContentBlock::Text(request.user.clone()));
            }
        }
        let message = Message::builder()
            .role(ConversationRole::User)
            .set_content(Some(content))
            .build()
            .map_err(build)?;
        let max_tokens = i32::try_from(request.max_tokens).unwrap_or(i32::MAX);
        let mut inference = InferenceConfiguration::builder().max_tokens(max_tokens);
        if let Some(t) = request.temperature {
            // Bedrock takes a float; a temperature is a small number.
            inference = inference.temperature(t as f32);
        }
        Ok(ConverseParts {
            message,
            system: SystemContentBlock::Text(request.system.clone()),
            inference: inference.build(),
            tool_config,
            output_config,
            tool_name,
        })
    }
}

/// A Bedrock tool name (`[a-zA-Z0-9_-]{1,64}`) from a schema name.
fn tool_name_for(name: &str) -> String {
    let mut s: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .take(64)
        .collect();
    if s.is_empty() {
        s = groundcite_core::schema::SCHEMA_NAME.to_string();
    }
    s
}

/// A JSON value as the SDK's `Document`.
fn to_document(v: &Value) -> Document {
    match v {
        Value::Null => Document::Null,
        Value::Bool(b) => Document::Bool(*b),
        Value::Number(n) => Document::Number(if let Some(u) = n.as_u64() {
            aws_smithy_types::Number::PosInt(u)
        } else if let Some(i) = n.as_i64() {
            aws_smithy_types::Number::NegInt(i)
        } else {
            aws_smithy_types::Number::Float(n.as_f64().unwrap_or(0.0))
        }),
        Value::String(s) => Document::String(s.clone()),
        Value::Array(a) => Document::Array(a.iter().map(to_document).collect()),
        Value::Object(o) => {
            Document::Object(o.iter().map(|(k, v)| (k.clone(), to_document(v))).collect())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_names_are_valid() {
        assert_eq!(tool_name_for("GroundedAnswer"), "GroundedAnswer");
        assert_eq!(tool_name_for("my answer.v2"), "my_answer_v2");
        assert_eq!(tool_name_for(""), "GroundedAnswer");
    }
}

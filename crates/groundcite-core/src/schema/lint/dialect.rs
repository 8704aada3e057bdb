//! What differs between the dialects (OpenAI and Azure vs Anthropic and
//! Bedrock): the keyword and format subsets, the regex features Anthropic
//! lacks, and each provider's wording of a rejection. Plain data and functions of a
//! [`Target`]; the walker decides where they apply.

use crate::schema::target::Target;

#[rustfmt::skip]
pub(super) const SUPPORTED_TYPES: &[&str] = &["string", "number", "integer", "boolean", "object", "array", "null"];

#[rustfmt::skip]
const OPENAI_KEYWORDS: &[&str] = &[
    "type", "properties", "required", "additionalProperties", "items", "enum", "const", "anyOf",
    "$ref", "$defs", "definitions", "description", "title", "pattern", "format", "multipleOf",
    "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "minItems", "maxItems",
];
#[rustfmt::skip]
const AZURE_KEYWORDS: &[&str] = &[
    "type", "properties", "required", "additionalProperties", "items", "enum", "const", "anyOf",
    "$ref", "$defs", "definitions", "description", "title",
];
#[rustfmt::skip]
const ANTHROPIC_KEYWORDS: &[&str] = &[
    "type", "properties", "required", "additionalProperties", "items", "enum", "const", "anyOf",
    "allOf", "$ref", "$defs", "definitions", "description", "title", "default", "format",
    "pattern", "minItems",
];
/// Allowed at the root of the schema only.
const ROOT_KEYWORDS: &[&str] = &["$schema", "$id"];

#[rustfmt::skip]
const OPENAI_FORMATS: &[&str] = &[
    "date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid",
];
#[rustfmt::skip]
const ANTHROPIC_FORMATS: &[&str] = &[
    "date-time", "time", "date", "duration", "email", "hostname", "uri", "ipv4", "ipv6", "uuid",
];

/// The provider's answer to a schema problem at `ctx` (a schema pointer,
/// relative), in `target`'s wording; `name` is OpenAI's `json_schema.name`.
pub(super) fn provider_error(
    target: Target,
    name: Option<&str>,
    ctx: Option<&str>,
    detail: &str,
) -> String {
    match target {
        Target::OpenAi | Target::Azure => {
            let status = if target == Target::Azure {
                "400 BadRequest"
            } else {
                "400 invalid_request_error"
            };
            let name = name.map(|n| format!(" '{n}'")).unwrap_or_default();
            let ctx = ctx
                .map(|p| format!("In context={}, ", python_context(p)))
                .unwrap_or_default();
            format!("{status}: Invalid schema for response_format{name}: {ctx}{detail}")
        }
        Target::Anthropic => {
            let at = ctx
                .filter(|p| !p.is_empty())
                .map(|p| format!(" at {p}"))
                .unwrap_or_default();
            format!("400 invalid_request_error: output_config.format.schema{at}: {detail}")
        }
        Target::Bedrock => {
            let at = ctx
                .filter(|p| !p.is_empty())
                .map(|p| format!(" at {p}"))
                .unwrap_or_default();
            format!("400 ValidationException: outputConfig.textFormat schema{at}: {detail}")
        }
    }
}

/// The provider's answer to a request whose wrapper is the wrong shape.
pub(super) fn shape_error(target: Target, message: &str) -> String {
    match target {
        Target::Anthropic => format!("400 invalid_request_error: {message}"),
        Target::Bedrock => format!("400 ValidationException: {message}"),
        _ => format!("400 invalid_request_error: Invalid parameter: {message}"),
    }
}

/// Whether `key` is in `target`'s keyword subset (`$schema` and `$id` at the
/// root only).
pub(super) fn allowed(target: Target, key: &str, at_root: bool) -> bool {
    let set = match target {
        Target::OpenAi => OPENAI_KEYWORDS,
        Target::Azure => AZURE_KEYWORDS,
        Target::Anthropic | Target::Bedrock => ANTHROPIC_KEYWORDS,
    };
    set.contains(&key) || (at_root && ROOT_KEYWORDS.contains(&key))
}

/// The string `format`s `target` supports.
pub(super) fn formats(target: Target) -> &'static [&'static str] {
    if target.anthropic_subset() {
        ANTHROPIC_FORMATS
    } else {
        OPENAI_FORMATS
    }
}

/// Python's repr of the pointer's segments as a tuple, as OpenAI's errors print it.
fn python_context(ptr: &str) -> String {
    let segs: Vec<String> = ptr
        .split('/')
        .skip(1)
        .map(|s| format!("'{}'", s.replace("~1", "/").replace("~0", "~")))
        .collect();
    match segs.len() {
        0 => "()".to_string(),
        1 => format!("({},)", segs[0]),
        _ => format!("({})", segs.join(", ")),
    }
}

/// Features Anthropic's regex support lacks: backreferences, lookaround, word boundaries.
pub(super) fn unsupported_regex_feature(pattern: &str) -> Option<&'static str> {
    let mut chars = pattern.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some('1'..='9') | Some('k') => return Some("backreferences"),
                Some('b') | Some('B') => return Some("word boundaries"),
                _ => {}
            },
            '(' if chars.peek() == Some(&'?') => {
                let rest: String = chars.clone().take(3).collect();
                if rest.starts_with("?=")
                    || rest.starts_with("?!")
                    || rest == "?<="
                    || rest == "?<!"
                {
                    return Some("lookahead/lookbehind");
                }
            }
            _ => {}
        }
    }
    None
}

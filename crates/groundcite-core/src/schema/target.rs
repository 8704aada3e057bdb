//! The targets (providers whose strict structured-output subset groundcite
//! emits and lints for) and their documented size limits. Its own module so
//! that the lint reads them without importing the module that declares the
//! lint.

use std::fmt;
use std::str::FromStr;

use serde::Serialize;

/// A provider whose strict structured-output subset groundcite targets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Target {
    /// OpenAI `response_format: {type: "json_schema", json_schema: {…, strict: true}}`.
    ///
    /// Limits from OpenAI's current Structured Outputs guide ("Supported
    /// schemas" / "Objects have limitations on nesting depth and size"):
    /// 5,000 object properties, 10 levels of nesting, 1,000 enum values,
    /// 120,000 characters of property names, definition names, enum and
    /// const values; a string enum of more than 250 values at most 15,000
    /// characters. Keywords allowed: the guide's supported list (string
    /// `pattern`/`format`, number `minimum`/`maximum`/`exclusive*`/`multipleOf`,
    /// array `minItems`/`maxItems`), the same set openai-java's
    /// `JsonSchemaValidator` enforces; `minLength`, `default` and the rest are
    /// rejected ("'minLength' is not permitted").
    OpenAi,
    /// Azure OpenAI, same request shape as [`Target::OpenAi`], with the stricter
    /// limits its "Structured outputs" page (learn.microsoft.com, "JSON Schema
    /// support and limitations") still lists: 100 object properties, 5 levels
    /// of nesting, 500 enum values, 15,000 characters, a string enum of more
    /// than 250 values at most 7,500 characters; and its "unsupported
    /// type-specific keywords": minLength, maxLength, pattern, format, minimum,
    /// maximum, multipleOf, patternProperties, unevaluatedProperties,
    /// propertyNames, minProperties, maxProperties, unevaluatedItems, contains,
    /// minContains, maxContains, minItems, maxItems, uniqueItems (exclusive
    /// bounds too).
    Azure,
    /// Anthropic `output_config: {format: {type: "json_schema", schema}}`.
    ///
    /// From Anthropic's "Structured outputs" page ("JSON Schema limitations")
    /// and its Python SDK's `transform_schema`: local `$ref`/`$defs`/
    /// `definitions`, `anyOf`, `allOf`, `enum` of scalars, `const`, `default`,
    /// string `format` (date-time, time, date, duration, email, hostname, uri,
    /// ipv4, ipv6, uuid), simple `pattern`s, `minItems` 0 or 1;
    /// `additionalProperties` must be false; no numeric or length bounds, no
    /// recursive schemas, no external `$ref`. At most 24 optional properties
    /// and 16 union-typed (anyOf / type-array) properties per request. No
    /// documented limit on properties, depth or enum size.
    Anthropic,
    /// Amazon Bedrock Converse `outputConfig: {textFormat: {type: "json_schema",
    /// structure: {jsonSchema: {schema, name}}}}`, the schema passed as a JSON
    /// **string**.
    ///
    /// Bedrock's "Get validated JSON results from models" page
    /// (`structured-output.html`): the schema is validated against a subset
    /// of JSON Schema draft 2020-12 and an unsupported feature is a 400;
    /// `additionalProperties: false` on every object; no recursive schemas, no
    /// external `$ref`, no numeric bounds (`minimum`, `maximum`,
    /// `multipleOf`), no string length bounds (`minLength`, `maxLength`).
    /// Claude models, which lead the supported-model list, answer with
    /// Anthropic's validator (`output_config.format.schema: For 'array' type,
    /// property 'maxItems' is not supported`), so the keyword, format, regex
    /// and `minItems` 0/1 rules and the 24-optional / 16-union limits are
    /// Anthropic's. No documented limit on properties, depth or enum size.
    Bedrock,
}

impl Target {
    /// All targets, in CLI order.
    pub const ALL: [Target; 4] = [
        Target::OpenAi,
        Target::Azure,
        Target::Anthropic,
        Target::Bedrock,
    ];

    /// The CLI spelling (`openai`, `azure`, `anthropic`, `bedrock`).
    pub fn as_str(self) -> &'static str {
        match self {
            Target::OpenAi => "openai",
            Target::Azure => "azure",
            Target::Anthropic => "anthropic",
            Target::Bedrock => "bedrock",
        }
    }

    /// Whether this target checks schemas against Anthropic's subset
    /// (Anthropic itself, and Bedrock, whose Claude models validate with it).
    pub(crate) fn anthropic_subset(self) -> bool {
        matches!(self, Target::Anthropic | Target::Bedrock)
    }

    /// The documented limits of this target's strict subset (see the variant docs for sources).
    pub fn limits(self) -> Limits {
        match self {
            Target::OpenAi => Limits {
                max_properties: Some(5_000),
                max_depth: Some(10),
                max_enum_values: Some(1_000),
                max_string_chars: Some(120_000),
                large_enum_values: 250,
                max_large_enum_chars: Some(15_000),
                max_optional: None,
                max_unions: None,
            },
            Target::Azure => Limits {
                max_properties: Some(100),
                max_depth: Some(5),
                max_enum_values: Some(500),
                max_string_chars: Some(15_000),
                large_enum_values: 250,
                max_large_enum_chars: Some(7_500),
                max_optional: None,
                max_unions: None,
            },
            Target::Anthropic | Target::Bedrock => Limits {
                max_properties: None,
                max_depth: None,
                max_enum_values: None,
                max_string_chars: None,
                large_enum_values: 250,
                max_large_enum_chars: None,
                max_optional: Some(24),
                max_unions: Some(16),
            },
        }
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A name that is not a [`Target`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown target {given:?}; expected openai, azure, anthropic or bedrock")]
pub struct ParseTargetError {
    /// The name given.
    pub given: String,
}

impl FromStr for Target {
    type Err = ParseTargetError;

    fn from_str(s: &str) -> Result<Target, ParseTargetError> {
        Target::ALL
            .into_iter()
            .find(|t| t.as_str() == s)
            .ok_or_else(|| ParseTargetError {
                given: s.to_string(),
            })
    }
}

/// Size limits of a target's strict subset; `None` where the provider documents none.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Limits {
    /// Object properties in the whole schema (each definition counted once).
    pub max_properties: Option<usize>,
    /// Levels of object nesting, the root object being level 1; `$ref`s are followed.
    pub max_depth: Option<usize>,
    /// Enum values in the whole schema.
    pub max_enum_values: Option<usize>,
    /// Characters of property names, definition names, enum and const values.
    pub max_string_chars: Option<usize>,
    /// Size beyond which one string enum is subject to [`Limits::max_large_enum_chars`].
    pub large_enum_values: usize,
    /// Characters of one string enum that has more than [`Limits::large_enum_values`] values.
    pub max_large_enum_chars: Option<usize>,
    /// Optional properties (not listed in `required`) per request.
    pub max_optional: Option<usize>,
    /// Union-typed schemas (`anyOf`, or a `type` array of several types) per request.
    pub max_unions: Option<usize>,
}

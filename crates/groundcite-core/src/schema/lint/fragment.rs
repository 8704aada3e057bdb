//! The wrapper around the schema: finding the schema in a bare schema or a
//! request fragment (OpenAI's `response_format.json_schema` or `text.format`,
//! Anthropic's `output_config.format`, Bedrock's `outputConfig.textFormat`),
//! and checking the wrapper's shape, family, `type`, `name` and `strict`.

use serde_json::{Map, Value};

use crate::schema::target::Target;

use super::dialect;
use super::linter::Linter;
use super::node::child;
use super::report::Violation;

/// How a fragment wraps its schema.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Container {
    /// OpenAI Chat Completions `json_schema` object: `{name, schema, strict}`.
    OpenAiJsonSchema,
    /// OpenAI Responses `text.format`: `{type, name, schema, strict}`.
    OpenAiFormat,
    /// Anthropic `output_config.format`: `{type, schema}`.
    AnthropicFormat,
}

/// The request shapes: which providers take which wrapper.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Family {
    /// OpenAI and Azure: `response_format` / `text.format`.
    OpenAi,
    /// Anthropic: `output_config.format`.
    Anthropic,
    /// Bedrock Converse: `outputConfig.textFormat`.
    Bedrock,
}

fn family(target: Target) -> Family {
    match target {
        Target::OpenAi | Target::Azure => Family::OpenAi,
        Target::Anthropic => Family::Anthropic,
        Target::Bedrock => Family::Bedrock,
    }
}

impl Container {
    fn family(self) -> Family {
        match self {
            Container::OpenAiJsonSchema | Container::OpenAiFormat => Family::OpenAi,
            Container::AnthropicFormat => Family::Anthropic,
        }
    }
}

impl<'a> Linter<'a> {
    /// Finds the schema inside `doc` and checks the wrapper around it.
    pub(super) fn locate(&mut self, doc: &'a Value) -> Option<(&'a Value, String)> {
        let Some(m) = doc.as_object() else {
            return Some((doc, String::new()));
        };
        if let Some(rf) = m.get("response_format") {
            self.wrong_family("/response_format", Family::OpenAi);
            let Some(rfm) = rf.as_object() else {
                self.shape(
                    "/response_format",
                    "response_format is not an object".into(),
                );
                return None;
            };
            self.check_type_json_schema(rfm, "/response_format", self.openai_like());
            let Some(js) = rfm.get("json_schema").and_then(Value::as_object) else {
                self.shape(
                    "/response_format",
                    "response_format has no json_schema object".into(),
                );
                return None;
            };
            return self.container(
                js,
                "/response_format/json_schema",
                Container::OpenAiJsonSchema,
            );
        }
        if let Some(oc) = m.get("outputConfig") {
            self.wrong_family("/outputConfig", Family::Bedrock);
            let Some(tf) = oc.get("textFormat").and_then(Value::as_object) else {
                self.shape(
                    "/outputConfig",
                    "outputConfig has no textFormat object".into(),
                );
                return None;
            };
            return self.text_format(tf, "/outputConfig/textFormat");
        }
        if let Some(oc) = m.get("output_config") {
            self.wrong_family("/output_config", Family::Anthropic);
            let Some(format) = oc.get("format").and_then(Value::as_object) else {
                self.shape(
                    "/output_config",
                    "output_config has no format object".into(),
                );
                return None;
            };
            return self.container(format, "/output_config/format", Container::AnthropicFormat);
        }
        if let Some(tf) = m
            .get("textFormat")
            .and_then(Value::as_object)
            .filter(|f| f.contains_key("structure"))
        {
            self.wrong_family("/textFormat", Family::Bedrock);
            return self.text_format(tf, "/textFormat");
        }
        if let Some(js) = m.get("json_schema").and_then(Value::as_object) {
            self.wrong_family("/json_schema", Family::OpenAi);
            self.check_type_json_schema(m, "", self.openai_like() && m.contains_key("type"));
            return self.container(js, "/json_schema", Container::OpenAiJsonSchema);
        }
        if let Some(format) = m
            .get("text")
            .and_then(|t| t.get("format"))
            .and_then(Value::as_object)
            .filter(|f| f.contains_key("schema"))
        {
            self.wrong_family("/text", Family::OpenAi);
            return self.container(format, "/text/format", Container::OpenAiFormat);
        }
        if let Some(format) = m
            .get("format")
            .and_then(Value::as_object)
            .filter(|f| f.contains_key("schema"))
        {
            self.wrong_family("/format", Family::Anthropic);
            return self.container(format, "/format", Container::AnthropicFormat);
        }
        let looks_like_schema = [
            "type",
            "properties",
            "anyOf",
            "allOf",
            "oneOf",
            "$ref",
            "items",
            "enum",
            "const",
        ]
        .iter()
        .any(|k| m.contains_key(*k));
        if !looks_like_schema && m.get("schema").is_some_and(Value::is_string) {
            // Bedrock's jsonSchema definition: `{schema: "<JSON text>", name, description}`.
            self.wrong_family("/schema", Family::Bedrock);
            return self.json_schema_definition(m, "");
        }
        if !looks_like_schema && m.get("schema").is_some_and(Value::is_object) {
            let openai_keys = m.contains_key("name") || m.contains_key("strict");
            let kind = if self.target.anthropic_subset() && !openai_keys {
                Container::AnthropicFormat
            } else if m.contains_key("type") {
                Container::OpenAiFormat
            } else {
                Container::OpenAiJsonSchema
            };
            if self.target == Target::Anthropic && openai_keys {
                self.shape(
                    "",
                    "name and strict belong to OpenAI's json_schema; anthropic takes {type, schema} \
                     in output_config.format"
                        .into(),
                );
            }
            if self.target == Target::Bedrock {
                self.shape(
                    "/schema",
                    "bedrock takes the schema as a JSON string in \
                     outputConfig.textFormat.structure.jsonSchema.schema, not as an object"
                        .into(),
                );
            }
            return self.container(m, "", kind);
        }
        Some((doc, String::new()))
    }

    fn shape(&mut self, ptr: &str, message: String) {
        let provider_error = dialect::shape_error(self.target, &message);
        self.out.push(Violation {
            pointer: ptr.to_string(),
            rule: "fragment-shape",
            message,
            provider_error,
        });
    }

    /// Reports a wrapper meant for another provider family.
    fn wrong_family(&mut self, ptr: &str, shape: Family) {
        let key = ptr.trim_start_matches('/');
        let (message, provider_error) = match family(self.target) {
            f if f == shape => return,
            Family::Anthropic => (
                format!("anthropic takes the schema in output_config.format, not {key}"),
                format!("400 invalid_request_error: {key}: Extra inputs are not permitted"),
            ),
            Family::OpenAi => (
                format!(
                    "{} takes the schema in response_format.json_schema, not {key}",
                    self.target
                ),
                format!("400 invalid_request_error: Unrecognized request argument supplied: {key}"),
            ),
            Family::Bedrock => (
                format!("bedrock takes the schema in outputConfig.textFormat, not {key}"),
                format!("400 ValidationException: {key} is not a field of the Converse request"),
            ),
        };
        self.out.push(Violation {
            pointer: ptr.to_string(),
            rule: "fragment-shape",
            message,
            provider_error,
        });
    }

    /// Bedrock's `textFormat`: `{type: "json_schema", structure: {jsonSchema: {schema, name, description}}}`.
    fn text_format(
        &mut self,
        tf: &'a Map<String, Value>,
        ptr: &str,
    ) -> Option<(&'a Value, String)> {
        if self.target == Target::Bedrock {
            self.check_type_json_schema(tf, ptr, true);
        }
        let sp = child(ptr, "structure");
        let Some(structure) = tf.get("structure").and_then(Value::as_object) else {
            self.shape(ptr, "textFormat has no structure object".into());
            return None;
        };
        let Some(js) = structure.get("jsonSchema").and_then(Value::as_object) else {
            self.shape(&sp, "structure has no jsonSchema object".into());
            return None;
        };
        self.json_schema_definition(js, &child(&sp, "jsonSchema"))
    }

    /// Bedrock's `jsonSchema` definition: the schema as a JSON string, which
    /// [`lint`](super::lint) parses; pointers go on inside that text.
    fn json_schema_definition(
        &mut self,
        js: &'a Map<String, Value>,
        ptr: &str,
    ) -> Option<(&'a Value, String)> {
        let Some(schema) = js.get("schema") else {
            self.shape(ptr, "no schema inside the wrapper".into());
            return None;
        };
        let sp = child(ptr, "schema");
        if schema.is_string() {
            self.schema_text = true;
        } else if self.target == Target::Bedrock {
            self.shape(
                &sp,
                format!(
                    "jsonSchema.schema is {}; bedrock takes the schema as a JSON string",
                    kind_of(schema)
                ),
            );
        }
        Some((schema, sp))
    }

    fn check_type_json_schema(&mut self, m: &Map<String, Value>, ptr: &str, check: bool) {
        if check && m.get("type").and_then(Value::as_str) != Some("json_schema") {
            // Point at the key when present, else at the object that lacks it.
            let (at, got) = match m.get("type") {
                Some(t) => (child(ptr, "type"), t.to_string()),
                None => (ptr.to_string(), "missing".to_string()),
            };
            self.shape(&at, format!("type must be \"json_schema\", got {got}"));
        }
    }

    fn container(
        &mut self,
        c: &'a Map<String, Value>,
        ptr: &str,
        kind: Container,
    ) -> Option<(&'a Value, String)> {
        let family_matches = kind.family() == family(self.target);
        if family_matches {
            if kind != Container::OpenAiJsonSchema {
                self.check_type_json_schema(c, ptr, true);
            }
            if kind != Container::AnthropicFormat {
                self.check_name_and_strict(c, ptr);
            }
        }
        match c.get("schema") {
            Some(schema) => Some((schema, child(ptr, "schema"))),
            None => {
                self.shape(ptr, "no schema inside the wrapper".into());
                None
            }
        }
    }

    fn check_name_and_strict(&mut self, c: &Map<String, Value>, ptr: &str) {
        let param = if ptr.is_empty() {
            "json_schema".to_string()
        } else {
            ptr[1..].replace('/', ".")
        };
        match c.get("name") {
            Some(Value::String(n))
                if (1..=64).contains(&n.len())
                    && n.chars().all(|ch| ch.is_ascii_alphanumeric() || ch == '_' || ch == '-') =>
            {
                self.name = Some(n.clone());
            }
            Some(other) => self.out.push(Violation {
                pointer: child(ptr, "name"),
                rule: "invalid-name",
                message: format!("name {other} must be 1-64 characters of a-z, A-Z, 0-9, _ or -"),
                provider_error: format!(
                    "400 invalid_request_error: Invalid '{param}.name': string does not match pattern. \
                     Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'."
                ),
            }),
            None => self.out.push(Violation {
                pointer: ptr.to_string(),
                rule: "invalid-name",
                message: "the schema has no name".into(),
                provider_error: format!(
                    "400 invalid_request_error: Missing required parameter: '{param}.name'."
                ),
            }),
        }
        if c.get("strict") != Some(&Value::Bool(true)) {
            let (pointer, got) = match c.get("strict") {
                Some(v) => (child(ptr, "strict"), v.to_string()),
                None => (ptr.to_string(), "missing".to_string()),
            };
            self.out.push(Violation {
                pointer,
                rule: "not-strict",
                message: format!(
                    "strict is {got}; without strict: true the schema is a hint and the output is not constrained"
                ),
                provider_error: "no error: the request succeeds but the output may break the schema".into(),
            });
        }
    }
}

/// What kind of JSON value `v` is, for messages.
fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

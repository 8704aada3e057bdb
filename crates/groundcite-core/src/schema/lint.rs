//! The strict-subset lint: every way a JSON schema breaks a target's strict
//! structured-output rules, each with its JSON pointer and the provider's
//! answer, so that one run fixes a schema instead of one 400 per attempt.
//!
//! Rules (stable codes, safe to match on):
//!
//! | rule | what |
//! |---|---|
//! | `fragment-shape` | wrapper is not the target's request shape (`response_format` vs `output_config`), or its `type` is not `json_schema` |
//! | `invalid-name` | OpenAI/Azure `json_schema.name` missing or not `^[A-Za-z0-9_-]{1,64}$` |
//! | `not-strict` | OpenAI/Azure `strict` is not `true`: accepted, but not enforced |
//! | `not-a-schema` | a subschema is not a JSON object (e.g. `true`) |
//! | `root-not-object` / `root-any-of` | the root must be `type: "object"`, not `anyOf` |
//! | `unsupported-keyword` | keyword outside the target's subset (`minLength`, `default`, `oneOf`, …) |
//! | `unsupported-type` / `unsupported-format` / `unsupported-value` / `unsupported-regex` | value outside the subset |
//! | `missing-type` | neither `type`, `anyOf` nor `$ref` (Anthropic also takes `enum`, `const`, `allOf`) |
//! | `malformed` | a keyword's value has the wrong JSON type |
//! | `additional-properties-not-false` | object without `additionalProperties: false` |
//! | `property-not-required` | OpenAI/Azure: a property missing from `required` |
//! | `required-extra` | `required` names an undefined property |
//! | `array-missing-items` | OpenAI/Azure: array without `items` |
//! | `ref-with-siblings` | OpenAI/Azure: `$ref` beside keywords other than `title`/`description` |
//! | `external-ref` / `unresolvable-ref` | `$ref` outside the document, or to nothing |
//! | `recursive-schema` | Anthropic: a `$ref` cycle |
//! | `enum-complex-value` | Anthropic: object or array in an `enum` |
//! | `enum-too-long` | a string enum over the large-enum character limit |
//! | `too-many-properties` / `too-deep` / `too-many-enum-values` / `too-many-characters` | size limits |
//! | `too-many-optional` / `too-many-unions` | Anthropic per-request limits |
//!
//! Counting: properties, enum values and characters are counted as written
//! (each definition once, however often referenced: providers validate the
//! schema text, and recursive schemas would otherwise be infinite). Depth
//! counts levels of object nesting along instance paths, following local
//! `$ref`s and stopping at cycles. `provider_error` quotes the provider's
//! wording where it is known (OpenAI's "In context=(…), '…' is not permitted",
//! "N levels of nesting exceeds limit of M", "Expected at most N enum
//! values…") and paraphrases it otherwise (Anthropic's is undocumented).

use std::collections::HashSet;
use std::fmt;

use serde::Serialize;
use serde_json::{Map, Value};

use super::{Limits, Target};

/// One way a schema breaks a target's strict subset.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct Violation {
    /// RFC 6901 pointer into the linted document (the file, wrapper included); `""` is its root.
    pub pointer: String,
    /// Stable rule code (see the module docs).
    pub rule: &'static str,
    /// What is wrong, in one sentence.
    pub message: String,
    /// What the provider would answer to a request carrying this schema.
    pub provider_error: String,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let pointer = if self.pointer.is_empty() {
            "(root)"
        } else {
            &self.pointer
        };
        write!(
            f,
            "{pointer}: {}: {} (provider would answer: {})",
            self.rule, self.message, self.provider_error
        )
    }
}

/// Recursion guard: far beyond any provider's depth limit, far below stack exhaustion.
const MAX_WALK: usize = 128;

#[rustfmt::skip]
const SUPPORTED_TYPES: &[&str] = &["string", "number", "integer", "boolean", "object", "array", "null"];

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

/// Checks `doc` — a bare JSON schema or a whole request fragment
/// (`{response_format: {json_schema: {schema}}}`, `{json_schema: …}`,
/// `{text: {format: …}}`, `{output_config: {format: {schema}}}`, `{format: …}`)
/// — against `target`'s strict subset and returns every violation, sorted by
/// pointer. Never panics, whatever the JSON.
pub fn lint(doc: &Value, target: Target) -> Vec<Violation> {
    let mut linter = Linter {
        target,
        limits: target.limits(),
        base: String::new(),
        name: None,
        root: doc,
        out: Vec::new(),
        properties: 0,
        enum_values: 0,
        chars: 0,
        optional: 0,
        unions: 0,
    };
    if let Some((schema, base)) = linter.locate(doc) {
        linter.base = base;
        linter.root = schema;
        linter.lint_schema(schema);
    }
    let mut out = linter.out;
    out.sort();
    out.dedup();
    out
}

struct Linter<'a> {
    target: Target,
    limits: Limits,
    /// Pointer of the schema inside the linted document.
    base: String,
    /// `json_schema.name`, for OpenAI-style messages.
    name: Option<String>,
    /// The schema root, against which `$ref`s resolve.
    root: &'a Value,
    out: Vec<Violation>,
    properties: usize,
    enum_values: usize,
    chars: usize,
    optional: usize,
    unions: usize,
}

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

fn child(ptr: &str, key: &str) -> String {
    format!("{ptr}/{}", key.replace('~', "~0").replace('/', "~1"))
}

fn type_names(v: &Value) -> Vec<&str> {
    match v {
        Value::String(s) => vec![s.as_str()],
        Value::Array(a) => a.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

fn is_object_schema(m: &Map<String, Value>) -> bool {
    match m.get("type") {
        Some(t) => type_names(t).contains(&"object"),
        None => m.contains_key("properties"),
    }
}

fn json_len(v: &Value) -> usize {
    match v {
        Value::String(s) => s.chars().count(),
        other => other.to_string().chars().count(),
    }
}

/// Subschemas nested in instance position (not `$defs`), with their pointers.
fn schema_children<'v>(m: &'v Map<String, Value>, ptr: &str) -> Vec<(String, &'v Value)> {
    let mut out = Vec::new();
    for key in ["properties", "patternProperties", "dependentSchemas"] {
        if let Some(Value::Object(props)) = m.get(key) {
            let p = child(ptr, key);
            out.extend(props.iter().map(|(k, v)| (child(&p, k), v)));
        }
    }
    for key in ["anyOf", "allOf", "oneOf", "prefixItems"] {
        if let Some(Value::Array(items)) = m.get(key) {
            let p = child(ptr, key);
            out.extend(
                items
                    .iter()
                    .enumerate()
                    .map(|(i, v)| (child(&p, &i.to_string()), v)),
            );
        }
    }
    for key in [
        "items",
        "additionalProperties",
        "not",
        "if",
        "then",
        "else",
        "contains",
    ] {
        match m.get(key) {
            Some(v @ Value::Object(_)) => out.push((child(ptr, key), v)),
            Some(Value::Array(items)) if key == "items" => {
                let p = child(ptr, key);
                out.extend(
                    items
                        .iter()
                        .enumerate()
                        .map(|(i, v)| (child(&p, &i.to_string()), v)),
                );
            }
            _ => {}
        }
    }
    out
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
fn unsupported_regex_feature(pattern: &str) -> Option<&'static str> {
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

/// One depth walk: the limit, the `$ref` targets on the current path, the
/// (pointer, depth) pairs already visited, and the hits (pointer, level, the
/// `$ref` site it was reached through).
struct DepthWalk {
    max: usize,
    stack: Vec<String>,
    memo: HashSet<(String, usize)>,
    hits: Vec<(String, usize, Option<String>)>,
}

impl<'a> Linter<'a> {
    fn report(&mut self, rel: &str, rule: &'static str, message: String, provider_error: String) {
        self.out.push(Violation {
            pointer: format!("{}{rel}", self.base),
            rule,
            message,
            provider_error,
        });
    }

    /// The provider's answer to a schema problem at `ctx` (a schema pointer, relative).
    fn provider(&self, ctx: Option<&str>, detail: &str) -> String {
        match self.target {
            Target::OpenAi | Target::Azure => {
                let status = if self.target == Target::Azure {
                    "400 BadRequest"
                } else {
                    "400 invalid_request_error"
                };
                let name = self
                    .name
                    .as_deref()
                    .map(|n| format!(" '{n}'"))
                    .unwrap_or_default();
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
        }
    }

    fn openai_like(&self) -> bool {
        matches!(self.target, Target::OpenAi | Target::Azure)
    }

    // ---- the wrapper -------------------------------------------------------

    /// Finds the schema inside `doc` and checks the wrapper around it.
    fn locate(&mut self, doc: &'a Value) -> Option<(&'a Value, String)> {
        let Some(m) = doc.as_object() else {
            return Some((doc, String::new()));
        };
        if let Some(rf) = m.get("response_format") {
            self.wrong_family("/response_format", false);
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
        if let Some(oc) = m.get("output_config") {
            self.wrong_family("/output_config", true);
            let Some(format) = oc.get("format").and_then(Value::as_object) else {
                self.shape(
                    "/output_config",
                    "output_config has no format object".into(),
                );
                return None;
            };
            return self.container(format, "/output_config/format", Container::AnthropicFormat);
        }
        if let Some(js) = m.get("json_schema").and_then(Value::as_object) {
            self.wrong_family("/json_schema", false);
            self.check_type_json_schema(m, "", self.openai_like() && m.contains_key("type"));
            return self.container(js, "/json_schema", Container::OpenAiJsonSchema);
        }
        if let Some(format) = m
            .get("text")
            .and_then(|t| t.get("format"))
            .and_then(Value::as_object)
            .filter(|f| f.contains_key("schema"))
        {
            self.wrong_family("/text", false);
            return self.container(format, "/text/format", Container::OpenAiFormat);
        }
        if let Some(format) = m
            .get("format")
            .and_then(Value::as_object)
            .filter(|f| f.contains_key("schema"))
        {
            self.wrong_family("/format", true);
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
        if !looks_like_schema && m.get("schema").is_some_and(Value::is_object) {
            let openai_keys = m.contains_key("name") || m.contains_key("strict");
            let kind = if self.target == Target::Anthropic && !openai_keys {
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
            return self.container(m, "", kind);
        }
        Some((doc, String::new()))
    }

    fn shape(&mut self, ptr: &str, message: String) {
        let provider_error = match self.target {
            Target::Anthropic => format!("400 invalid_request_error: {message}"),
            _ => format!("400 invalid_request_error: Invalid parameter: {message}"),
        };
        self.out.push(Violation {
            pointer: ptr.to_string(),
            rule: "fragment-shape",
            message,
            provider_error,
        });
    }

    /// Reports a wrapper meant for the other provider family.
    fn wrong_family(&mut self, ptr: &str, anthropic_shape: bool) {
        let key = ptr.trim_start_matches('/');
        let (message, provider_error) = match (self.target, anthropic_shape) {
            (Target::Anthropic, false) => (
                format!("anthropic takes the schema in output_config.format, not {key}"),
                format!("400 invalid_request_error: {key}: Extra inputs are not permitted"),
            ),
            (Target::OpenAi | Target::Azure, true) => (
                format!(
                    "{} takes the schema in response_format.json_schema, not {key}",
                    self.target
                ),
                format!("400 invalid_request_error: Unrecognized request argument supplied: {key}"),
            ),
            _ => return,
        };
        self.out.push(Violation {
            pointer: ptr.to_string(),
            rule: "fragment-shape",
            message,
            provider_error,
        });
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
        let family_matches = (kind == Container::AnthropicFormat) != self.openai_like();
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

    // ---- the schema --------------------------------------------------------

    fn lint_schema(&mut self, schema: &'a Value) {
        match schema.as_object() {
            None => {
                let msg = format!("the root schema is {}, not an object schema", schema);
                let pe = self.provider(None, "schema must be a JSON Schema of 'type: \"object\"'.");
                self.report("", "root-not-object", msg, pe);
            }
            Some(m) => {
                if m.contains_key("anyOf") {
                    let pe = self.provider(
                        None,
                        "schema must be a JSON Schema of 'type: \"object\"', got 'type: \"None\"'.",
                    );
                    self.report(
                        "/anyOf",
                        "root-any-of",
                        "the root schema is an anyOf; wrap it in an object property".into(),
                        pe,
                    );
                } else if m.get("type").and_then(Value::as_str) != Some("object") {
                    let (ptr, got) = match m.get("type") {
                        Some(t) => ("/type", t.to_string()),
                        None if m.contains_key("$ref") => ("/$ref", "a $ref".to_string()),
                        None => ("", "missing".to_string()),
                    };
                    let pe = self.provider(
                        None,
                        &format!(
                            "schema must be a JSON Schema of 'type: \"object\"', got 'type: {got}'."
                        ),
                    );
                    self.report(
                        ptr,
                        "root-not-object",
                        format!("the root type is {got}; it must be \"object\""),
                        pe,
                    );
                }
            }
        }
        self.walk(schema, "", 0);
        if self.target == Target::Anthropic {
            self.find_cycles();
        }
        self.check_depth();
        self.check_totals();
    }

    fn allowed(&self, key: &str, at_root: bool) -> bool {
        let set = match self.target {
            Target::OpenAi => OPENAI_KEYWORDS,
            Target::Azure => AZURE_KEYWORDS,
            Target::Anthropic => ANTHROPIC_KEYWORDS,
        };
        set.contains(&key) || (at_root && ROOT_KEYWORDS.contains(&key))
    }

    fn malformed(&mut self, ptr: &str, message: String) {
        let pe = self.provider(Some(ptr), &message);
        self.report(ptr, "malformed", message, pe);
    }

    /// Checks one schema location as written (no `$ref` following).
    fn walk(&mut self, v: &'a Value, ptr: &str, guard: usize) {
        if guard > MAX_WALK {
            return;
        }
        let Some(m) = v.as_object() else {
            let pe = self.provider(Some(ptr), &format!("{v} is not a valid schema."));
            self.report(
                ptr,
                "not-a-schema",
                format!("subschema is {v}, not an object schema"),
                pe,
            );
            return;
        };
        self.check_keywords(m, ptr);

        // type
        let mut types: Vec<&str> = Vec::new();
        match m.get("type") {
            None => {}
            Some(Value::String(s)) => types.push(s),
            Some(Value::Array(a)) => {
                for (i, t) in a.iter().enumerate() {
                    match t.as_str() {
                        Some(s) => types.push(s),
                        None => self.malformed(
                            &child(&child(ptr, "type"), &i.to_string()),
                            format!("type entry {t} is not a string"),
                        ),
                    }
                }
                if a.len() > 1 {
                    self.unions += 1;
                }
            }
            Some(other) => self.malformed(
                &child(ptr, "type"),
                format!("type {other} is neither a string nor an array"),
            ),
        }
        for t in &types {
            if !SUPPORTED_TYPES.contains(t) {
                let msg = format!(
                    "type \"{t}\" is not a JSON Schema type {} supports",
                    self.target
                );
                let pe = self.provider(Some(ptr), &format!("'{t}' is not a valid type."));
                self.report(&child(ptr, "type"), "unsupported-type", msg, pe);
            }
        }
        let mut kinds = vec!["type", "anyOf", "$ref"];
        if self.target == Target::Anthropic {
            kinds.extend(["allOf", "enum", "const"]);
        }
        if !kinds.iter().any(|k| m.contains_key(*k)) {
            let msg = format!("schema has none of {}", kinds.join(", "));
            let pe = self.provider(Some(ptr), "schema must have a 'type' key.");
            self.report(ptr, "missing-type", msg, pe);
        }

        // objects
        if is_object_schema(m) {
            match m.get("additionalProperties") {
                Some(Value::Bool(false)) => {}
                None => {
                    let pe = self.provider(
                        Some(ptr),
                        "'additionalProperties' is required to be supplied and to be false.",
                    );
                    self.report(
                        ptr,
                        "additional-properties-not-false",
                        "object schema lacks additionalProperties: false".into(),
                        pe,
                    );
                }
                Some(other) => {
                    let pe = self.provider(
                        Some(ptr),
                        "'additionalProperties' is required to be supplied and to be false.",
                    );
                    self.report(
                        &child(ptr, "additionalProperties"),
                        "additional-properties-not-false",
                        format!("additionalProperties is {other}; it must be false"),
                        pe,
                    );
                }
            }
        }
        self.check_properties(m, ptr, guard);

        // arrays
        match m.get("items") {
            Some(Value::Array(_)) => {
                let msg = "tuple-form items (an array of schemas) is not supported".to_string();
                let pe = self.provider(Some(ptr), "'items' must be a schema object.");
                self.report(&child(ptr, "items"), "unsupported-value", msg, pe);
            }
            Some(items) => self.walk(items, &child(ptr, "items"), guard + 1),
            None => {
                if types.contains(&"array") && self.openai_like() {
                    let pe = self.provider(Some(ptr), "array schema missing items.");
                    self.report(
                        ptr,
                        "array-missing-items",
                        "array schema has no items".into(),
                        pe,
                    );
                }
            }
        }

        // unions and intersections
        for key in ["anyOf", "allOf"] {
            if !self.allowed(key, false) {
                continue;
            }
            match m.get(key) {
                None => {}
                Some(Value::Array(a)) if !a.is_empty() => {
                    if key == "anyOf" {
                        self.unions += 1;
                    }
                    let p = child(ptr, key);
                    for (i, sub) in a.iter().enumerate() {
                        let sp = child(&p, &i.to_string());
                        if key == "allOf" && sub.get("$ref").is_some() {
                            let pe = self.provider(Some(&sp), "allOf with $ref is not supported.");
                            self.report(
                                &sp,
                                "unsupported-value",
                                "allOf entries cannot be $refs".into(),
                                pe,
                            );
                        }
                        self.walk(sub, &sp, guard + 1);
                    }
                }
                Some(other) => self.malformed(
                    &child(ptr, key),
                    format!("{key} {other} is not a non-empty array"),
                ),
            }
        }

        // references
        match m.get("$ref") {
            None => {}
            Some(Value::String(r)) => {
                self.check_ref(r, ptr);
                if self.openai_like() {
                    let siblings: Vec<&str> = m
                        .keys()
                        .map(String::as_str)
                        .filter(|k| {
                            ![
                                "$ref",
                                "title",
                                "description",
                                "$defs",
                                "definitions",
                                "$schema",
                                "$id",
                            ]
                            .contains(k)
                        })
                        .collect();
                    if !siblings.is_empty() {
                        let msg = format!("$ref has sibling keywords {}", siblings.join(", "));
                        let pe = self
                            .provider(Some(ptr), "'$ref' cannot be combined with other keywords.");
                        self.report(ptr, "ref-with-siblings", msg, pe);
                    }
                }
            }
            Some(other) => {
                self.malformed(&child(ptr, "$ref"), format!("$ref {other} is not a string"))
            }
        }
        for key in ["$defs", "definitions"] {
            match m.get(key) {
                None => {}
                Some(Value::Object(defs)) => {
                    let p = child(ptr, key);
                    for (name, sub) in defs {
                        self.chars += name.chars().count();
                        self.walk(sub, &child(&p, name), guard + 1);
                    }
                }
                Some(other) => {
                    self.malformed(&child(ptr, key), format!("{key} {other} is not an object"))
                }
            }
        }

        // values
        match m.get("enum") {
            None => {}
            Some(Value::Array(values)) if !values.is_empty() => self.check_enum(values, ptr),
            Some(other) => self.malformed(
                &child(ptr, "enum"),
                format!("enum {other} is not a non-empty array"),
            ),
        }
        if let Some(c) = m.get("const") {
            self.chars += json_len(c);
        }
    }

    fn check_keywords(&mut self, m: &Map<String, Value>, ptr: &str) {
        let at_root = ptr.is_empty();
        for (key, val) in m {
            let kp = child(ptr, key);
            if !self.allowed(key, at_root) {
                let msg = format!("'{key}' is not in {}'s strict subset", self.target);
                let pe = match self.target {
                    Target::Anthropic => {
                        self.provider(Some(ptr), &format!("'{key}' is not supported."))
                    }
                    _ => self.provider(Some(ptr), &format!("'{key}' is not permitted.")),
                };
                self.report(&kp, "unsupported-keyword", msg, pe);
                continue;
            }
            match key.as_str() {
                "format" => match val.as_str() {
                    Some(f) => {
                        let formats = if self.target == Target::Anthropic {
                            ANTHROPIC_FORMATS
                        } else {
                            OPENAI_FORMATS
                        };
                        if !formats.contains(&f) {
                            let msg = format!(
                                "format \"{f}\" is not one of {}'s formats ({})",
                                self.target,
                                formats.join(", ")
                            );
                            let pe = self
                                .provider(Some(ptr), &format!("'{f}' is not a supported format."));
                            self.report(&kp, "unsupported-format", msg, pe);
                        }
                    }
                    None => self.malformed(&kp, format!("format {val} is not a string")),
                },
                "pattern" => match val.as_str() {
                    Some(p) if self.target == Target::Anthropic => {
                        if let Some(feature) = unsupported_regex_feature(p) {
                            let msg = format!(
                                "pattern uses {feature}, which anthropic's regex support lacks"
                            );
                            let pe = self.provider(
                                Some(ptr),
                                &format!("pattern uses unsupported {feature}."),
                            );
                            self.report(&kp, "unsupported-regex", msg, pe);
                        }
                    }
                    Some(_) => {}
                    None => self.malformed(&kp, format!("pattern {val} is not a string")),
                },
                "minItems"
                    if self.target == Target::Anthropic
                        && val != &Value::from(0)
                        && val != &Value::from(1) =>
                {
                    let msg = format!("minItems is {val}; anthropic supports only 0 and 1");
                    let pe = self.provider(
                        Some(ptr),
                        "minItems values other than 0 or 1 are not supported.",
                    );
                    self.report(&kp, "unsupported-value", msg, pe);
                }
                _ => {}
            }
        }
    }

    fn check_properties(&mut self, m: &'a Map<String, Value>, ptr: &str, guard: usize) {
        let props = match m.get("properties") {
            None => None,
            Some(Value::Object(p)) => Some(p),
            Some(other) => {
                self.malformed(
                    &child(ptr, "properties"),
                    format!("properties {other} is not an object"),
                );
                None
            }
        };
        let mut required: Vec<(usize, &str)> = Vec::new();
        match m.get("required") {
            None => {}
            Some(Value::Array(a)) => {
                for (i, r) in a.iter().enumerate() {
                    match r.as_str() {
                        Some(s) => required.push((i, s)),
                        None => self.malformed(
                            &child(&child(ptr, "required"), &i.to_string()),
                            format!("required entry {r} is not a string"),
                        ),
                    }
                }
            }
            Some(other) => self.malformed(
                &child(ptr, "required"),
                format!("required {other} is not an array"),
            ),
        }
        let pp = child(ptr, "properties");
        if let Some(props) = props {
            for (name, sub) in props {
                self.properties += 1;
                self.chars += name.chars().count();
                let sp = child(&pp, name);
                if !required.iter().any(|(_, r)| r == name) {
                    if self.openai_like() {
                        let pe = self.provider(
                            Some(ptr),
                            &format!(
                                "'required' is required to be supplied and to be an array including every key in properties. Missing '{name}'."
                            ),
                        );
                        self.report(
                            &sp,
                            "property-not-required",
                            format!("property '{name}' is not listed in required"),
                            pe,
                        );
                    } else {
                        self.optional += 1;
                    }
                }
                self.walk(sub, &sp, guard + 1);
            }
        }
        for (i, r) in required {
            if !props.is_some_and(|p| p.contains_key(r)) {
                let pe = self.provider(Some(ptr), &format!("Extra required key '{r}' supplied."));
                self.report(
                    &child(&child(ptr, "required"), &i.to_string()),
                    "required-extra",
                    format!("required names '{r}', which is not a property"),
                    pe,
                );
            }
        }
    }

    fn check_enum(&mut self, values: &[Value], ptr: &str) {
        let ep = child(ptr, "enum");
        self.enum_values += values.len();
        let mut len = 0;
        for (i, v) in values.iter().enumerate() {
            len += json_len(v);
            if self.target == Target::Anthropic && (v.is_object() || v.is_array()) {
                let pe = self.provider(
                    Some(ptr),
                    "enum values must be strings, numbers, booleans or null.",
                );
                self.report(
                    &child(&ep, &i.to_string()),
                    "enum-complex-value",
                    format!("enum value {v} is not a scalar"),
                    pe,
                );
            }
        }
        self.chars += len;
        let all_strings = values.iter().all(Value::is_string);
        if let Some(max) = self.limits.max_large_enum_chars
            && all_strings
            && values.len() > self.limits.large_enum_values
            && len > max
        {
            let msg = format!(
                "string enum of {} values has {len} characters; {} allows {max} once an enum has more than {} values",
                values.len(),
                self.target,
                self.limits.large_enum_values
            );
            let pe = self.provider(
                Some(ptr),
                &format!(
                    "Expected at most {max} total characters for enum values when there are more than {} enum values, but received {len}.",
                    self.limits.large_enum_values
                ),
            );
            self.report(&ep, "enum-too-long", msg, pe);
        }
    }

    fn check_ref(&mut self, r: &str, ptr: &str) {
        let rp = child(ptr, "$ref");
        if !r.starts_with('#') {
            let pe = self.provider(Some(ptr), &format!("external $ref '{r}' is not supported."));
            self.report(
                &rp,
                "external-ref",
                format!("$ref \"{r}\" points outside this schema"),
                pe,
            );
        } else if self.resolve(r).is_none() {
            let pe = self.provider(Some(ptr), &format!("$ref '{r}' could not be resolved."));
            self.report(
                &rp,
                "unresolvable-ref",
                format!("$ref \"{r}\" resolves to nothing"),
                pe,
            );
        }
    }

    /// Resolves a local `$ref` against the schema root: the target and its pointer.
    fn resolve(&self, r: &str) -> Option<(&'a Value, String)> {
        let frag = r.strip_prefix('#')?;
        if frag.is_empty() {
            return Some((self.root, String::new()));
        }
        if !frag.starts_with('/') {
            return None;
        }
        let mut cur = self.root;
        for seg in frag.split('/').skip(1) {
            let seg = seg.replace("~1", "/").replace("~0", "~");
            cur = match cur {
                Value::Object(m) => m.get(&seg)?,
                Value::Array(a) => a.get(seg.parse::<usize>().ok()?)?,
                _ => return None,
            };
        }
        Some((cur, frag.to_string()))
    }

    /// `$ref`s used in instance position under `v` (not inside `$defs`), with their pointers.
    fn refs_under(&self, v: &'a Value, ptr: &str, guard: usize, out: &mut Vec<(String, String)>) {
        if guard > MAX_WALK {
            return;
        }
        let Some(m) = v.as_object() else { return };
        if let Some(Value::String(r)) = m.get("$ref") {
            out.push((child(ptr, "$ref"), r.clone()));
        }
        for (cp, c) in schema_children(m, ptr) {
            self.refs_under(c, &cp, guard + 1, out);
        }
    }

    /// Reports each `$ref` that closes a cycle (Anthropic rejects recursive schemas).
    fn find_cycles(&mut self) {
        // Depth-first over the graph "schema location -> locations its $refs name".
        let mut done: HashSet<String> = HashSet::new();
        let mut on_path: Vec<String> = vec![String::new()];
        let mut found = Vec::new();
        self.cycle_dfs(
            self.root,
            String::new(),
            &mut on_path,
            &mut done,
            &mut found,
        );
        for (site, r) in found {
            let pe = self.provider(
                Some(site.trim_end_matches("/$ref")),
                "recursive schemas are not supported.",
            );
            self.out.push(Violation {
                pointer: format!("{}{site}", self.base),
                rule: "recursive-schema",
                message: format!("$ref \"{r}\" makes the schema recursive"),
                provider_error: pe,
            });
        }
    }

    fn cycle_dfs(
        &self,
        node: &'a Value,
        node_ptr: String,
        on_path: &mut Vec<String>,
        done: &mut HashSet<String>,
        found: &mut Vec<(String, String)>,
    ) {
        if on_path.len() > MAX_WALK {
            return;
        }
        let mut refs = Vec::new();
        self.refs_under(node, &node_ptr, 0, &mut refs);
        for (site, r) in refs {
            let Some((target, tptr)) = self.resolve(&r) else {
                continue;
            };
            if on_path.contains(&tptr) {
                found.push((site, r));
            } else if !done.contains(&tptr) {
                on_path.push(tptr.clone());
                self.cycle_dfs(target, tptr.clone(), on_path, done, found);
                on_path.pop();
                done.insert(tptr);
            }
        }
    }

    /// Reports object schemas nested deeper than the target allows, following `$ref`s.
    fn check_depth(&mut self) {
        let Some(max) = self.limits.max_depth else {
            return;
        };
        let mut walk = DepthWalk {
            max,
            stack: vec![String::new()],
            memo: HashSet::new(),
            hits: Vec::new(),
        };
        self.descend(self.root, String::new(), 0, None, &mut walk, 0);
        let mut seen = HashSet::new();
        for (ptr, level, via) in walk.hits {
            if !seen.insert(ptr.clone()) {
                continue;
            }
            let via = via
                .map(|v| format!(" (reached through {}{v})", self.base))
                .unwrap_or_default();
            let msg = format!(
                "object schema nested {level} levels deep{via}; {} allows {max}",
                self.target
            );
            let pe = self.provider(
                None,
                &format!("{level} levels of nesting exceeds limit of {max}."),
            );
            self.report(&ptr, "too-deep", msg, pe);
        }
    }

    fn descend(
        &self,
        v: &'a Value,
        ptr: String,
        depth: usize,
        via: Option<String>,
        walk: &mut DepthWalk,
        guard: usize,
    ) {
        if guard > MAX_WALK {
            return;
        }
        let Some(m) = v.as_object() else { return };
        if !walk.memo.insert((ptr.clone(), depth)) {
            return;
        }
        let level = if is_object_schema(m) {
            depth + 1
        } else {
            depth
        };
        if level > walk.max {
            walk.hits.push((ptr, level, via));
            return;
        }
        if let Some(Value::String(r)) = m.get("$ref")
            && let Some((target, tptr)) = self.resolve(r)
            && !walk.stack.contains(&tptr)
        {
            walk.stack.push(tptr.clone());
            let site = child(&ptr, "$ref");
            self.descend(target, tptr, level, Some(site), walk, guard + 1);
            walk.stack.pop();
        }
        for (cp, c) in schema_children(m, &ptr) {
            self.descend(c, cp, level, via.clone(), walk, guard + 1);
        }
    }

    fn check_totals(&mut self) {
        let l = self.limits;
        let t = self.target;
        if let Some(max) = l.max_properties
            && self.properties > max
        {
            let n = self.properties;
            let pe = self.provider(None, &format!("Expected at most {max} object properties in total within a single schema, but received {n}."));
            self.report(
                "",
                "too-many-properties",
                format!("schema has {n} object properties in total; {t} allows at most {max}"),
                pe,
            );
        }
        if let Some(max) = l.max_enum_values
            && self.enum_values > max
        {
            let n = self.enum_values;
            let pe = self.provider(
                None,
                &format!(
                    "Expected at most {max} enum values in total within a single schema when using structured outputs, but received {n}. \
                     Consider reducing the number of enums, or use 'strict: false' to opt out of structured outputs."
                ),
            );
            self.report(
                "",
                "too-many-enum-values",
                format!("schema has {n} enum values in total; {t} allows at most {max}"),
                pe,
            );
        }
        if let Some(max) = l.max_string_chars
            && self.chars > max
        {
            let n = self.chars;
            let pe = self.provider(
                None,
                &format!("Expected at most {max} total characters for property names, definition names, enum values and const values, but received {n}."),
            );
            self.report(
                "",
                "too-many-characters",
                format!("property names, definition names, enum and const values total {n} characters; {t} allows at most {max}"),
                pe,
            );
        }
        if let Some(max) = l.max_optional
            && self.optional > max
        {
            let n = self.optional;
            let pe = self.provider(
                None,
                &format!("at most {max} optional parameters are supported per request, got {n}."),
            );
            self.report(
                "",
                "too-many-optional",
                format!("schema has {n} optional properties; {t} allows at most {max} per request"),
                pe,
            );
        }
        if let Some(max) = l.max_unions
            && self.unions > max
        {
            let n = self.unions;
            let pe = self.provider(
                None,
                &format!(
                    "at most {max} parameters with union types are supported per request, got {n}."
                ),
            );
            self.report(
                "",
                "too-many-unions",
                format!("schema has {n} union-typed schemas; {t} allows at most {max} per request"),
                pe,
            );
        }
    }
}

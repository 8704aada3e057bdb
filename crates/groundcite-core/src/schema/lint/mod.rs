//! The strict-subset lint: every way a JSON schema breaks a target's strict
//! structured-output rules, each with its JSON pointer and the provider's
//! answer, so that one run fixes a schema instead of one 400 per attempt.
//!
//! Rules (stable codes, safe to match on):
//!
//! | rule | what |
//! |---|---|
//! | `fragment-shape` | wrapper is not the target's request shape (`response_format` vs `output_config` vs `outputConfig`), or its `type` is not `json_schema`, or Bedrock's schema is not a JSON string |
//! | `schema-not-json` | Bedrock: the schema string is not JSON text |
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
//! | `recursive-schema` | Anthropic and Bedrock: a `$ref` cycle |
//! | `enum-complex-value` | Anthropic and Bedrock: object or array in an `enum` |
//! | `enum-too-long` | a string enum over the large-enum character limit |
//! | `too-many-properties` / `too-deep` / `too-many-enum-values` / `too-many-characters` | size limits |
//! | `too-many-optional` / `too-many-unions` | Anthropic (and Bedrock) per-request limits |
//!
//! Bedrock takes the schema as a JSON string
//! (`outputConfig.textFormat.structure.jsonSchema.schema`): the lint parses
//! it, and a pointer into it goes on past the string, into the JSON it holds
//! (`…/jsonSchema/schema/properties/quote/minLength`).
//!
//! Counting: properties, enum values and characters are counted as written
//! (each definition once, however often referenced: providers validate the
//! schema text, and recursive schemas would otherwise be infinite). Depth
//! counts levels of object nesting along instance paths, following local
//! `$ref`s and stopping at cycles. `provider_error` quotes the provider's
//! wording where it is known (OpenAI's "In context=(…), '…' is not permitted",
//! "N levels of nesting exceeds limit of M", "Expected at most N enum
//! values…") and paraphrases it otherwise (Anthropic's and Bedrock's are
//! undocumented).

use serde_json::Value;

use crate::schema::target::Target;

// Layered, each importing only those listed before it: report, dialect,
// node, linter, then the checks (fragment, refs, size, walk: walk calls
// refs' check_ref, size follows refs' resolve); this module runs them and
// none of them imports it.
mod dialect;
mod fragment;
mod linter;
mod node;
mod refs;
mod report;
mod size;
mod walk;

pub use report::Violation;

use linter::Linter;

/// Checks `doc` — a bare JSON schema or a whole request fragment
/// (`{response_format: {json_schema: {schema}}}`, `{json_schema: …}`,
/// `{text: {format: …}}`, `{output_config: {format: {schema}}}`, `{format: …}`,
/// `{outputConfig: {textFormat: {structure: {jsonSchema: {schema}}}}}`,
/// `{textFormat: …}`, `{schema: "<JSON text>", name}`) — against `target`'s
/// strict subset and returns every violation, sorted by pointer. Never
/// panics, whatever the JSON.
pub fn lint(doc: &Value, target: Target) -> Vec<Violation> {
    // Bedrock's schema arrives as JSON text; parsed here, it outlives the linter.
    let parsed: Value;
    let mut linter = Linter {
        target,
        limits: target.limits(),
        base: String::new(),
        name: None,
        root: doc,
        schema_text: false,
        out: Vec::new(),
        properties: 0,
        enum_values: 0,
        chars: 0,
        optional: 0,
        unions: 0,
    };
    if let Some((schema, base)) = linter.locate(doc) {
        linter.base = base;
        match schema {
            Value::String(text) if linter.schema_text => {
                match serde_json::from_str::<Value>(text) {
                    Ok(v) => {
                        parsed = v;
                        linter.root = &parsed;
                        linter.lint_schema(&parsed);
                    }
                    Err(e) => {
                        let msg = format!("the schema string is not JSON text: {e}");
                        let pe = linter.provider(None, "the schema is not valid JSON.");
                        linter.report("", "schema-not-json", msg, pe);
                    }
                }
            }
            _ => {
                linter.root = schema;
                linter.lint_schema(schema);
            }
        }
    }
    let mut out = linter.out;
    out.sort();
    out.dedup();
    out
}

impl<'a> Linter<'a> {
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
        if self.target.anthropic_subset() {
            self.find_cycles();
        }
        self.check_depth();
        self.check_totals();
    }
}

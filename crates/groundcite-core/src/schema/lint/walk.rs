//! The walker: every schema location as written (no `$ref` following),
//! checked against the target's keywords, types, formats and patterns, with
//! the object, array, union, reference and value rules, counting what the
//! totals read.

use serde_json::{Map, Value};

use super::dialect;
use super::linter::{Linter, MAX_WALK};
use super::node::{child, is_object_schema, json_len};

impl<'a> Linter<'a> {
    /// Checks one schema location as written (no `$ref` following).
    pub(super) fn walk(&mut self, v: &'a Value, ptr: &str, guard: usize) {
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
            if !dialect::SUPPORTED_TYPES.contains(t) {
                let msg = format!(
                    "type \"{t}\" is not a JSON Schema type {} supports",
                    self.target
                );
                let pe = self.provider(Some(ptr), &format!("'{t}' is not a valid type."));
                self.report(&child(ptr, "type"), "unsupported-type", msg, pe);
            }
        }
        let mut kinds = vec!["type", "anyOf", "$ref"];
        if self.target.anthropic_subset() {
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
                let pe = if self.target.anthropic_subset() {
                    self.provider(Some(ptr), &format!("'{key}' is not supported."))
                } else {
                    self.provider(Some(ptr), &format!("'{key}' is not permitted."))
                };
                self.report(&kp, "unsupported-keyword", msg, pe);
                continue;
            }
            match key.as_str() {
                "format" => match val.as_str() {
                    Some(f) => {
                        let formats = dialect::formats(self.target);
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
                    Some(p) if self.target.anthropic_subset() => {
                        if let Some(feature) = dialect::unsupported_regex_feature(p) {
                            let msg = format!(
                                "pattern uses {feature}, which {}'s regex support lacks",
                                self.target
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
                    if self.target.anthropic_subset()
                        && val != &Value::from(0)
                        && val != &Value::from(1) =>
                {
                    let msg = format!("minItems is {val}; {} supports only 0 and 1", self.target);
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
            if self.target.anthropic_subset() && (v.is_object() || v.is_array()) {
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
}

//! The size limits: object nesting depth (following `$ref`s, resolved as
//! in `refs`) and the per-schema totals (properties, enum values,
//! characters; Anthropic's optional and union-typed properties).

use std::collections::HashSet;

use serde_json::Value;

use super::linter::{Linter, MAX_WALK};
use super::node::{child, is_object_schema, schema_children};

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
    /// Reports object schemas nested deeper than the target allows, following `$ref`s.
    pub(super) fn check_depth(&mut self) {
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

    pub(super) fn check_totals(&mut self) {
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

//! `$ref`s: each one resolved against the schema root (external and
//! dangling ones reported), and the cycles they close (Anthropic rejects
//! recursive schemas).

use std::collections::HashSet;

use serde_json::Value;

use super::linter::{Linter, MAX_WALK};
use super::node::{child, schema_children};
use super::report::Violation;

impl<'a> Linter<'a> {
    pub(super) fn check_ref(&mut self, r: &str, ptr: &str) {
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
    pub(super) fn resolve(&self, r: &str) -> Option<(&'a Value, String)> {
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
    pub(super) fn find_cycles(&mut self) {
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
}

//! The linter's state (target, limits, the schema root, the counters the
//! totals read, the violations found) and what every check shares:
//! reporting a violation and the provider's wording of it.

use serde_json::Value;

use crate::schema::target::{Limits, Target};

use super::dialect;
use super::report::Violation;

/// Recursion guard: far beyond any provider's depth limit, far below stack exhaustion.
pub(super) const MAX_WALK: usize = 128;

/// One lint run over one document.
pub(super) struct Linter<'a> {
    pub(super) target: Target,
    pub(super) limits: Limits,
    /// Pointer of the schema inside the linted document.
    pub(super) base: String,
    /// `json_schema.name`, for OpenAI-style messages.
    pub(super) name: Option<String>,
    /// The schema root, against which `$ref`s resolve.
    pub(super) root: &'a Value,
    /// The located schema is Bedrock's JSON text (`jsonSchema.schema`), to
    /// be parsed before it is linted.
    pub(super) schema_text: bool,
    pub(super) out: Vec<Violation>,
    pub(super) properties: usize,
    pub(super) enum_values: usize,
    pub(super) chars: usize,
    pub(super) optional: usize,
    pub(super) unions: usize,
}

impl<'a> Linter<'a> {
    pub(super) fn report(
        &mut self,
        rel: &str,
        rule: &'static str,
        message: String,
        provider_error: String,
    ) {
        self.out.push(Violation {
            pointer: format!("{}{rel}", self.base),
            rule,
            message,
            provider_error,
        });
    }

    /// The provider's answer to a schema problem at `ctx` (a schema pointer, relative).
    pub(super) fn provider(&self, ctx: Option<&str>, detail: &str) -> String {
        dialect::provider_error(self.target, self.name.as_deref(), ctx, detail)
    }

    pub(super) fn openai_like(&self) -> bool {
        matches!(self.target, Target::OpenAi | Target::Azure)
    }

    pub(super) fn allowed(&self, key: &str, at_root: bool) -> bool {
        dialect::allowed(self.target, key, at_root)
    }

    pub(super) fn malformed(&mut self, ptr: &str, message: String) {
        let pe = self.provider(Some(ptr), &message);
        self.report(ptr, "malformed", message, pe);
    }
}

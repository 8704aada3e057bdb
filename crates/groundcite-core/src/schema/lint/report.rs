//! The lint's report: one [`Violation`] per broken rule, with its pointer,
//! rule code, message and the provider's answer.

use std::fmt;

use serde::Serialize;

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

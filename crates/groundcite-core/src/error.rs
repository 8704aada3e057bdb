//! Errors of the pure core.

/// Input that does not meet the contract (the caller reports it as bad input).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{path}: {message}")]
pub struct InputError {
    /// JSON path of the offending value, relative to the input it came from.
    pub path: String,
    /// What is wrong, as a sentence.
    pub message: String,
}

impl InputError {
    /// Builds an error at `path`.
    pub fn new(path: impl Into<String>, message: impl Into<String>) -> InputError {
        InputError {
            path: path.into(),
            message: message.into(),
        }
    }
}

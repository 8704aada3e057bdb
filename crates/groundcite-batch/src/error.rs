//! Errors: one bad request ([`LineError`]), or a batch that could not be
//! read or written ([`BatchError`]).

use std::fmt;

/// A request that is bad input: its place, the JSON path of the offending
/// value when known, and what is wrong.
///
/// The message reads after a file name and line (`FILE:LINE: MESSAGE`), as
/// [`LineError::located`] prints it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct LineError {
    /// 1-based line of the batch input; for [`crate::verify_many`] and
    /// [`crate::verify_many_json`], the 1-based position of the item.
    pub line: usize,
    /// 1-based column within the line, when the JSON parser knows it.
    pub column: Option<usize>,
    /// JSON path of the offending value, when known (`chunks[1].content`,
    /// `.chunks[0].chunk_id`, `.trace_id`).
    pub path: Option<String>,
    /// What is wrong.
    pub message: String,
}

impl LineError {
    /// `FILE:LINE[:COLUMN][: at PATH]: MESSAGE`, the CLI's form.
    pub fn located<'a>(&'a self, file: &'a str) -> Located<'a> {
        Located { file, error: self }
    }

    /// The error object that takes the bad request's place in the output:
    /// `{"error": {"code": "bad_input", "line", "path", "message"}}`.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({"error": {
            "code": "bad_input",
            "line": self.line,
            "path": self.path,
            "message": self.message,
        }})
    }
}

impl fmt::Display for LineError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}", self.line)?;
        if let Some(c) = self.column {
            write!(f, ", column {c}")?;
        }
        if let Some(p) = &self.path {
            write!(f, ": at {p}")?;
        }
        write!(f, ": {}", self.message)
    }
}

/// A [`LineError`] shown with its file name; see [`LineError::located`].
#[derive(Debug, Clone, Copy)]
pub struct Located<'a> {
    file: &'a str,
    error: &'a LineError,
}

impl fmt::Display for Located<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let e = self.error;
        write!(f, "{}:{}", self.file, e.line)?;
        if let Some(c) = e.column {
            write!(f, ":{c}")?;
        }
        if let Some(p) = &e.path {
            write!(f, ": at {p}")?;
        }
        write!(f, ": {}", e.message)
    }
}

/// Why a streamed batch stopped. Bad requests do not stop it: they are
/// reported in place and in [`crate::Summary::bad`].
#[derive(Debug, thiserror::Error)]
pub enum BatchError {
    /// Reading the input failed in the block starting at `line`.
    #[error("cannot read the batch input (at line {line})")]
    Read {
        /// 1-based first line of the block being read.
        line: usize,
        /// The reader's error.
        #[source]
        source: std::io::Error,
    },
    /// Writing the output failed (a closed pipe, a full disk).
    #[error("writing the batch output")]
    Write(#[source] std::io::Error),
    /// The reader thread panicked.
    #[error("the batch reader thread panicked")]
    ReaderPanicked,
}

//! Reading hostile input: files or stdin, JSON or JSON Lines, with errors
//! that name the file, line and JSON path.

use std::fmt;
use std::io::Read;

use groundcite_core::{Chunk, ChunkSet, GroundedAnswer};
use serde::de::DeserializeOwned;

/// Input that cannot be used; the CLI exits with code 2.
#[derive(Debug)]
pub struct BadInput {
    /// File name as given (`-` is shown as `<stdin>`).
    pub file: String,
    /// 1-based line, when known.
    pub line: Option<usize>,
    /// 1-based column, when known.
    pub column: Option<usize>,
    /// JSON path of the offending value, when known.
    pub path: Option<String>,
    /// What is wrong.
    pub message: String,
}

impl BadInput {
    pub fn new(file: &str, message: impl Into<String>) -> BadInput {
        BadInput {
            file: file.to_string(),
            line: None,
            column: None,
            path: None,
            message: message.into(),
        }
    }
}

impl fmt::Display for BadInput {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file)?;
        if let Some(l) = self.line {
            write!(f, ":{l}")?;
            if let Some(c) = self.column {
                write!(f, ":{c}")?;
            }
        }
        if let Some(p) = &self.path {
            write!(f, ": at {p}")?;
        }
        write!(f, ": {}", self.message)
    }
}

impl std::error::Error for BadInput {}

/// A setting that cannot be used is bad input (exit 2), shown the same way.
impl From<groundcite_app::SettingsError> for BadInput {
    fn from(e: groundcite_app::SettingsError) -> BadInput {
        match e {
            groundcite_app::SettingsError::File {
                file,
                line,
                column,
                key,
                message,
            } => BadInput {
                file,
                line,
                column,
                path: key,
                message,
            },
            other => BadInput::new(other.subject(), other.message()),
        }
    }
}

/// Display name of an input argument.
pub fn display_name(path: &str) -> String {
    if path == "-" {
        "<stdin>".to_string()
    } else {
        path.to_string()
    }
}

/// Reads a whole file (or stdin for `-`) as UTF-8.
pub fn read_text(path: &str) -> Result<String, BadInput> {
    let name = display_name(path);
    let mut bytes = Vec::new();
    let res = if path == "-" {
        std::io::stdin().lock().read_to_end(&mut bytes)
    } else {
        std::fs::File::open(path).and_then(|mut f| f.read_to_end(&mut bytes))
    };
    res.map_err(|e| BadInput::new(&name, format!("cannot read: {e}")))?;
    String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        let line = e.as_bytes()[..at].iter().filter(|&&b| b == b'\n').count() + 1;
        BadInput {
            line: Some(line),
            ..BadInput::new(&name, format!("is not valid UTF-8 (byte offset {at})"))
        }
    })
}

/// Parses one JSON document into `T`, rejecting trailing content; errors
/// carry line/column relative to `text` and the JSON path.
pub fn parse_json<T: DeserializeOwned>(file: &str, text: &str) -> Result<T, BadInput> {
    // Fast path: plain serde_json. Only a failure pays for path tracking.
    if let Ok(value) = serde_json::from_str(text) {
        return Ok(value);
    }
    let mut de = serde_json::Deserializer::from_str(text);
    let value = serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        json_error(file, &inner, (path != ".").then_some(path))
    })?;
    de.end().map_err(|e| json_error(file, &e, None))?;
    // Unreachable in practice: the fast path accepted nothing, yet the
    // tracked parse succeeded. Keep the value rather than invent an error.
    Ok(value)
}

fn json_error(file: &str, e: &serde_json::Error, path: Option<String>) -> BadInput {
    // serde_json appends " at line L column C"; we report those separately.
    let msg = e.to_string();
    let msg = msg
        .rsplit_once(" at line ")
        .map_or(msg.as_str(), |(m, _)| m)
        .to_string();
    BadInput {
        file: file.to_string(),
        line: (e.line() > 0).then_some(e.line()),
        column: (e.column() > 0).then_some(e.column()),
        path,
        message: msg,
    }
}

/// Reads chunks: a JSON array of chunk objects, or JSON Lines (one chunk per line).
pub fn read_chunks(path: &str) -> Result<ChunkSet, BadInput> {
    let name = display_name(path);
    let text = read_text(path)?;
    parse_chunks(&name, &text)
}

/// Parses chunks from text already read (array or JSON Lines), validated as a set.
pub fn parse_chunks(name: &str, text: &str) -> Result<ChunkSet, BadInput> {
    let trimmed = text.trim_start_matches(['\u{feff}', ' ', '\t', '\r', '\n']);
    let (chunks, lines): (Vec<Chunk>, Option<Vec<usize>>) = if trimmed.starts_with('[') {
        (parse_json(name, text)?, None)
    } else {
        let mut chunks = Vec::new();
        let mut lines = Vec::new();
        for (i, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let chunk: Chunk = parse_json(name, line).map_err(|mut e| {
                e.line = Some(i + 1);
                e
            })?;
            chunks.push(chunk);
            lines.push(i + 1);
        }
        (chunks, Some(lines))
    };
    if chunks.is_empty() && text.trim().is_empty() {
        return Err(BadInput::new(
            name,
            "is empty; expected a JSON array of chunks or JSON Lines",
        ));
    }
    ChunkSet::new(chunks).map_err(|e| {
        // Map "[i].field" back to the line of chunk i for JSON Lines input.
        let idx: Option<usize> = e
            .path
            .strip_prefix('[')
            .and_then(|r| r.split(']').next())
            .and_then(|n| n.parse().ok());
        let line = match (&lines, idx) {
            (Some(l), Some(i)) => l.get(i).copied(),
            _ => None,
        };
        BadInput {
            line,
            path: Some(e.path),
            ..BadInput::new(name, e.message)
        }
    })
}

/// Reads the model's structured answer (one JSON object).
pub fn read_answer(path: &str) -> Result<GroundedAnswer, BadInput> {
    let name = display_name(path);
    let text = read_text(path)?;
    parse_json(&name, &text)
}

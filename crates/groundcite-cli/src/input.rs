//! Reading hostile input: files or stdin, JSON or JSON Lines, with errors
//! that name the file, line and JSON path.

use std::io::Read;

use groundcite_core::{Chunk, ChunkSet, GroundedAnswer};

pub use groundcite_core::json::{BadInput, parse_json};

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
    groundcite_core::json::utf8_owned(&name, bytes)
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

//! One request: parsing a batch line (fast path, then slow path) and
//! verifying it.

use groundcite_core::{
    Chunk, ChunkSet, Contract, GroundedAnswer, Provenance, validate_trace_id, verify_with,
};
use serde::{Deserialize, Serialize};

use crate::{LineError, Options};

/// One request of a batch: a line of `groundcite verify --batch`'s input.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Request {
    /// The user's question, copied into the contract.
    #[serde(default)]
    pub question: Option<String>,
    /// The retrieved chunks the answer may cite.
    pub chunks: Vec<Chunk>,
    /// The model's answer.
    pub answer: GroundedAnswer,
    /// Trace ID for the contract; a fresh one from [`crate::Stamp`] when absent.
    #[serde(default)]
    pub trace_id: Option<String>,
    /// The model that answered; [`Options::model`] when absent.
    #[serde(default)]
    pub model: Option<String>,
}

/// Verifies one batch line (`raw`: its bytes, with or without the final
/// `\n`); `line` is its 1-based number, for errors. `Ok(None)` for a blank
/// line, which a batch skips.
pub fn verify_line(
    raw: &[u8],
    line: usize,
    options: &Options,
) -> Result<Option<Contract>, LineError> {
    // Fast path (see `parse_fast`); only a failure pays for path tracking,
    // to name the error precisely.
    let trimmed = raw.strip_suffix(b"\n").unwrap_or(raw);
    let parsed = if trimmed.iter().all(u8::is_ascii_whitespace) {
        None
    } else {
        parse_fast(trimmed)
    };
    let request = match parsed {
        Some(request) => request,
        None => match parse_slow(raw, line)? {
            Some(request) => request,
            None => return Ok(None),
        },
    };
    verify_request(request, line, options).map(Some)
}

/// Verifies one parsed request; `line` is its 1-based number, for errors
/// (an invalid chunk ID, a duplicate chunk ID, an invalid trace ID).
pub fn verify_request(
    request: Request,
    line: usize,
    options: &Options,
) -> Result<Contract, LineError> {
    let chunks = ChunkSet::new(request.chunks).map_err(|e| LineError {
        line,
        column: None,
        path: Some(format!(".chunks{}", e.path)),
        message: e.message,
    })?;
    if let Some(id) = &request.trace_id {
        validate_trace_id(id).map_err(|m| LineError {
            line,
            column: None,
            path: Some(".trace_id".into()),
            message: m.to_string(),
        })?;
    }
    Ok(verify_with(
        &request.answer,
        &chunks,
        options.profile,
        options.policy,
        Provenance {
            trace_id: request
                .trace_id
                .unwrap_or_else(|| (options.stamp.trace_id)()),
            created_at: (options.stamp.created_at)(),
            question: request.question,
            model: request.model.or_else(|| options.model.clone()),
        },
    ))
}

/// A batch line whose chunk contents are left undecoded.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct LazyRequest<'a> {
    #[serde(default)]
    question: Option<String>,
    #[serde(borrow)]
    chunks: Vec<LazyChunk<'a>>,
    answer: GroundedAnswer,
    #[serde(default)]
    trace_id: Option<String>,
    #[serde(default)]
    model: Option<String>,
}

/// [`Chunk`] with its content as raw JSON (unknown fields ignored, as there).
#[derive(Debug, Deserialize)]
struct LazyChunk<'a> {
    chunk_id: String,
    #[serde(borrow)]
    content: &'a serde_json::value::RawValue,
    #[serde(default)]
    source_title: Option<String>,
    #[serde(default)]
    source_url: Option<String>,
    #[serde(default)]
    page_number: Option<u32>,
    #[serde(default)]
    score: Option<f64>,
}

/// Parses a batch line, decoding only the contents of the chunks the answer
/// cites: the others are never read again (sources list cited chunks only),
/// so they are checked to be JSON strings but not copied. A content with a
/// `\u` escape is decoded anyway, so that invalid escapes (lone surrogates)
/// are rejected whether or not the chunk is cited. `None` means "take the
/// slow path", which reports the error.
pub(crate) fn parse_fast(line: &[u8]) -> Option<Request> {
    // SIMD validation: std's is several times slower on text with scattered
    // non-ASCII characters (curly quotes, dashes), and every byte passes here.
    let text = simdutf8::basic::from_utf8(line).ok()?;
    let lazy: LazyRequest<'_> = serde_json::from_str(text).ok()?;
    // A handful of IDs: a linear scan beats hashing them.
    let mut cited: Vec<&str> = Vec::new();
    for x in lazy.answer.claims.iter().flat_map(|c| &c.citations) {
        if !cited.contains(&x.chunk_id.as_str()) {
            cited.push(&x.chunk_id);
        }
    }
    let unicode_escape = memchr::memmem::Finder::new(b"\\u");
    let mut chunks = Vec::with_capacity(lazy.chunks.len());
    for c in lazy.chunks {
        let raw = c.content.get();
        if !raw.starts_with('"') {
            return None;
        }
        let content = if unicode_escape.find(raw.as_bytes()).is_some() {
            // serde_json decodes `\u` escapes and rejects lone surrogates.
            serde_json::from_str::<String>(raw).ok()?
        } else if cited.contains(&c.chunk_id.as_str()) {
            unescape_simple(raw)?
        } else {
            String::new()
        };
        chunks.push(Chunk {
            chunk_id: c.chunk_id,
            content,
            source_title: c.source_title,
            source_url: c.source_url,
            page_number: c.page_number,
            score: c.score,
        });
    }
    Some(Request {
        question: lazy.question,
        chunks,
        answer: lazy.answer,
        trace_id: lazy.trace_id,
        model: lazy.model,
    })
}

/// Decodes a JSON string literal that serde_json has already checked and that
/// has no `\u` escape: the remaining escapes are one character each, so a
/// `memchr` over backslashes copies the text between them in bulk (about
/// twice as fast as decoding it again with serde_json). `None` on anything
/// unexpected, which sends the line to the slow path.
pub(crate) fn unescape_simple(raw: &str) -> Option<String> {
    let mut rest = raw.strip_prefix('"')?.strip_suffix('"')?;
    let mut out = String::with_capacity(rest.len());
    while let Some(at) = memchr::memchr(b'\\', rest.as_bytes()) {
        out.push_str(&rest[..at]);
        out.push(match rest.as_bytes().get(at + 1)? {
            b'"' => '"',
            b'\\' => '\\',
            b'/' => '/',
            b'b' => '\u{8}',
            b'f' => '\u{c}',
            b'n' => '\n',
            b'r' => '\r',
            b't' => '\t',
            _ => return None,
        });
        // The escape is two ASCII bytes: `at + 2` is a character boundary.
        rest = &rest[at + 2..];
    }
    out.push_str(rest);
    Some(out)
}

/// Parses a batch line that the fast path rejected, for a precise error;
/// `Ok(None)` for a blank line.
pub(crate) fn parse_slow(raw: &[u8], line: usize) -> Result<Option<Request>, LineError> {
    let text = std::str::from_utf8(raw).map_err(|e| LineError {
        line,
        column: None,
        path: None,
        message: format!("is not valid UTF-8 (byte {} of the line)", e.valid_up_to()),
    })?;
    let text = text.strip_suffix('\n').unwrap_or(text);
    let text = text.strip_suffix('\r').unwrap_or(text);
    if text.trim().is_empty() {
        return Ok(None);
    }
    parse_json(text, line).map(Some)
}

/// Parses one JSON document, rejecting trailing content; errors carry the
/// column and the JSON path (the rule of every input path:
/// `groundcite_core::json`).
fn parse_json(text: &str, line: usize) -> Result<Request, LineError> {
    // A batch line's errors name the line, not a source.
    groundcite_core::json::parse_json("", text).map_err(|e| LineError {
        line,
        column: e.column,
        path: e.path,
        message: e.message,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stamp_id() -> String {
        "t-fresh".into()
    }
    fn stamp_time() -> String {
        "2026-01-01T00:00:00.000Z".into()
    }
    fn options() -> Options {
        Options::new(crate::Stamp {
            trace_id: stamp_id,
            created_at: stamp_time,
        })
    }

    #[test]
    fn unescape_simple_decodes_one_character_escapes() {
        assert_eq!(
            unescape_simple(r#""a\"b\\c\/d\be\ff\ng\rh\ti""#).as_deref(),
            Some("a\"b\\c/d\u{8}e\u{c}f\ng\rh\ti")
        );
        assert_eq!(
            unescape_simple(r#""plain – text""#).as_deref(),
            Some("plain – text")
        );
        assert_eq!(unescape_simple(r#""""#).as_deref(), Some(""));
        // Anything else goes to the slow path.
        assert_eq!(unescape_simple(r#""\u0041""#), None);
        assert_eq!(unescape_simple("no quotes"), None);
        assert_eq!(unescape_simple(r#""dangling\"#), None);
    }

    /// The fast parser agrees with serde_json on the chunks the answer cites
    /// and on every other field.
    #[test]
    fn fast_and_slow_parsers_agree_on_what_is_read() {
        let line = r#"{"question": "q", "model": "m", "trace_id": "t-1", "chunks": [
            {"chunk_id": "c1", "content": "tab\there \"quoted\" \\ slash\/", "source_title": "T", "page_number": 3, "score": 0.5, "extra": 1},
            {"chunk_id": "c2", "content": "snow \u2603 man"},
            {"chunk_id": "c3", "content": "never cited"}],
            "answer": {"answerable": true, "claims": [{"text": "x", "citations": [{"chunk_id": "c1", "quote": "here"}]}]}}"#
            .replace('\n', " ");
        let fast = parse_fast(line.as_bytes()).unwrap();
        let slow = parse_slow(line.as_bytes(), 1).unwrap().unwrap();
        assert_eq!(fast.chunks[0], slow.chunks[0]);
        assert_eq!(fast.chunks[1], slow.chunks[1]);
        // An uncited content without `\u` escapes is checked, not decoded.
        assert_eq!(fast.chunks[2].content, "");
        assert_eq!(slow.chunks[2].content, "never cited");
        assert_eq!(
            (&fast.question, &fast.model, &fast.trace_id, &fast.answer),
            (&slow.question, &slow.model, &slow.trace_id, &slow.answer)
        );
    }

    #[test]
    fn blank_lines_are_skipped() {
        for raw in [&b""[..], b"\n", b"  \t\r\n", b"\r\n"] {
            assert_eq!(verify_line(raw, 1, &options()), Ok(None), "{raw:?}");
        }
    }

    #[test]
    fn errors_name_line_column_path_and_message() {
        let o = options();
        let e = verify_line(b"{\"question\": \"broken\", \"chunks\": [}\n", 101, &o).unwrap_err();
        assert_eq!(
            e.located("f.jsonl").to_string(),
            "f.jsonl:101:35: at chunks[0]: expected value"
        );
        assert_eq!(
            e.to_string(),
            "line 101, column 35: at chunks[0]: expected value"
        );

        let e = verify_line(b"{\"chunks\": []}\xff\n", 7, &o).unwrap_err();
        assert_eq!(
            e.located("<stdin>").to_string(),
            "<stdin>:7: is not valid UTF-8 (byte 14 of the line)"
        );

        let answer = r#"{"answerable": false, "claims": []}"#;
        let dup = format!(
            r#"{{"chunks": [{{"chunk_id": "c1", "content": "a"}}, {{"chunk_id": "c1", "content": "b"}}], "answer": {answer}}}"#
        );
        let e = verify_line(dup.as_bytes(), 2, &o).unwrap_err();
        assert_eq!(e.path.as_deref(), Some(".chunks[1].chunk_id"));
        assert!(e.message.starts_with("duplicate chunk_id"), "{e}");

        let bad_id = format!(r#"{{"trace_id": "a b", "chunks": [], "answer": {answer}}}"#);
        let e = verify_line(bad_id.as_bytes(), 3, &o).unwrap_err();
        assert_eq!(e.path.as_deref(), Some(".trace_id"));
        assert_eq!(e.column, None);

        let unknown = format!(r#"{{"chunks": [], "answer": {answer}, "extra": 1}}"#);
        let e = verify_line(unknown.as_bytes(), 4, &o).unwrap_err();
        assert!(e.message.contains("unknown field `extra`"), "{e}");
    }

    /// Uncited chunks are validated as strictly as cited ones.
    #[test]
    fn bad_content_in_uncited_chunks_is_refused() {
        let answer = r#"{"answerable": true, "claims": [{"text": "ok", "citations": [{"chunk_id": "c1", "quote": "refunds"}]}]}"#;
        for (content, needle) in [
            ("42", "expected a string"),
            (r#""\ud800 lone""#, "hex escape"),
        ] {
            let line = format!(
                r#"{{"chunks": [{{"chunk_id": "c1", "content": "refunds"}}, {{"chunk_id": "c2", "content": {content}}}], "answer": {answer}}}"#
            );
            let e = verify_line(line.as_bytes(), 1, &options()).unwrap_err();
            assert!(e.message.contains(needle), "{content}: {e}");
            assert_eq!(
                e.path.as_deref(),
                Some("chunks[1].content"),
                "{content}: {e}"
            );
        }
    }

    #[test]
    fn stamps_and_default_model_fill_what_the_request_lacks() {
        let line = br#"{"chunks": [{"chunk_id": "c1", "content": "Refunds within 30 days."}], "answer": {"answerable": true, "claims": [{"text": "Refunds within 30 days.", "citations": [{"chunk_id": "c1", "quote": "refunds within 30 days"}]}]}}"#;
        let mut o = options();
        o.model = Some("default-model".into());
        let c = verify_line(line, 1, &o).unwrap().unwrap();
        let v = serde_json::to_value(&c).unwrap();
        assert_eq!(v["trace_id"], "t-fresh");
        assert_eq!(v["created_at"], "2026-01-01T00:00:00.000Z");
        assert_eq!(v["model"], "default-model");
        assert_eq!(v["answerable"], true);
    }
}

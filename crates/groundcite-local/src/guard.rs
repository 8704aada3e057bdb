//! The repeat guard: a small model under a JSON grammar can write the same
//! claim again and again until its token limit. The guard follows the JSON
//! structure of the output as it is decoded, holds back the element of the
//! outermost array that is still being written (a claim of `claims`), and
//! when an element closes byte for byte equal to an earlier one, cuts the
//! output back to the end of the last kept element and closes the JSON.
//!
//! Because the element being written is held back, a reader never sees a
//! claim that is later cut: what was released is always a prefix of the
//! final output.

/// What to do after a repeat: keep `keep` bytes, then append `closers`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cut {
    /// Bytes of the output to keep (up to the end of the last element kept,
    /// or just after the array's opening bracket).
    pub keep: usize,
    /// The brackets that close the containers open at `keep`, innermost
    /// first.
    pub closers: String,
}

/// Tells a JSON text's string bytes from its structure, a byte at a time
/// (the guard and the decoder's closing mode both need it).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct JsonLexer {
    in_string: bool,
    escape: bool,
}

impl JsonLexer {
    /// Feeds one byte; returns it when it is structure: outside a string
    /// (a string's opening quote is, its closing quote is not).
    pub(crate) fn feed(&mut self, b: u8) -> Option<u8> {
        if self.in_string {
            if self.escape {
                self.escape = false;
            } else if b == b'\\' {
                self.escape = true;
            } else if b == b'"' {
                self.in_string = false;
            }
            return None;
        }
        if b == b'"' {
            self.in_string = true;
        }
        Some(b)
    }

    /// Whether the bytes fed so far end inside a string.
    pub(crate) fn in_string(self) -> bool {
        self.in_string
    }
}

/// Follows the output's JSON structure (see the module docs).
#[derive(Debug, Default)]
pub struct RepeatGuard {
    /// Open containers, outermost first: `b'{'` or `b'['`.
    stack: Vec<u8>,
    lexer: JsonLexer,
    /// Depth (stack length) of the outermost open array, once one is open.
    array_depth: Option<usize>,
    /// Whether that array has closed (the guard then has nothing to do).
    array_done: bool,
    /// Where the current element of that array started.
    element_start: Option<usize>,
    /// Byte ranges of the elements already kept in that array.
    elements: Vec<(usize, usize)>,
    /// End of the last kept element, or just after the array's `[`.
    kept_end: usize,
    scanned: usize,
}

impl RepeatGuard {
    /// A guard for one output.
    pub fn new() -> RepeatGuard {
        RepeatGuard::default()
    }

    /// Scans the bytes of `output` (the whole output so far) not scanned
    /// before. Returns the cut to apply when an element of the outermost
    /// array just closed equal to an earlier one.
    pub fn scan(&mut self, output: &[u8]) -> Option<Cut> {
        while self.scanned < output.len() {
            let i = self.scanned;
            self.scanned += 1;
            let Some(b) = self.lexer.feed(output[i]) else {
                continue;
            };
            match b {
                b'"' => self.start_element(i),
                b'{' | b'[' => {
                    self.start_element(i);
                    self.stack.push(b);
                    if b == b'[' && self.array_depth.is_none() && !self.array_done {
                        self.array_depth = Some(self.stack.len());
                        self.kept_end = i + 1;
                    }
                }
                b'}' | b']' => {
                    let depth = self.stack.len();
                    self.stack.pop();
                    if self.array_depth == Some(depth) {
                        // The array itself closes: a scalar last element
                        // ends here.
                        if let Some(cut) = self.end_element(output, i) {
                            return Some(cut);
                        }
                        self.array_depth = None;
                        self.array_done = true;
                    } else if self.array_depth == Some(depth - 1)
                        && let Some(cut) = self.end_element(output, i + 1)
                    {
                        // An object or array element closes with its own
                        // bracket: it is whole now, not at the next comma.
                        return Some(cut);
                    }
                }
                b',' => {
                    if self.array_depth == Some(self.stack.len())
                        && let Some(cut) = self.end_element(output, i)
                    {
                        return Some(cut);
                    }
                }
                b if b.is_ascii_whitespace() => {}
                // A scalar (number, true, false, null) starts an element.
                _ => self.start_element(i),
            }
        }
        None
    }

    /// How many bytes of the output a reader may see now: while the
    /// outermost array is open, up to the end of its last kept element (a
    /// separator is shown with the element after it).
    pub fn releasable(&self, output_len: usize) -> usize {
        if self.array_depth.is_some() {
            self.kept_end.min(output_len)
        } else {
            output_len
        }
    }

    /// Elements of the outermost array closed (and kept) so far.
    pub fn elements_kept(&self) -> usize {
        self.elements.len()
    }

    fn start_element(&mut self, at: usize) {
        if self.array_depth.is_some()
            && self.array_depth == Some(self.stack.len())
            && self.element_start.is_none()
        {
            self.element_start = Some(at);
        }
    }

    /// Ends the current element at `end` (exclusive; the separator or the
    /// closing bracket is not part of it).
    fn end_element(&mut self, output: &[u8], end: usize) -> Option<Cut> {
        let start = self.element_start.take()?;
        let this = output[start..end].trim_ascii();
        if self
            .elements
            .iter()
            .any(|&(s, e)| output[s..e].trim_ascii() == this)
        {
            // The containers open at the array: the array and its parents.
            let depth = self.array_depth.unwrap_or(0);
            let closers = self.stack_at(depth);
            return Some(Cut {
                keep: self.kept_end,
                closers,
            });
        }
        self.elements.push((start, end));
        self.kept_end = end;
        None
    }

    /// Closers for the first `depth` open containers (innermost first).
    fn stack_at(&self, depth: usize) -> String {
        let mut open: Vec<u8> = self.stack.iter().take(depth).copied().collect();
        // When the cut happens at the array's own closing bracket, the stack
        // has already popped it.
        if open.len() < depth {
            open.push(b'[');
        }
        open.iter()
            .rev()
            .map(|&b| if b == b'{' { '}' } else { ']' })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feeds `text` in pieces of `step` bytes; returns the final output and
    /// the longest prefix released before the end.
    fn run(text: &str, step: usize) -> (String, String) {
        let mut guard = RepeatGuard::new();
        let mut out: Vec<u8> = Vec::new();
        let mut released = 0;
        for piece in text.as_bytes().chunks(step) {
            out.extend_from_slice(piece);
            if let Some(cut) = guard.scan(&out) {
                assert!(cut.keep >= released, "released bytes were cut");
                out.truncate(cut.keep);
                out.extend_from_slice(cut.closers.as_bytes());
                return (String::from_utf8(out).unwrap_or_default(), String::new());
            }
            released = released.max(guard.releasable(out.len()));
        }
        let released = String::from_utf8_lossy(&out[..released]).into_owned();
        (String::from_utf8(out).unwrap_or_default(), released)
    }

    #[test]
    fn a_repeated_claim_is_cut_and_the_json_closed() {
        let a = r#"{"text": "A.", "citations": [{"quote": "A.", "chunk_id": "x"}]}"#;
        let b = r#"{"text": "B, [x]", "citations": []}"#;
        let text = format!(r#"{{"answerable": true, "claims": [{a}, {b}, {a}, {a}"#);
        for step in [1, 3, 7, 1000] {
            let (out, _) = run(&text, step);
            assert_eq!(
                out,
                format!(r#"{{"answerable": true, "claims": [{a}, {b}]}}"#),
                "step {step}"
            );
            let v: serde_json::Value = serde_json::from_str(&out).expect("valid JSON");
            assert_eq!(v["claims"].as_array().map(Vec::len), Some(2));
        }
    }

    #[test]
    fn a_repeat_at_the_array_end_is_cut_too() {
        let text = r#"{"answerable": true, "claims": [{"t": 1}, {"t": 1}]}"#;
        let (out, _) = run(text, 1);
        assert_eq!(out, r#"{"answerable": true, "claims": [{"t": 1}]}"#);
        let text = r#"[1, 2, 2"#;
        assert_eq!(run(&format!("{text}]"), 1).0, "[1, 2]");
    }

    #[test]
    fn distinct_elements_pass_and_the_open_one_is_held_back() {
        let text = r#"{"answerable": true, "claims": [{"t": "a"}, {"t": "b"}]}"#;
        let (out, released) = run(text, 1);
        assert_eq!(out, text);
        assert_eq!(released, text);
        let mut guard = RepeatGuard::new();
        let partial = br#"{"answerable": true, "claims": [{"t": "a"}, {"t": "#;
        assert_eq!(guard.scan(partial), None);
        let shown = &partial[..guard.releasable(partial.len())];
        assert_eq!(shown, br#"{"answerable": true, "claims": [{"t": "a"}"#);
        let mut guard = RepeatGuard::new();
        let partial = br#"{"answerable": true, "claims": ["#;
        assert_eq!(guard.scan(partial), None);
        assert_eq!(guard.releasable(partial.len()), partial.len());
        // Brackets and commas inside strings are text.
        let text = r#"{"claims": [{"t": "a], {\"t\""}, {"t": "a]"}]}"#;
        assert_eq!(run(text, 2).0, text);
    }
}

//! The little Markdown the chunker needs: lines, ATX headings, code fences.
//!
//! Everything here works on byte offsets into the original text and never
//! copies it, so chunk boundaries stay exact substrings of the source.

/// One line of the source: `start..end` excludes the line terminator
/// (`\n` or `\r\n`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Line {
    pub(crate) start: usize,
    pub(crate) end: usize,
}

/// Splits `text[from..]` into lines; a final line without terminator counts.
pub(crate) fn lines(text: &str, from: usize) -> Vec<Line> {
    let mut out = Vec::new();
    let mut start = from;
    while start < text.len() {
        let (end, next) = match text[start..].find('\n') {
            Some(i) => {
                let nl = start + i;
                let end = if text[start..nl].ends_with('\r') {
                    nl - 1
                } else {
                    nl
                };
                (end, nl + 1)
            }
            None => (text.len(), text.len()),
        };
        out.push(Line { start, end });
        start = next;
    }
    out
}

/// Strips up to three leading spaces, as CommonMark allows before a block.
fn strip_indent(line: &str) -> Option<&str> {
    let spaces = line.bytes().take_while(|&b| b == b' ').count();
    (spaces <= 3).then(|| &line[spaces..])
}

/// An ATX heading (`## Title ##`): its level (1 to 6) and its text, trimmed,
/// without the closing `#` sequence. `None` when `line` is not a heading.
pub(crate) fn atx_heading(line: &str) -> Option<(usize, &str)> {
    let rest = strip_indent(line)?;
    let level = rest.bytes().take_while(|&b| b == b'#').count();
    if !(1..=6).contains(&level) {
        return None;
    }
    let after = &rest[level..];
    if !(after.is_empty() || after.starts_with(' ') || after.starts_with('\t')) {
        return None;
    }
    let mut text = after.trim();
    // A closing sequence is a run of `#` preceded by a space (or the whole text).
    let without_hashes = text.trim_end_matches('#');
    if without_hashes.is_empty() {
        text = "";
    } else if without_hashes.len() != text.len()
        && (without_hashes.ends_with(' ') || without_hashes.ends_with('\t'))
    {
        text = without_hashes.trim_end();
    }
    Some((level, text))
}

/// An opening code fence: its character and run length.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Fence {
    ch: u8,
    len: usize,
}

/// `Some` when `line` opens a fenced code block (```` ``` ```` or `~~~`).
pub(crate) fn fence_open(line: &str) -> Option<Fence> {
    let rest = strip_indent(line)?;
    let ch = *rest.as_bytes().first()?;
    if ch != b'`' && ch != b'~' {
        return None;
    }
    let len = rest.bytes().take_while(|&b| b == ch).count();
    if len < 3 {
        return None;
    }
    // A backtick fence's info string may not contain a backtick.
    if ch == b'`' && rest[len..].contains('`') {
        return None;
    }
    Some(Fence { ch, len })
}

/// Whether `line` closes the block opened by `fence`.
pub(crate) fn fence_closes(line: &str, fence: Fence) -> bool {
    let Some(rest) = strip_indent(line) else {
        return false;
    };
    let len = rest.bytes().take_while(|&b| b == fence.ch).count();
    len >= fence.len && rest[len..].trim().is_empty()
}

/// Whether a line holds nothing but white space.
pub(crate) fn is_blank(line: &str) -> bool {
    line.trim().is_empty()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headings() {
        assert_eq!(atx_heading("# Title"), Some((1, "Title")));
        assert_eq!(atx_heading("   ### Deep ###"), Some((3, "Deep")));
        assert_eq!(atx_heading("## C# tips"), Some((2, "C# tips")));
        assert_eq!(atx_heading("## Issue #5"), Some((2, "Issue #5")));
        assert_eq!(atx_heading("#"), Some((1, "")));
        assert_eq!(atx_heading("## ##"), Some((2, "")));
        assert_eq!(atx_heading("#hashtag"), None);
        assert_eq!(atx_heading("    # code"), None);
        assert_eq!(atx_heading("####### seven"), None);
        assert_eq!(atx_heading("plain"), None);
    }

    #[test]
    fn fences() {
        let f = fence_open("```rust").unwrap();
        assert!(fence_closes("```", f));
        assert!(fence_closes("  `````  ", f));
        assert!(!fence_closes("~~~", f));
        assert!(!fence_closes("``", f));
        assert!(fence_open("``").is_none());
        assert!(fence_open("``` a ` b").is_none());
        assert!(fence_open("~~~ a ` b").is_some());
    }

    #[test]
    fn line_splitting() {
        let text = "a\r\nb\n\nc";
        let got: Vec<&str> = lines(text, 0)
            .iter()
            .map(|l| &text[l.start..l.end])
            .collect();
        assert_eq!(got, ["a", "b", "", "c"]);
        assert!(lines("", 0).is_empty());
    }
}

//! Lines and blocks: fenced code, list items, headings, definition lines,
//! and the trailing reference section.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum LineKind {
    Blank,
    Code,
    Fence,
    Heading,
    ListItem,
    Table,
    Text,
    /// `[^label]: …`
    FootnoteDef,
    /// `[12]: …`
    Legend,
}

#[derive(Debug, Clone)]
pub(super) struct Line {
    pub(super) start: usize,
    pub(super) end: usize,
    pub(super) kind: LineKind,
    /// Where the content starts (after the bullet, the `#`s, the label).
    pub(super) content: usize,
    /// Footnote label, legend number or list number.
    pub(super) label: Option<String>,
}

pub(super) fn classify_lines(text: &str) -> Vec<Line> {
    let mut lines = Vec::new();
    let mut fence: Option<(u8, usize)> = None;
    let mut start = 0;
    while start <= text.len() {
        let nl = text[start..].find('\n').map_or(text.len(), |i| start + i);
        let mut end = nl;
        if end > start && text.as_bytes()[end - 1] == b'\r' {
            end -= 1;
        }
        let raw = &text[start..end];
        let indent = raw.len() - raw.trim_start().len();
        let t = raw.trim_start();
        let content = start + indent;
        let mut line = Line {
            start,
            end,
            kind: LineKind::Text,
            content,
            label: None,
        };
        let fence_run = |t: &str| -> Option<(u8, usize)> {
            let b = t.as_bytes().first().copied()?;
            if b != b'`' && b != b'~' {
                return None;
            }
            let n = t.bytes().take_while(|&c| c == b).count();
            (n >= 3).then_some((b, n))
        };
        if let Some((fc, fl)) = fence {
            match fence_run(t) {
                Some((c, n)) if c == fc && n >= fl && t[n..].trim().is_empty() => {
                    line.kind = LineKind::Fence;
                    fence = None;
                }
                _ => line.kind = LineKind::Code,
            }
        } else if let Some((c, n)) = fence_run(t) {
            // A backtick fence's info string cannot contain backticks.
            if c == b'~' || !t[n..].contains('`') {
                line.kind = LineKind::Fence;
                fence = Some((c, n));
            }
        }
        if line.kind == LineKind::Text {
            classify_text_line(t, content, &mut line);
        }
        lines.push(line);
        if nl == text.len() {
            break;
        }
        start = nl + 1;
    }
    lines
}

fn classify_text_line(t: &str, content: usize, line: &mut Line) {
    let b = t.as_bytes();
    if t.trim().is_empty() {
        line.kind = LineKind::Blank;
        return;
    }
    let hashes = b.iter().take_while(|&&c| c == b'#').count();
    if (1..=6).contains(&hashes) && (b.len() == hashes || b[hashes] == b' ' || b[hashes] == b'\t') {
        line.kind = LineKind::Heading;
        line.content = content + hashes + (t[hashes..].len() - t[hashes..].trim_start().len());
        return;
    }
    if b[0] == b'|' {
        line.kind = LineKind::Table;
        return;
    }
    if let Some(rest) = t.strip_prefix("[^")
        && let Some(close) = rest.find("]:")
    {
        let label = &rest[..close];
        if !label.is_empty()
            && label.len() <= 64
            && !label.contains(char::is_whitespace)
            && !label.contains(']')
        {
            line.kind = LineKind::FootnoteDef;
            line.label = Some(label.to_string());
            let after = &rest[close + 2..];
            line.content = content + 2 + close + 2 + (after.len() - after.trim_start().len());
            return;
        }
    }
    if b[0] == b'['
        && let Some(close) = t.find("]:")
    {
        let label = &t[1..close];
        if (1..=3).contains(&label.len()) && label.bytes().all(|c| c.is_ascii_digit()) {
            line.kind = LineKind::Legend;
            line.label = Some(label.to_string());
            let after = &t[close + 2..];
            line.content = content + close + 2 + (after.len() - after.trim_start().len());
            return;
        }
    }
    // Bullets.
    if let Some(rest) = t
        .strip_prefix("- ")
        .or_else(|| t.strip_prefix("* "))
        .or_else(|| t.strip_prefix("+ "))
        .or_else(|| t.strip_prefix("• "))
    {
        line.kind = LineKind::ListItem;
        line.content = content + (t.len() - rest.trim_start().len());
        return;
    }
    // Ordered items: 1. / 1)
    let digits = b.iter().take_while(|c| c.is_ascii_digit()).count();
    if (1..=3).contains(&digits)
        && b.len() > digits + 1
        && (b[digits] == b'.' || b[digits] == b')')
        && (b[digits + 1] == b' ' || b[digits + 1] == b'\t')
    {
        line.kind = LineKind::ListItem;
        line.label = Some(t[..digits].to_string());
        let rest = &t[digits + 1..];
        line.content = content + digits + 1 + (rest.len() - rest.trim_start().len());
    }
}

/// Whether a line is a reference-section heading; returns the text of a
/// one-line section (`Sources: a; b`), empty for a heading alone.
fn section_heading(line: &str) -> Option<&str> {
    let mut t = line.trim();
    t = t.trim_start_matches('#').trim();
    let strip_emph =
        |s: &str| -> String { s.trim_matches(|c| c == '*' || c == '_').trim().to_string() };
    let (head, rest) = match t.find(':') {
        Some(i) => (&t[..i], &t[i + 1..]),
        None => (t, ""),
    };
    let head = strip_emph(head).to_lowercase();
    let keyword = matches!(
        head.as_str(),
        "sources"
            | "source"
            | "references"
            | "reference"
            | "citations"
            | "citation"
            | "bibliography"
            | "works cited"
            | "sources used"
            | "cited sources"
            | "source documents"
    );
    if !keyword {
        return None;
    }
    let rest = rest.trim().trim_matches(|c| c == '*' || c == '_').trim();
    Some(rest)
}

/// The reference section found at the end of the answer.
pub(super) struct Section<'t> {
    pub(super) items: Vec<usize>,
    pub(super) inline: &'t str,
}

/// Finds the trailing reference section and marks its lines excluded.
pub(super) fn find_section<'t>(
    answer: &'t str,
    lines: &[Line],
    excluded: &mut [bool],
) -> Option<Section<'t>> {
    for idx in (0..lines.len()).rev() {
        let l = &lines[idx];
        if !matches!(l.kind, LineKind::Text | LineKind::Heading) {
            continue;
        }
        let Some(inline) = section_heading(&answer[l.start..l.end]) else {
            continue;
        };
        let mut items = Vec::new();
        let mut end = idx + 1;
        let mut blank_after_item = false;
        for (j, lj) in lines.iter().enumerate().skip(idx + 1) {
            match lj.kind {
                LineKind::Blank => {
                    if !items.is_empty() {
                        blank_after_item = true;
                    }
                    continue;
                }
                LineKind::ListItem | LineKind::FootnoteDef | LineKind::Legend => items.push(j),
                LineKind::Text if !blank_after_item => items.push(j),
                _ => break,
            }
            end = j + 1;
        }
        if items.is_empty() && inline.is_empty() {
            // A lone heading ("Sources") with nothing under it is prose.
            continue;
        }
        for e in excluded.iter_mut().take(end).skip(idx) {
            *e = true;
        }
        return Some(Section { items, inline });
    }
    None
}

/// The answer without the excluded lines (reference section, definitions),
/// runs of blank lines collapsed to one.
pub(super) fn body_text(answer: &str, lines: &[Line], excluded: &[bool]) -> String {
    let mut out = String::new();
    let mut blank = false;
    for (l, &ex) in lines.iter().zip(excluded) {
        if ex {
            continue;
        }
        let text = &answer[l.start..l.end];
        if text.trim().is_empty() {
            blank = true;
            continue;
        }
        if !out.is_empty() {
            out.push_str(if blank { "\n\n" } else { "\n" });
        }
        blank = false;
        out.push_str(text.trim_end());
    }
    out
}

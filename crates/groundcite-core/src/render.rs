//! Plain-text rendering of a contract for terminals.

use std::borrow::Cow;
use std::fmt::Write as _;

use crate::contract::Contract;

/// `s` with every control character (escape sequences, carriage returns,
/// line breaks) replaced by U+FFFD, for one line of a terminal: titles,
/// quotes and links come from documents and providers, and an escape
/// sequence in them must not reach the user's terminal as one.
pub fn terminal_safe(s: &str) -> Cow<'_, str> {
    if s.chars().any(char::is_control) {
        Cow::Owned(
            s.chars()
                .map(|c| if c.is_control() { '\u{FFFD}' } else { c })
                .collect(),
        )
    } else {
        Cow::Borrowed(s)
    }
}

/// One source as the text rendering names it: `title (chunk_id), p. N
/// <url>`, page and link only when known, every part [`terminal_safe`].
pub fn source_label(
    title: Option<&str>,
    chunk_id: &str,
    page: Option<u32>,
    url: Option<&str>,
) -> String {
    let mut out = format!(
        "{} ({})",
        terminal_safe(title.unwrap_or("(untitled)")),
        terminal_safe(chunk_id)
    );
    if let Some(p) = page {
        let _ = write!(out, ", p. {p}");
    }
    if let Some(u) = url {
        let _ = write!(out, " <{}>", terminal_safe(u));
    }
    out
}

/// A verbatim source span for the terminal: each of its lines on a line of
/// its own, indented under the first, so a quoted command block keeps its
/// commands apart (and a hard-wrapped sentence its wrapping); white space
/// inside a line is collapsed, blank lines are dropped, and every line is
/// [`terminal_safe`].
fn span_lines(text: &str) -> String {
    text.lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|l| !l.is_empty())
        .map(|l| terminal_safe(&l).into_owned())
        .collect::<Vec<_>>()
        .join("\n     ")
}

/// Renders the answer with footnotes, the sources with their verbatim
/// source text, and the warnings. Links appear only when the contract has one.
pub fn render_text(c: &Contract) -> String {
    let mut out = String::new();
    // Writing to a String cannot fail.
    for line in c.answer.lines() {
        let _ = writeln!(out, "{}", terminal_safe(line));
    }
    if c.answer.is_empty() {
        out.push('\n');
    }
    if let Some(r) = &c.refusal {
        let _ = writeln!(
            out,
            "\n(refusal {:?}: {})",
            r.code,
            terminal_safe(&r.reason)
        );
    }
    if !c.sources.is_empty() {
        let _ = writeln!(out, "\nSources");
        for s in &c.sources {
            let label = source_label(
                s.source_title.as_deref(),
                &s.chunk_id,
                s.page_number,
                s.source_url.as_deref(),
            );
            let _ = writeln!(out, "[{}] {label}", s.reference);
            for claim in &c.claims {
                for cit in claim
                    .citations
                    .iter()
                    .filter(|x| x.reference == s.reference)
                {
                    if let (Some(text), Some(span)) = (&cit.source_text, cit.span) {
                        // A quoted table row under its column names.
                        if let Some(h) = &cit.table_header {
                            let _ = writeln!(out, "    columns: {}", span_lines(&h.source_text));
                        }
                        let _ = writeln!(
                            out,
                            "    \"{}\" (code points {}..{}, {})",
                            span_lines(text),
                            span.start(),
                            span.end(),
                            cit.kind.as_str()
                        );
                    }
                }
            }
        }
    }
    if !c.warnings.is_empty() {
        let _ = writeln!(out, "\nWarnings ({})", c.warnings.len());
        for w in &c.warnings {
            let _ = writeln!(
                out,
                "  - {}: {}",
                w.code.as_str(),
                terminal_safe(&w.message)
            );
        }
    }
    let _ = writeln!(
        out,
        "\ntrace {} · match profile {}{}",
        c.trace_id,
        c.match_profile.as_str(),
        c.model
            .as_deref()
            .map(|m| format!(" · model {m}"))
            .unwrap_or_default()
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_multi_line_span_keeps_its_lines_and_stays_terminal_safe() {
        assert_eq!(
            span_lines("lp -o page-ranges=1 filename\n\n  lpr   -o page-ranges=1 filename\n"),
            "lp -o page-ranges=1 filename\n     lpr -o page-ranges=1 filename"
        );
        assert_eq!(span_lines("one line"), "one line");
        // Carriage returns end a line; any other control character is
        // replaced, never sent to the terminal.
        assert_eq!(span_lines("a\r\nb\x1b[31m"), "a\n     b\u{FFFD}[31m");
        assert_eq!(span_lines(" \n\n "), "");
    }
}

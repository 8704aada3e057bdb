//! The little AsciiDoc the chunker needs (as Asciidoctor and Antora sites
//! write it): section titles (`= Document`, `== Section`, or Markdown's
//! `#`), the document header (the title's author, revision and attribute
//! lines, which are metadata), listing and literal blocks (code, kept whole
//! as Markdown's fences are), comment and passthrough blocks (left out), and
//! the markup lines of [`is_asciidoc_markup`] (left out).
//!
//! Like the Markdown reader it works on byte offsets into the source, so
//! chunks stay exact substrings of the file.

use groundcite_core::sentences::{asciidoc_title, asciidoc_verbatim, is_asciidoc_markup};

use crate::chunker::Block;
use crate::markdown;

/// The blocks of an AsciiDoc document: headings for section titles,
/// paragraphs (lines up to a blank line) and listing or literal blocks for
/// the rest.
pub(crate) fn blocks(text: &str, from: usize) -> Vec<Block<'_>> {
    let mut out = Vec::new();
    let mut current: Option<(usize, usize)> = None;
    let flush = |current: &mut Option<(usize, usize)>, out: &mut Vec<Block<'_>>| {
        if let Some((start, end)) = current.take() {
            out.push(Block {
                start,
                end,
                heading: None,
            });
        }
    };
    // Inside a verbatim block: its delimiter line, and whether its lines
    // are kept (listing and literal) or left out (comment, passthrough).
    let mut verbatim: Option<(&str, bool)> = None;
    // Inside the document header, after `= Title` up to the first blank.
    let mut header = false;
    for l in markdown::lines(text, from) {
        let s = &text[l.start..l.end];
        let t = s.trim();
        if let Some((delimiter, keep)) = verbatim {
            if keep {
                current = Some((current.map_or(l.start, |(start, _)| start), l.end));
            }
            if s.trim_end() == delimiter {
                verbatim = None;
                flush(&mut current, &mut out);
            }
            continue;
        }
        if markdown::is_blank(s) {
            flush(&mut current, &mut out);
            header = false;
            continue;
        }
        if header {
            continue;
        }
        if let Some(ch) = asciidoc_verbatim(s.trim_end()) {
            flush(&mut current, &mut out);
            let keep = matches!(ch, b'-' | b'.');
            if keep {
                current = Some((l.start, l.end));
            }
            verbatim = Some((s.trim_end(), keep));
            continue;
        }
        if markdown::fence_open(s).is_some() {
            // Asciidoctor reads Markdown's fences as listing blocks too.
            flush(&mut current, &mut out);
            current = Some((l.start, l.end));
            let delimiter = &s[..s.len() - s.trim_start().len() + fence_len(s.trim_start())];
            verbatim = Some((delimiter, true));
            continue;
        }
        if let Some((level, title)) = asciidoc_title(t).or_else(|| markdown::atx_heading(s)) {
            flush(&mut current, &mut out);
            // A document title's next lines, up to a blank one, are its
            // header (the sentence rule reads them the same way).
            header = level == 1;
            out.push(Block {
                start: l.start,
                end: l.end,
                heading: Some((level, title)),
            });
            continue;
        }
        if is_asciidoc_markup(t) {
            flush(&mut current, &mut out);
            continue;
        }
        current = Some((current.map_or(l.start, |(start, _)| start), l.end));
    }
    flush(&mut current, &mut out);
    out
}

/// The length of the run of backticks or tildes that opens a fence.
fn fence_len(t: &str) -> usize {
    let first = t.as_bytes().first().copied().unwrap_or(b'`');
    t.bytes().take_while(|&b| b == first).count()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(text: &str) -> Vec<(&str, Option<usize>)> {
        blocks(text, 0)
            .iter()
            .map(|b| match b.heading {
                Some((level, title)) => (title, Some(level)),
                None => (&text[b.start..b.end], None),
            })
            .collect()
    }

    #[test]
    fn titles_header_and_markup() {
        let doc = "= Agent Guide\nJane Doe <jane@example.com>\nv2.1, 2026-01-01\n:toc: left\n\nThe agent ships\nmetrics.\n\n[[install]]\n== Installing\n\n[NOTE]\n.Before you start\nIt needs a server.\n\n[source,bash]\n----\napt install agent\n\n# not a heading\n----\n\n////\n== Not a title\n////\n\n++++\n<b>raw</b>\n++++\n\n// a comment\nimage::x.png[Diagram of it]\ninclude::parts/more.adoc[]\n\n=== Ports\n\n|===\n| Port | 8080\n|===\n\n```\ncode here\n```\n";
        assert_eq!(
            shape(doc),
            [
                ("Agent Guide", Some(1)),
                ("The agent ships\nmetrics.", None),
                ("Installing", Some(2)),
                ("It needs a server.", None),
                ("----\napt install agent\n\n# not a heading\n----", None),
                ("Ports", Some(3)),
                ("| Port | 8080", None),
                ("```\ncode here\n```", None),
            ]
        );
    }

    #[test]
    fn a_header_ends_at_the_first_blank_line() {
        let doc = "Intro text.\n\n= Part Two\nv1.0, 2026-01-01\n\nText after the header.\n";
        assert_eq!(
            shape(doc),
            [
                ("Intro text.", None),
                ("Part Two", Some(1)),
                ("Text after the header.", None),
            ]
        );
    }

    #[test]
    fn an_unclosed_block_runs_to_the_end() {
        assert_eq!(
            shape("Text.\n\n----\ncode\n"),
            [("Text.", None), ("----\ncode", None)]
        );
        assert_eq!(shape("Text.\n\n////\nhidden\n"), [("Text.", None)]);
    }
}

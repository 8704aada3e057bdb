//! The little reStructuredText the chunker needs: section titles (a line
//! underlined, or over- and underlined, by one punctuation character, their
//! levels in the order the document first uses each style, as docutils
//! reads them), transitions, and explicit markup (`.. note::`, comments,
//! targets), whose marker lines are markup, not text.
//!
//! Like the Markdown reader it works on byte offsets into the source, so
//! chunks stay exact substrings of the file.

use groundcite_core::sentences::{is_adornment, is_field};

use crate::chunker::Block;
use crate::markdown::{self, Line};

/// Directives whose body is not prose to quote: it is skipped with the
/// directive's line (a table of contents, a substitution, an include).
const SKIPPED_BODIES: &[&str] = &[
    "toctree",
    "include",
    "raw",
    "image",
    "figure",
    "only",
    "contents",
    "index",
    "meta",
    "highlight",
    "literalinclude",
    "automodule",
    "autoclass",
    "autofunction",
    "csv-table",
];

/// The blocks of a reStructuredText document: headings for section titles,
/// paragraphs (lines up to a blank line) for the rest, with explicit
/// markup lines, directive options, comments and transitions left out.
pub(crate) fn blocks(text: &str, from: usize) -> Vec<Block<'_>> {
    let lines = markdown::lines(text, from);
    let line = |l: &Line| &text[l.start..l.end];
    let mut styles: Vec<(char, bool)> = Vec::new();
    let mut level_of = |style: (char, bool)| {
        let i = styles.iter().position(|s| *s == style).unwrap_or_else(|| {
            styles.push(style);
            styles.len() - 1
        });
        (i + 1).min(6)
    };
    let mut out = Vec::new();
    let mut current: Option<(usize, usize, usize)> = None; // start, end, lines
    let flush = |current: &mut Option<(usize, usize, usize)>, out: &mut Vec<Block<'_>>| {
        if let Some((start, end, _)) = current.take() {
            out.push(Block {
                start,
                end,
                heading: None,
            });
        }
    };
    // Inside explicit markup whose body is skipped: the marker's indent.
    let mut skipping: Option<usize> = None;
    // Right after a directive line: its `:option: value` lines are markup.
    let mut options = false;
    // Inside the file-wide field list that opens the document.
    let mut metadata = false;
    let mut i = 0;
    while i < lines.len() {
        let l = &lines[i];
        let s = line(l);
        i += 1;
        if markdown::is_blank(s) {
            flush(&mut current, &mut out);
            options = false;
            metadata = false;
            continue;
        }
        let indent = s.len() - s.trim_start().len();
        if let Some(marker) = skipping {
            if indent > marker {
                continue;
            }
            skipping = None;
        }
        let t = s.trim();
        if options && t.starts_with(':') {
            continue;
        }
        // A field list before anything else is the file's metadata
        // (Sphinx's file-wide fields: `:orphan:`, `:description: …`).
        if out.is_empty() && current.is_none() && indent == 0 && is_field(t) {
            metadata = true;
        }
        if metadata {
            if indent == 0 && !is_field(t) {
                metadata = false;
            } else {
                continue;
            }
        }
        options = false;
        // Explicit markup: `.. name:: args`, `.. _target:`, `.. |sub| …`,
        // a comment.
        if t == ".." || t.starts_with(".. ") {
            flush(&mut current, &mut out);
            let body = t.trim_start_matches('.').trim_start();
            match body.split_once("::") {
                Some((name, _)) if !name.contains(' ') && !name.is_empty() => {
                    let name = name.to_ascii_lowercase();
                    options = true;
                    if SKIPPED_BODIES.contains(&name.as_str()) {
                        skipping = Some(indent);
                    }
                }
                // A footnote or citation (`.. [1] text`) is text.
                _ if body.starts_with('[') => {
                    current = Some((l.start, l.end, 1));
                }
                // A target, a substitution or a comment.
                _ => skipping = Some(indent),
            }
            continue;
        }
        if indent == 0 && is_adornment(t) {
            let ch = t.chars().next().unwrap_or('=');
            // Overline, title, underline.
            if current.is_none()
                && let (Some(title), Some(under)) = (lines.get(i), lines.get(i + 1))
                && !markdown::is_blank(line(title))
                && line(under).trim_end() == t
            {
                out.push(Block {
                    start: l.start,
                    end: under.end,
                    heading: Some((level_of((ch, true)), line(title).trim())),
                });
                i += 2;
                continue;
            }
            // Title, underline: the paragraph so far is one line.
            if let Some((start, end, 1)) = current
                && t.chars().count() >= 3.min(text[start..end].trim().chars().count())
            {
                current = None;
                out.push(Block {
                    start,
                    end: l.end,
                    heading: Some((level_of((ch, false)), text[start..end].trim())),
                });
                continue;
            }
            // A transition (or a stray rule): it separates blocks.
            if current.is_none() {
                continue;
            }
        }
        current = Some(match current {
            Some((start, _, n)) => (start, l.end, n + 1),
            None => (l.start, l.end, 1),
        });
    }
    flush(&mut current, &mut out);
    out
}

/// The `:title:` of the field list that opens a document (file-wide
/// metadata, as Sphinx reads a leading field list), when it has one.
pub(crate) fn metadata_title(text: &str, from: usize) -> Option<String> {
    for l in markdown::lines(text, from) {
        let s = &text[l.start..l.end];
        if s.starts_with([' ', '\t']) {
            continue;
        }
        if !is_field(s.trim_end()) {
            return None;
        }
        if let Some(title) = s.strip_prefix(":title:") {
            return Some(title.trim().to_owned()).filter(|t| !t.is_empty());
        }
    }
    None
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
    fn titles_take_levels_in_order_of_first_use() {
        let doc = "=========\nUser Guide\n=========\n\nIntro text\nwrapped.\n\nInstalling\n----------\n\nRun pip.\n\nOn Debian\n~~~~~~~~~\n\nUse apt.\n\nUpgrading\n---------\n\nRun it again.\n";
        assert_eq!(
            shape(doc),
            [
                ("User Guide", Some(1)),
                ("Intro text\nwrapped.", None),
                ("Installing", Some(2)),
                ("Run pip.", None),
                ("On Debian", Some(3)),
                ("Use apt.", None),
                ("Upgrading", Some(2)),
                ("Run it again.", None),
            ]
        );
    }

    #[test]
    fn explicit_markup_is_not_text() {
        let doc = ".. _install:\n\nSetup\n=====\n\n.. note::\n   :class: tip\n\n   Keep your key safe.\n\n.. toctree::\n   :maxdepth: 2\n\n   intro\n   usage\n\n.. This is a comment\n   over two lines.\n\nBack to text.\n\n----\n\nAfter a transition.\n\n.. [1] A footnote.\n";
        assert_eq!(
            shape(doc),
            [
                ("Setup", Some(1)),
                ("   Keep your key safe.", None),
                ("Back to text.", None),
                ("After a transition.", None),
                (".. [1] A footnote.", None),
            ]
        );
    }

    #[test]
    fn a_leading_field_list_is_metadata() {
        let doc = ":title: AWS CLI S3 FAQ\n:description: Questions\n  over two lines\n\nS3 FAQ\n======\n\n:param x: a field later is text\n";
        assert_eq!(
            shape(doc),
            [
                ("S3 FAQ", Some(1)),
                (":param x: a field later is text", None)
            ]
        );
    }

    #[test]
    fn a_leading_title_field_names_the_document() {
        let doc = ":description: x\n  y\n:title: AWS CLI Return Codes\n\nText.\n";
        assert_eq!(
            metadata_title(doc, 0).as_deref(),
            Some("AWS CLI Return Codes")
        );
        assert_eq!(metadata_title("Text.\n:title: no\n", 0), None);
        assert_eq!(metadata_title(":orphan:\n\n:title: later\n", 0), None);
        assert_eq!(metadata_title(":title:\n", 0), None);
    }

    #[test]
    fn a_paragraph_of_several_lines_is_not_a_title() {
        let doc = "First line\nsecond line\n==========\n";
        assert_eq!(shape(doc), [("First line\nsecond line\n==========", None)]);
    }
}

//! ODT (OpenDocument text: LibreOffice, OpenOffice, and the export of most
//! word processors): the paragraphs and headings of `content.xml`'s body,
//! in order, list items included. `<text:h>` starts a section at its
//! outline level, and so does a paragraph styled `Title` or `Heading N`
//! (directly, or through the styles it inherits from). A table row is one
//! paragraph, its cells joined by " | " (a cell's own paragraphs by
//! spaces), so a quoted cell keeps the rest of its row; a heading in a cell
//! is not a heading.
//!
//! Left out: tracked changes (the deleted text they keep), comments, the
//! generated tables of contents and indexes, footnote numbers, image
//! descriptions, and hidden sections. A footnote's or a text frame's
//! paragraphs sit inside the paragraph that anchors them; they are read as
//! paragraphs of their own, right after it, so no sentence is cut in two.
//! The title is `meta.xml`'s `dc:title`, else the first `Title` paragraph,
//! else the first heading.

use std::collections::HashMap;

use quick_xml::Reader;
use quick_xml::events::{BytesStart, Event};

use super::package::{self, Cells, Package, attr, dc_title, push_ref, style_level};
use super::{ExtractError, Extracted, Format, TextBuilder, collapse_spaces};

/// Elements whose content is not the document's text (local names).
const HIDDEN: &[&str] = &[
    "tracked-changes",
    "annotation",
    "note-citation",
    "table-of-content",
    "alphabetical-index",
    "illustration-index",
    "table-index",
    "object-index",
    "user-index",
    "bibliography",
    "sequence-decls",
    "variable-decls",
    "user-field-decls",
    "forms",
];

/// How far a style's parents are followed (a cycle stops here too).
const MAX_STYLE_DEPTH: usize = 16;

fn corrupt(message: impl std::fmt::Display) -> ExtractError {
    ExtractError::corrupt(Format::Odt, message)
}

fn read_part(zip: &mut Package<'_>, name: &str) -> Result<Option<String>, ExtractError> {
    package::read_part(zip, name, Format::Odt)
}

/// A style name as written in the XML (`Heading_20_1`) as people read it
/// (`Heading 1`).
fn display_name(name: &str) -> String {
    name.replace("_20_", " ")
}

/// Paragraph style → its parent style, from `<style:style>` elements.
fn style_parents(xml: &str, out: &mut HashMap<String, String>) {
    let mut reader = Reader::from_str(xml);
    loop {
        match reader.read_event() {
            Ok(Event::Start(e) | Event::Empty(e)) if e.local_name().as_ref() == "style" => {
                if let (Some(name), Some(parent)) =
                    (attr(&e, "style:name"), attr(&e, "style:parent-style-name"))
                {
                    out.insert(name, parent);
                }
            }
            Ok(Event::Eof) | Err(_) => break,
            _ => {}
        }
    }
}

/// Heading level of a paragraph style, following its parents.
fn paragraph_level(style: &str, parents: &HashMap<String, String>) -> Option<u8> {
    let mut name = style;
    for _ in 0..MAX_STYLE_DEPTH {
        if let Some(level) = style_level(&display_name(name)) {
            return Some(level);
        }
        name = parents.get(name)?;
    }
    None
}

fn is_title_style(style: &str, parents: &HashMap<String, String>) -> bool {
    let mut name = style;
    for _ in 0..MAX_STYLE_DEPTH {
        if name.eq_ignore_ascii_case("title") {
            return true;
        }
        match parents.get(name) {
            Some(parent) => name = parent,
            None => return false,
        }
    }
    false
}

/// Does this start tag open content that is not the document's text?
fn hides(e: &BytesStart<'_>) -> bool {
    let local = e.local_name();
    let local = local.as_ref();
    if HIDDEN.contains(&local) {
        return true;
    }
    match local {
        // An image's alternative text and title (the `svg:` namespace).
        "title" | "desc" => e.name().as_ref().starts_with("svg:"),
        "section" => attr(e, "text:display").as_deref() == Some("none"),
        _ => false,
    }
}

/// A paragraph or heading being read.
struct Para {
    text: String,
    level: Option<u8>,
    title: bool,
}

/// A table row being read (`<table:table-row>`), one per table open now.
#[derive(Default)]
struct Row {
    /// How many paragraphs were open when the table began: a paragraph
    /// that closes with as many still open is one of its cells'.
    base: usize,
    /// Where in `nested` the row's own paragraph goes: before the
    /// footnotes and frames its cells anchor.
    mark: usize,
    cells: Cells,
}

/// Ends the innermost table's row. A table in a cell makes its rows
/// paragraphs of that cell; any other row is a paragraph, read before the
/// footnotes and frames its cells anchor, and written (with them) when no
/// paragraph is open around the table.
fn end_row(rows: &mut [Row], nested: &mut Vec<Para>, open: usize, emit: &mut impl FnMut(Para)) {
    let Some((row, outer)) = rows.split_last_mut() else {
        return;
    };
    let text = row.cells.take();
    let mark = row.mark.min(nested.len());
    match outer.last_mut() {
        Some(parent) if parent.base == open => parent.cells.paragraph(&text),
        _ => {
            if !text.is_empty() {
                let para = Para {
                    text,
                    level: None,
                    title: false,
                };
                nested.insert(mark, para);
            }
            if open == 0 {
                for para in nested.drain(..) {
                    emit(para);
                }
            }
        }
    }
}

pub(super) fn extract(bytes: &[u8]) -> Result<Extracted, ExtractError> {
    let mut zip = package::open(bytes, Format::Odt)?;
    if let Some(mime) = read_part(&mut zip, "mimetype")? {
        let mime = mime.trim();
        if !mime.starts_with("application/vnd.oasis.opendocument.text") {
            return Err(corrupt(format_args!(
                "not an OpenDocument text (its mimetype is {mime:?})"
            )));
        }
    }
    // An encrypted package keeps content.xml as ciphertext: say so rather
    // than "not UTF-8".
    if read_part(&mut zip, "META-INF/manifest.xml")?.is_some_and(|m| m.contains("encryption-data"))
    {
        return Err(corrupt(
            "the document is password-protected; save it without a password to index it",
        ));
    }
    let content = read_part(&mut zip, "content.xml")?
        .ok_or_else(|| corrupt("no content.xml (not an OpenDocument file)"))?;
    let mut parents = HashMap::new();
    if let Some(styles) = read_part(&mut zip, "styles.xml")? {
        style_parents(&styles, &mut parents);
    }
    // Automatic styles (`P1` with parent `Title`) live in content.xml.
    style_parents(&content, &mut parents);
    let meta_title = read_part(&mut zip, "meta.xml")
        .ok()
        .flatten()
        .and_then(|s| dc_title(&s));

    let mut out = TextBuilder::default();
    let mut reader = Reader::from_str(&content);
    // Paragraphs open now, outermost first: a footnote's paragraph opens
    // inside the paragraph that cites it.
    let mut open: Vec<Para> = Vec::new();
    // Paragraphs that closed inside another one, written after it.
    let mut nested: Vec<Para> = Vec::new();
    // Tables open now, outermost first: the row each is reading.
    let mut rows: Vec<Row> = Vec::new();
    // Depth inside an element whose content is left out.
    let mut hidden = 0usize;
    let mut in_body = false;
    let mut first_title: Option<String> = None;
    let mut first_heading: Option<String> = None;
    let mut emit = |para: Para, out: &mut TextBuilder| {
        let body = collapse_spaces(&para.text);
        if body.is_empty() {
            return;
        }
        if para.title {
            first_title.get_or_insert_with(|| body.clone());
        }
        if para.level.is_some() {
            first_heading.get_or_insert_with(|| body.clone());
        }
        out.block(&body, para.level);
    };
    loop {
        let event = reader
            .read_event()
            .map_err(|e| corrupt(format_args!("content.xml: {e}")))?;
        match event {
            Event::Start(e) => {
                if hidden > 0 {
                    hidden += 1;
                    continue;
                }
                if hides(&e) {
                    hidden = 1;
                    continue;
                }
                match e.local_name().as_ref() {
                    "body" => in_body = true,
                    "p" | "h" if in_body => {
                        let style = attr(&e, "text:style-name").unwrap_or_default();
                        let level = if e.local_name().as_ref() == "h" {
                            let n = attr(&e, "text:outline-level")
                                .and_then(|v| v.trim().parse::<u8>().ok())
                                .unwrap_or(1);
                            Some(n.clamp(1, 6))
                        } else {
                            paragraph_level(&style, &parents)
                        };
                        open.push(Para {
                            text: String::new(),
                            level,
                            title: is_title_style(&style, &parents),
                        });
                    }
                    "table" if in_body => rows.push(Row {
                        base: open.len(),
                        mark: nested.len(),
                        ..Row::default()
                    }),
                    "table-row" => {
                        if let Some(row) = rows.last_mut() {
                            row.mark = nested.len();
                        }
                    }
                    // A covered cell (merged into one before it) is an
                    // empty cell; text it may still hold is kept, in its
                    // place.
                    "table-cell" | "covered-table-cell" => {
                        if let Some(row) = rows.last_mut() {
                            row.cells.start_cell();
                        }
                    }
                    _ => {}
                }
            }
            Event::Empty(e) if hidden == 0 => match e.local_name().as_ref() {
                "s" | "tab" | "line-break" => {
                    if let Some(para) = open.last_mut() {
                        para.text.push(' ');
                    }
                }
                // An empty cell keeps its place in the row.
                "table-cell" | "covered-table-cell" => {
                    if let Some(row) = rows.last_mut() {
                        row.cells.start_cell();
                        row.cells.end_cell();
                    }
                }
                _ => {}
            },
            Event::End(e) => {
                if hidden > 0 {
                    hidden -= 1;
                    continue;
                }
                match e.local_name().as_ref() {
                    "p" | "h" => {
                        let Some(para) = open.pop() else { continue };
                        if let Some(row) = rows.last_mut().filter(|r| r.base == open.len()) {
                            // A cell's paragraph is part of its row: its
                            // style does not make the row a heading.
                            row.cells.paragraph(&para.text);
                        } else if open.is_empty() {
                            emit(para, &mut out);
                            for inner in nested.drain(..) {
                                emit(inner, &mut out);
                            }
                        } else {
                            nested.push(para);
                        }
                    }
                    "table-cell" | "covered-table-cell" => {
                        if let Some(row) = rows.last_mut() {
                            row.cells.end_cell();
                        }
                    }
                    "table-row" => {
                        end_row(&mut rows, &mut nested, open.len(), &mut |para| {
                            emit(para, &mut out)
                        });
                    }
                    "table" => {
                        // Anything read outside a row is not lost.
                        end_row(&mut rows, &mut nested, open.len(), &mut |para| {
                            emit(para, &mut out)
                        });
                        rows.pop();
                    }
                    "body" => in_body = false,
                    _ => {}
                }
            }
            Event::Text(t) if hidden == 0 => {
                if let Some(para) = open.last_mut() {
                    para.text.push_str(&t.xml10_content());
                }
            }
            Event::GeneralRef(r) if hidden == 0 => {
                if let Some(para) = open.last_mut() {
                    push_ref(&mut para.text, &r);
                }
            }
            Event::Eof => break,
            _ => {}
        }
    }
    Ok(out.finish(Format::Odt, meta_title.or(first_title).or(first_heading)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn style_names_are_read_as_displayed_and_followed_to_their_parents() {
        let mut parents = HashMap::new();
        parents.insert("P1".to_owned(), "Heading_20_2".to_owned());
        parents.insert("P2".to_owned(), "Title".to_owned());
        parents.insert("Loop".to_owned(), "Loop".to_owned());
        assert_eq!(paragraph_level("P1", &parents), Some(2));
        assert_eq!(paragraph_level("Heading_20_3", &parents), Some(3));
        assert_eq!(paragraph_level("P2", &parents), Some(1));
        assert_eq!(paragraph_level("Text_20_body", &parents), None);
        assert_eq!(paragraph_level("Loop", &parents), None);
        assert!(is_title_style("P2", &parents));
        assert!(!is_title_style("P1", &parents));
        assert!(!is_title_style("Loop", &parents));
    }
}

//! DOCX: the paragraphs of `word/document.xml`, in order; paragraphs styled
//! `Title` or `Heading N` (by style name, so localised style IDs work) or
//! with an outline level start sections. A table row is one paragraph, its
//! cells joined by " | " (a cell's own paragraphs by spaces), so a quoted
//! cell keeps the rest of its row; a heading style in a cell is not a
//! heading. Footnotes and endnotes are read right after the paragraph (or
//! row) that cites them. Deleted revisions, field
//! codes, hidden text (`w:vanish`) and generated tables of contents are
//! left out. The title is `docProps/core.xml`'s `dc:title`, else the first
//! title or heading.

use std::collections::HashMap;

use quick_xml::Reader;
use quick_xml::events::Event;

use super::package::{self, Cells, Package, attr, dc_title, push_ref, style_level};
use super::{ExtractError, Extracted, Format, TextBuilder, collapse_spaces};

fn corrupt(message: impl std::fmt::Display) -> ExtractError {
    ExtractError::corrupt(Format::Docx, message)
}

fn read_part(zip: &mut Package<'_>, name: &str) -> Result<Option<String>, ExtractError> {
    package::read_part(zip, name, Format::Docx)
}

/// Style ID → heading level, from `word/styles.xml`.
fn heading_styles(xml: &str) -> HashMap<String, u8> {
    let mut out = HashMap::new();
    let mut reader = Reader::from_str(xml);
    let mut current: Option<String> = None;
    loop {
        match reader.read_event() {
            Ok(Event::Start(e)) if e.local_name().as_ref() == "style" => {
                current = attr(&e, "w:styleId");
            }
            Ok(Event::Empty(e)) if e.local_name().as_ref() == "name" => {
                if let (Some(id), Some(name)) = (current.as_ref(), attr(&e, "w:val"))
                    && let Some(level) = style_level(&name)
                {
                    out.insert(id.clone(), level);
                }
            }
            Ok(Event::Eof) | Err(_) => break,
            _ => {}
        }
    }
    out
}

/// A paragraph of a DOCX part, as read.
#[derive(Debug, Default)]
struct DocPara {
    text: String,
    level: Option<u8>,
    /// Footnotes and endnotes it cites, in order (`("footnote", "2")`).
    notes: Vec<(&'static str, String)>,
    /// The note it belongs to, in `footnotes.xml` / `endnotes.xml`.
    note: Option<String>,
}

/// A table row being read (`w:tr`), one per table open now.
#[derive(Debug, Default)]
struct Row {
    cells: Cells,
    /// Notes cited anywhere in the row, in order.
    notes: Vec<(&'static str, String)>,
}

/// Ends the innermost table's row: a nested table's row is a paragraph of
/// the outer cell, any other row a paragraph of the part.
fn end_row(rows: &mut [Row], out: &mut Vec<DocPara>, note: &Option<String>) {
    let Some((row, outer)) = rows.split_last_mut() else {
        return;
    };
    let text = row.cells.take();
    let notes = std::mem::take(&mut row.notes);
    if let Some(parent) = outer.last_mut() {
        parent.cells.paragraph(&text);
        parent.notes.extend(notes);
    } else if !text.is_empty() || !notes.is_empty() {
        out.push(DocPara {
            text,
            level: None,
            notes,
            note: note.clone(),
        });
    }
}

/// Is a run property's toggle on (`<w:vanish/>`, `w:val="true"`)?
fn toggle_on(e: &quick_xml::events::BytesStart<'_>) -> bool {
    !matches!(
        attr(e, "w:val").as_deref(),
        Some("0" | "false" | "off" | "none")
    )
}

/// The paragraphs of one XML part (the body, or the notes), in order.
/// Left out: deleted revisions, field codes, hidden runs (`w:vanish`),
/// and generated tables of contents (a content control of the gallery
/// "Table of Contents", or the result of a `TOC` field).
fn paragraphs(
    xml: &str,
    part: &str,
    styles: &HashMap<String, u8>,
) -> Result<Vec<DocPara>, ExtractError> {
    let mut out = Vec::new();
    let mut reader = Reader::from_str(xml);
    let mut para = DocPara::default();
    let mut in_text = false;
    // Inside <w:del> (a deleted revision) or <w:instrText> (a field code).
    let mut hidden = 0usize;
    // Content controls open now: whether each is a table of contents.
    let mut sdts: Vec<bool> = Vec::new();
    // Fields open now: their code, as far as read.
    let mut fields: Vec<String> = Vec::new();
    let mut in_instr = false;
    // Inside a run (<w:r>), and in its properties; the run is hidden.
    let mut in_run = false;
    let mut in_rpr = false;
    let mut run_hidden = false;
    // The note being read (footnotes.xml, endnotes.xml); `None` for the
    // separators Word keeps there.
    let mut note: Option<String> = None;
    // Tables open now (`w:tbl`), outermost first: the row each is reading.
    let mut rows: Vec<Row> = Vec::new();
    loop {
        let event = reader
            .read_event()
            .map_err(|e| corrupt(format_args!("{part}: {e}")))?;
        let toc = sdts.iter().any(|t| *t)
            || fields
                .iter()
                .any(|code| code.trim_start().to_ascii_uppercase().starts_with("TOC"));
        let shown = hidden == 0 && !toc && !run_hidden;
        match event {
            Event::Start(e) => match e.local_name().as_ref() {
                "p" => {
                    para = DocPara {
                        note: note.clone(),
                        ..DocPara::default()
                    };
                }
                "r" => {
                    in_run = true;
                    run_hidden = false;
                }
                "rPr" if in_run => in_rpr = true,
                "t" => in_text = true,
                "tbl" => rows.push(Row::default()),
                "tr" => end_row(&mut rows, &mut out, &note),
                "tc" => {
                    if let Some(row) = rows.last_mut() {
                        row.cells.start_cell();
                    }
                }
                "instrText" => {
                    in_instr = true;
                    hidden += 1;
                }
                "del" | "delText" => hidden += 1,
                "sdt" => sdts.push(false),
                "footnote" | "endnote" => {
                    note = attr(&e, "w:id").filter(|_| {
                        !attr(&e, "w:type").is_some_and(|t| t.contains("eparator"))
                            && attr(&e, "w:type").as_deref() != Some("continuationNotice")
                    });
                }
                _ => {}
            },
            Event::Empty(e) => match e.local_name().as_ref() {
                "pStyle" => {
                    if let Some(id) = attr(&e, "w:val") {
                        para.level = styles.get(&id).copied().or_else(|| style_level(&id));
                    }
                }
                "outlineLvl" => {
                    if let Some(n) = attr(&e, "w:val").and_then(|v| v.parse::<u8>().ok())
                        && n < 6
                    {
                        para.level = para.level.or(Some(n + 1));
                    }
                }
                "vanish" if in_rpr => run_hidden = toggle_on(&e),
                "docPartGallery" => {
                    if let Some(top) = sdts.last_mut() {
                        *top = attr(&e, "w:val").is_some_and(|v| v.contains("Table of Contents"));
                    }
                }
                "fldChar" => match attr(&e, "w:fldCharType").as_deref() {
                    Some("begin") => fields.push(String::new()),
                    Some("end") => {
                        fields.pop();
                    }
                    _ => {}
                },
                "footnoteReference" if shown => {
                    if let Some(id) = attr(&e, "w:id") {
                        para.notes.push(("footnote", id));
                    }
                }
                "endnoteReference" if shown => {
                    if let Some(id) = attr(&e, "w:id") {
                        para.notes.push(("endnote", id));
                    }
                }
                "tc" => {
                    if let Some(row) = rows.last_mut() {
                        row.cells.end_cell();
                    }
                }
                "tab" if shown => para.text.push('\t'),
                "br" | "cr" if shown => para.text.push(' '),
                _ => {}
            },
            Event::End(e) => match e.local_name().as_ref() {
                "p" => {
                    let done = std::mem::take(&mut para);
                    match rows.last_mut() {
                        _ if toc => {}
                        // A cell's paragraph is part of its row: its style
                        // does not make the row a heading.
                        Some(row) => {
                            row.cells.paragraph(&done.text);
                            row.notes.extend(done.notes);
                        }
                        None => out.push(done),
                    }
                }
                "tc" => {
                    if let Some(row) = rows.last_mut() {
                        row.cells.end_cell();
                    }
                }
                "tr" => end_row(&mut rows, &mut out, &note),
                "tbl" => {
                    // Anything read outside a `w:tr` is not lost.
                    end_row(&mut rows, &mut out, &note);
                    rows.pop();
                }
                "r" => {
                    in_run = false;
                    run_hidden = false;
                }
                "rPr" => in_rpr = false,
                "t" => in_text = false,
                "instrText" => {
                    in_instr = false;
                    hidden = hidden.saturating_sub(1);
                }
                "del" | "delText" => hidden = hidden.saturating_sub(1),
                "sdt" => {
                    sdts.pop();
                }
                "footnote" | "endnote" => note = None,
                _ => {}
            },
            Event::Text(t) if in_instr => {
                if let Some(code) = fields.last_mut() {
                    code.push_str(&t.xml10_content());
                }
            }
            Event::Text(t) if in_text && shown => para.text.push_str(&t.xml10_content()),
            Event::GeneralRef(r) if in_text && shown => push_ref(&mut para.text, &r),
            Event::Eof => break,
            _ => {}
        }
    }
    Ok(out)
}

/// A notes part (`word/footnotes.xml`) as note ID → its paragraphs.
fn notes(
    zip: &mut Package<'_>,
    part: &str,
    styles: &HashMap<String, u8>,
) -> Result<HashMap<String, Vec<String>>, ExtractError> {
    let mut out: HashMap<String, Vec<String>> = HashMap::new();
    if let Some(xml) = read_part(zip, part)? {
        for p in paragraphs(&xml, part, styles)? {
            if let Some(id) = p.note {
                out.entry(id).or_default().push(p.text);
            }
        }
    }
    Ok(out)
}

pub(super) fn extract(bytes: &[u8]) -> Result<Extracted, ExtractError> {
    let mut zip = package::open(bytes, Format::Docx)?;
    let document = read_part(&mut zip, "word/document.xml")?
        .ok_or_else(|| corrupt("no word/document.xml (not a Word document)"))?;
    let styles = read_part(&mut zip, "word/styles.xml")?
        .map(|s| heading_styles(&s))
        .unwrap_or_default();
    let meta_title = read_part(&mut zip, "docProps/core.xml")
        .ok()
        .flatten()
        .and_then(|s| dc_title(&s));
    let mut footnotes = notes(&mut zip, "word/footnotes.xml", &styles)?;
    let mut endnotes = notes(&mut zip, "word/endnotes.xml", &styles)?;

    let mut out = TextBuilder::default();
    let mut first_heading: Option<String> = None;
    for para in paragraphs(&document, "word/document.xml", &styles)? {
        let body = collapse_spaces(&para.text);
        if para.level.is_some() && !body.is_empty() {
            first_heading.get_or_insert_with(|| body.clone());
        }
        out.block(&body, para.level);
        // A note is read right after the paragraph that cites it (each
        // once), so the citing sentence is not cut in two.
        for (kind, id) in &para.notes {
            let found = if *kind == "footnote" {
                footnotes.remove(id)
            } else {
                endnotes.remove(id)
            };
            for text in found.into_iter().flatten() {
                out.block(&collapse_spaces(&text), None);
            }
        }
    }
    Ok(out.finish(Format::Docx, meta_title.or(first_heading)))
}

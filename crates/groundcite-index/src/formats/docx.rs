//! DOCX: the paragraphs of `word/document.xml`, in order; paragraphs styled
//! `Title` or `Heading N` (by style name, so localised style IDs work) or
//! with an outline level start sections. Deleted revisions and field codes
//! are left out. The title is `docProps/core.xml`'s `dc:title`, else the
//! first title or heading.

use std::collections::HashMap;

use quick_xml::Reader;
use quick_xml::events::Event;

use super::package::{self, Package, attr, dc_title, push_ref, style_level};
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

    let mut out = TextBuilder::default();
    let mut reader = Reader::from_str(&document);
    let mut para = String::new();
    let mut level: Option<u8> = None;
    let mut in_text = false;
    // Inside <w:del> (a deleted revision) or <w:instrText> (a field code).
    let mut hidden = 0usize;
    let mut first_heading: Option<String> = None;
    loop {
        let event = reader
            .read_event()
            .map_err(|e| corrupt(format_args!("word/document.xml: {e}")))?;
        match event {
            Event::Start(e) => match e.local_name().as_ref() {
                "p" => {
                    para.clear();
                    level = None;
                }
                "t" => in_text = true,
                "del" | "instrText" | "delText" => hidden += 1,
                _ => {}
            },
            Event::Empty(e) => match e.local_name().as_ref() {
                "pStyle" => {
                    if let Some(id) = attr(&e, "w:val") {
                        level = styles.get(&id).copied().or_else(|| style_level(&id));
                    }
                }
                "outlineLvl" => {
                    if let Some(n) = attr(&e, "w:val").and_then(|v| v.parse::<u8>().ok())
                        && n < 6
                    {
                        level = level.or(Some(n + 1));
                    }
                }
                "tab" if hidden == 0 => para.push('\t'),
                "br" | "cr" if hidden == 0 => para.push(' '),
                _ => {}
            },
            Event::End(e) => match e.local_name().as_ref() {
                "p" => {
                    let body = collapse_spaces(&para);
                    if level.is_some() && !body.is_empty() {
                        first_heading.get_or_insert_with(|| body.clone());
                    }
                    out.block(&body, level);
                    para.clear();
                    level = None;
                }
                "t" => in_text = false,
                "del" | "instrText" | "delText" => hidden = hidden.saturating_sub(1),
                _ => {}
            },
            Event::Text(t) if in_text && hidden == 0 => para.push_str(&t.xml10_content()),
            Event::GeneralRef(r) if in_text && hidden == 0 => push_ref(&mut para, &r),
            Event::Eof => break,
            _ => {}
        }
    }
    let TextBuilder { text, blocks } = out;
    Ok(Extracted {
        format: Format::Docx,
        text,
        title: meta_title.or(first_heading),
        blocks: Some(blocks),
        pages: Vec::new(),
        layout: None,
    })
}

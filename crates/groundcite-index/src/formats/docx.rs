//! DOCX: the paragraphs of `word/document.xml`, in order; paragraphs styled
//! `Title` or `Heading N` (by style name, so localised style IDs work) or
//! with an outline level start sections. Deleted revisions and field codes
//! are left out. The title is `docProps/core.xml`'s `dc:title`, else the
//! first title or heading.

use std::collections::HashMap;
use std::io::{Cursor, Read};

use quick_xml::events::{BytesStart, Event};
use quick_xml::{Reader, XmlVersion};

use super::{ExtractError, Extracted, Format, TextBuilder, collapse_spaces};

/// Largest XML part read (uncompressed): a ZIP bomb stops here.
const MAX_PART_BYTES: u64 = 64 * 1024 * 1024;

fn corrupt(message: impl std::fmt::Display) -> ExtractError {
    ExtractError::corrupt(Format::Docx, message)
}

fn read_part(
    zip: &mut zip::ZipArchive<Cursor<&[u8]>>,
    name: &str,
) -> Result<Option<String>, ExtractError> {
    let file = match zip.by_name(name) {
        Ok(file) => file,
        Err(zip::result::ZipError::FileNotFound) => return Ok(None),
        Err(e) => return Err(corrupt(format_args!("{name}: {e}"))),
    };
    let mut bytes = Vec::new();
    file.take(MAX_PART_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| corrupt(format_args!("{name}: {e}")))?;
    if bytes.len() as u64 > MAX_PART_BYTES {
        return Err(corrupt(format_args!(
            "{name} is larger than {MAX_PART_BYTES} bytes uncompressed"
        )));
    }
    String::from_utf8(bytes)
        .map(Some)
        .map_err(|e| corrupt(format_args!("{name} is not UTF-8: {e}")))
}

fn attr(e: &BytesStart<'_>, name: &str) -> Option<String> {
    e.try_get_attribute(name).ok().flatten().and_then(|a| {
        a.normalized_value(XmlVersion::Implicit1_0)
            .ok()
            .map(|v| v.into_owned())
    })
}

/// Heading level of a style name (`"heading 2"` → 2, `"Title"` → 1).
fn style_level(name: &str) -> Option<u8> {
    let lower = name.to_ascii_lowercase();
    if lower == "title" {
        return Some(1);
    }
    let n = lower.strip_prefix("heading")?.trim();
    n.parse::<u8>().ok().filter(|n| (1..=6).contains(n))
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

/// `dc:title` of `docProps/core.xml`.
fn core_title(xml: &str) -> Option<String> {
    let mut reader = Reader::from_str(xml);
    let mut inside = false;
    let mut title = String::new();
    loop {
        match reader.read_event() {
            Ok(Event::Start(e)) if e.local_name().as_ref() == "title" => inside = true,
            Ok(Event::End(e)) if e.local_name().as_ref() == "title" => break,
            Ok(Event::Text(t)) if inside => title.push_str(&t.xml10_content()),
            Ok(Event::GeneralRef(r)) if inside => push_ref(&mut title, &r),
            Ok(Event::Eof) | Err(_) => break,
            _ => {}
        }
    }
    Some(collapse_spaces(&title)).filter(|t| !t.is_empty())
}

fn push_ref(out: &mut String, r: &quick_xml::events::BytesRef<'_>) {
    if let Ok(Some(c)) = r.resolve_char_ref() {
        out.push(c);
    } else if let Some(s) =
        quick_xml::escape::resolve_predefined_entity(&r.xml_content(XmlVersion::Implicit1_0))
    {
        out.push_str(s);
    }
}

pub(super) fn extract(bytes: &[u8]) -> Result<Extracted, ExtractError> {
    let mut zip = zip::ZipArchive::new(Cursor::new(bytes)).map_err(corrupt)?;
    let document = read_part(&mut zip, "word/document.xml")?
        .ok_or_else(|| corrupt("no word/document.xml (not a Word document)"))?;
    let styles = read_part(&mut zip, "word/styles.xml")?
        .map(|s| heading_styles(&s))
        .unwrap_or_default();
    let meta_title = read_part(&mut zip, "docProps/core.xml")
        .ok()
        .flatten()
        .and_then(|s| core_title(&s));

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

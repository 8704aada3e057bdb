//! What the ZIP-of-XML formats (DOCX, ODT) share: opening the archive,
//! reading one part with a size bound, and reading attributes and
//! character references the same way.

use std::io::{Cursor, Read};

use quick_xml::events::{BytesRef, BytesStart, Event};
use quick_xml::{Reader, XmlVersion};

use super::{ExtractError, Format, collapse_spaces};

/// Largest XML part read (uncompressed): a ZIP bomb stops here.
const MAX_PART_BYTES: u64 = 64 * 1024 * 1024;

/// An opened document package.
pub(super) type Package<'a> = zip::ZipArchive<Cursor<&'a [u8]>>;

pub(super) fn open(bytes: &[u8], format: Format) -> Result<Package<'_>, ExtractError> {
    zip::ZipArchive::new(Cursor::new(bytes)).map_err(|e| ExtractError::corrupt(format, e))
}

/// The part `name` as UTF-8 text; `None` when the package has no such part.
pub(super) fn read_part(
    zip: &mut Package<'_>,
    name: &str,
    format: Format,
) -> Result<Option<String>, ExtractError> {
    let corrupt = |message: std::fmt::Arguments<'_>| ExtractError::corrupt(format, message);
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

/// An attribute's value, entities resolved; `None` when absent or malformed.
pub(super) fn attr(e: &BytesStart<'_>, name: &str) -> Option<String> {
    e.try_get_attribute(name).ok().flatten().and_then(|a| {
        a.normalized_value(XmlVersion::Implicit1_0)
            .ok()
            .map(|v| v.into_owned())
    })
}

/// Appends a character reference (`&#233;`) or a predefined entity
/// (`&amp;`); anything else is dropped.
pub(super) fn push_ref(out: &mut String, r: &BytesRef<'_>) {
    if let Ok(Some(c)) = r.resolve_char_ref() {
        out.push(c);
    } else if let Some(s) =
        quick_xml::escape::resolve_predefined_entity(&r.xml_content(XmlVersion::Implicit1_0))
    {
        out.push_str(s);
    }
}

/// Heading level of a style name (`"heading 2"` → 2, `"Title"` → 1).
pub(super) fn style_level(name: &str) -> Option<u8> {
    let lower = name.to_ascii_lowercase();
    if lower == "title" {
        return Some(1);
    }
    let n = lower.strip_prefix("heading")?.trim();
    n.parse::<u8>().ok().filter(|n| (1..=6).contains(n))
}

/// The first `dc:title` of a metadata part (DOCX `docProps/core.xml`,
/// ODT `meta.xml`).
pub(super) fn dc_title(xml: &str) -> Option<String> {
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

/// The cells of a table row being read (DOCX `w:tr`, ODT
/// `table:table-row`): a row becomes one paragraph, so a quoted cell keeps
/// the rest of its row.
#[derive(Debug, Default)]
pub(super) struct Cells {
    /// The cells read so far.
    done: Vec<String>,
    /// The cell being read: its paragraphs, joined by spaces.
    cell: Option<String>,
}

impl Cells {
    pub(super) fn start_cell(&mut self) {
        if self.cell.is_some() {
            self.end_cell();
        }
        self.cell = Some(String::new());
    }

    /// Adds a paragraph to the cell being read (or, outside any cell, to a
    /// cell of its own).
    pub(super) fn paragraph(&mut self, text: &str) {
        let cell = self.cell.get_or_insert_with(String::new);
        if !text.trim().is_empty() {
            cell.push(' ');
            cell.push_str(text);
        }
    }

    pub(super) fn end_cell(&mut self) {
        let cell = self.cell.take().unwrap_or_default();
        self.done.push(cell);
    }

    /// The row's text; the cells are then empty. Cells are joined as HTML's
    /// are: an empty cell keeps its place ("445 | | Authenticated SMB
    /// printing."), but a row never starts with "|" (the sentence rule
    /// reads such a line as a Markdown table line).
    pub(super) fn take(&mut self) -> String {
        if self.cell.is_some() {
            self.end_cell();
        }
        let mut text = String::new();
        for cell in self.done.drain(..) {
            if !text.trim().is_empty() {
                text.push_str(" | ");
            }
            text.push_str(&cell);
        }
        collapse_spaces(&text)
    }
}

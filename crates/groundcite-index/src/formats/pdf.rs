//! PDF: the text layer, page by page, with each character's glyph box.
//!
//! pdf-extract interprets the content streams (fonts, encodings, ToUnicode
//! maps) and reports every glyph with its text rendering matrix; the lines,
//! spaces and paragraphs are rebuilt here from the glyph positions, and each
//! character of the text keeps its box in the page's user space (PDF points,
//! unrotated page, origin bottom left), which is what a quote's rectangles
//! are computed from.

use pdf_extract::{MediaBox, OutputDev, OutputError, Transform};

use super::{ExtractError, Extracted, Format, PageText, TextBlock};
use crate::layout::{DocLayout, LineGlyphs};

/// Share of the em box below the baseline (descenders), for glyph boxes.
const DESCENT: f64 = 0.22;
/// Share of the em box above the baseline (ascenders, capitals).
const ASCENT: f64 = 0.78;

fn corrupt(message: impl std::fmt::Display) -> ExtractError {
    ExtractError::corrupt(Format::Pdf, message)
}

/// One glyph as drawn.
#[derive(Debug, Clone)]
struct Glyph {
    text: String,
    /// Baseline origin and where the advance ends, in user space.
    x: f64,
    y: f64,
    end_x: f64,
    /// Font size in user space.
    size: f64,
    /// Axis-aligned box in user space.
    bbox: [f64; 4],
}

#[derive(Default)]
struct Collector {
    pages: Vec<(u32, Vec<Glyph>)>,
}

impl OutputDev for Collector {
    fn begin_page(
        &mut self,
        page_num: u32,
        _media_box: &MediaBox,
        _art_box: Option<(f64, f64, f64, f64)>,
    ) -> Result<(), OutputError> {
        self.pages.push((page_num, Vec::new()));
        Ok(())
    }

    fn end_page(&mut self) -> Result<(), OutputError> {
        Ok(())
    }

    fn output_character(
        &mut self,
        trm: &Transform,
        width: f64,
        _spacing: f64,
        font_size: f64,
        text: &str,
    ) -> Result<(), OutputError> {
        let Some((_, glyphs)) = self.pages.last_mut() else {
            return Ok(());
        };
        // Text space (scaled by the font size) to user space.
        let map = |u: f64, v: f64| {
            (
                u * font_size * trm.m11 + v * font_size * trm.m21 + trm.m31,
                u * font_size * trm.m12 + v * font_size * trm.m22 + trm.m32,
            )
        };
        let corners = [
            map(0.0, -DESCENT),
            map(width, -DESCENT),
            map(0.0, ASCENT),
            map(width, ASCENT),
        ];
        let bbox = corners.iter().fold(
            [
                f64::INFINITY,
                f64::INFINITY,
                f64::NEG_INFINITY,
                f64::NEG_INFINITY,
            ],
            |b, &(x, y)| [b[0].min(x), b[1].min(y), b[2].max(x), b[3].max(y)],
        );
        let size = (trm.m11 * trm.m22 - trm.m12 * trm.m21).abs().sqrt() * font_size;
        let (x, y) = map(0.0, 0.0);
        let (end_x, _) = map(width, 0.0);
        if !(bbox.iter().all(|v| v.is_finite()) && size.is_finite()) {
            return Ok(());
        }
        glyphs.push(Glyph {
            text: text.to_owned(),
            x,
            y,
            end_x,
            size: size.max(0.01),
            bbox,
        });
        Ok(())
    }

    fn begin_word(&mut self) -> Result<(), OutputError> {
        Ok(())
    }

    fn end_word(&mut self) -> Result<(), OutputError> {
        Ok(())
    }

    fn end_line(&mut self) -> Result<(), OutputError> {
        Ok(())
    }
}

/// Builds the text and its glyph table.
#[derive(Default)]
struct Builder {
    text: String,
    /// Code points in `text`.
    cps: u32,
    lines: Vec<LineGlyphs>,
    blocks: Vec<TextBlock>,
    pages: Vec<PageText>,
    paragraph_start: Option<usize>,
}

impl Builder {
    fn push_sep(&mut self, sep: &str) {
        self.text.push_str(sep);
        self.cps += sep.chars().count() as u32;
    }

    fn end_paragraph(&mut self) {
        if let Some(start) = self.paragraph_start.take() {
            let end = self.text.trim_end().len().max(start);
            if end > start {
                self.blocks.push(TextBlock {
                    range: start..end,
                    heading: None,
                });
            }
        }
    }

    fn start_line(&mut self, page: u32, new_paragraph: bool) {
        if new_paragraph {
            self.end_paragraph();
        }
        if self.paragraph_start.is_none() {
            if !self.text.is_empty() {
                self.push_sep("\n\n");
            }
            self.paragraph_start = Some(self.text.len());
        } else if !self.text.ends_with(' ') {
            // A paragraph's lines are reflowed: a line break inside a
            // paragraph is where the page ran out of width, not the end of
            // a sentence (the one sentence rule ends one at a line break,
            // which cut every wrapped sentence of a PDF in two candidates).
            self.push_sep(" ");
        }
        self.lines.push(LineGlyphs {
            page,
            start_cp: self.cps,
            y0: f32::INFINITY,
            y1: f32::NEG_INFINITY,
            xs: Vec::new(),
        });
    }

    fn push_char(&mut self, c: char, x0: f64, x1: f64, y: Option<(f64, f64)>) {
        self.text.push(c);
        self.cps += 1;
        if let Some(line) = self.lines.last_mut() {
            line.xs.push([x0 as f32, x1 as f32]);
            if let Some((y0, y1)) = y {
                line.y0 = line.y0.min(y0 as f32);
                line.y1 = line.y1.max(y1 as f32);
            }
        }
    }

    fn page(&mut self, number: u32, glyphs: &[Glyph]) {
        self.end_paragraph();
        let page_start = if self.text.is_empty() {
            0
        } else {
            self.text.len() + 2
        };
        let mut prev: Option<&Glyph> = None;
        let mut line_open = false;
        for g in glyphs {
            let chars: Vec<char> = g.text.chars().filter(|c| !c.is_control()).collect();
            if chars.is_empty() {
                continue;
            }
            let blank = chars.iter().all(|c| c.is_whitespace());
            let (new_line, new_paragraph, gap) = match prev {
                None => (true, false, false),
                Some(p) => {
                    let size = p.size.max(g.size);
                    let dy = (g.y - p.y).abs();
                    let back = g.x < p.end_x - size;
                    let new_line = dy > 0.5 * size || (back && dy > 0.1 * size);
                    let new_paragraph = dy > 1.7 * size;
                    (new_line, new_paragraph, g.x > p.end_x + 0.15 * size)
                }
            };
            if blank {
                // A space glyph: one space inside a line, nothing elsewhere.
                if line_open && !new_line && !self.text.ends_with(' ') {
                    self.push_char(' ', g.bbox[0], g.bbox[2], None);
                }
                prev = Some(g);
                continue;
            }
            if new_line || !line_open {
                self.start_line(number, new_paragraph);
                line_open = true;
            } else if gap && !self.text.ends_with(' ') {
                let from = prev.map_or(g.bbox[0], |p| p.end_x.min(g.bbox[0]));
                self.push_char(' ', from, g.bbox[0], None);
            }
            let y = Some((g.bbox[1], g.bbox[3]));
            for c in chars {
                if c.is_whitespace() {
                    if !self.text.ends_with(' ') {
                        self.push_char(' ', g.bbox[0], g.bbox[2], None);
                    }
                } else {
                    self.push_char(c, g.bbox[0], g.bbox[2], y);
                }
            }
            prev = Some(g);
        }
        self.end_paragraph();
        let start = page_start.min(self.text.len());
        self.pages.push(PageText {
            number,
            range: start..self.text.len(),
        });
    }
}

/// Decodes a PDF text string (UTF-16BE with its byte-order mark, else
/// PDFDocEncoding, read as Latin-1).
fn text_string(bytes: &[u8]) -> String {
    if let Some(rest) = bytes.strip_prefix(&[0xfe, 0xff]) {
        let units: Vec<u16> = rest
            .chunks_exact(2)
            .map(|p| u16::from_be_bytes([p[0], p[1]]))
            .collect();
        String::from_utf16_lossy(&units)
    } else if let Some(rest) = bytes.strip_prefix(&[0xef, 0xbb, 0xbf]) {
        String::from_utf8_lossy(rest).into_owned()
    } else {
        bytes.iter().map(|&b| char::from(b)).collect()
    }
}

fn metadata_title(doc: &lopdf::Document) -> Option<String> {
    let info = doc.trailer.get(b"Info").ok()?;
    let info = match info {
        lopdf::Object::Reference(id) => doc.get_dictionary(*id).ok()?,
        lopdf::Object::Dictionary(d) => d,
        _ => return None,
    };
    let lopdf::Object::String(bytes, _) = info.get(b"Title").ok()? else {
        return None;
    };
    let title = super::collapse_spaces(&text_string(bytes));
    Some(title).filter(|t| !t.is_empty())
}

/// Every font's ToUnicode entry in the form pdf-extract reads without
/// panicking (`super::cmap`): streams rewritten as plain CMaps, and
/// entries that are neither a stream nor `Identity-H` removed (the font's
/// encoding then decides, as for a font without one).
fn repair_to_unicode(doc: &mut lopdf::Document) {
    use lopdf::Object;
    let streams: std::collections::BTreeSet<lopdf::ObjectId> = doc
        .objects
        .iter()
        .filter(|(_, o)| matches!(o, Object::Stream(_)))
        .map(|(id, _)| *id)
        .collect();
    let mut targets = std::collections::BTreeSet::new();
    for object in doc.objects.values_mut() {
        visit_dicts(object, 0, &mut |dict| match dict.get(b"ToUnicode") {
            Ok(Object::Reference(id)) if streams.contains(id) => {
                targets.insert(*id);
            }
            Ok(Object::Name(name)) if name == b"Identity-H" => {}
            Ok(Object::Stream(_)) | Err(_) => {}
            Ok(_) => {
                dict.remove(b"ToUnicode");
            }
        });
    }
    for id in targets {
        if let Some(Object::Stream(stream)) = doc.objects.get_mut(&id) {
            let content = stream
                .decompressed_content()
                .unwrap_or_else(|_| stream.content.clone());
            stream.set_plain_content(super::cmap::canonical(&content));
        }
    }
}

/// Calls `f` on every dictionary inside `object`, a direct ToUnicode stream
/// rewritten in place on the way. Nesting is bounded: lopdf's own parser
/// limits it, and so does this walk.
fn visit_dicts(
    object: &mut lopdf::Object,
    depth: usize,
    f: &mut dyn FnMut(&mut lopdf::Dictionary),
) {
    use lopdf::Object;
    if depth > 64 {
        return;
    }
    let dict = match object {
        Object::Dictionary(d) => d,
        Object::Stream(s) => &mut s.dict,
        Object::Array(items) => {
            for item in items {
                visit_dicts(item, depth + 1, f);
            }
            return;
        }
        _ => return,
    };
    if let Ok(Object::Stream(stream)) = dict.get_mut(b"ToUnicode") {
        let content = stream
            .decompressed_content()
            .unwrap_or_else(|_| stream.content.clone());
        stream.set_plain_content(super::cmap::canonical(&content));
    }
    f(dict);
    for (_, value) in dict.iter_mut() {
        visit_dicts(value, depth + 1, f);
    }
}

pub(super) fn extract(bytes: &[u8]) -> Result<Extracted, ExtractError> {
    let mut doc = lopdf::Document::load_mem(bytes).map_err(|e| match e {
        lopdf::Error::Decryption(_) | lopdf::Error::InvalidPassword => ExtractError::Encrypted,
        other => corrupt(other),
    })?;
    if doc.is_encrypted() {
        // Permission-only encryption uses an empty user password.
        doc.decrypt("").map_err(|_| ExtractError::Encrypted)?;
    }
    let page_count = doc.get_pages().len();
    if page_count == 0 {
        return Err(corrupt("no pages"));
    }
    repair_to_unicode(&mut doc);
    let mut collector = Collector::default();
    pdf_extract::output_doc(&doc, &mut collector).map_err(corrupt)?;
    let mut builder = Builder::default();
    for (number, glyphs) in &collector.pages {
        builder.page(*number, glyphs);
    }
    if builder.text.trim().is_empty() {
        return Err(ExtractError::NoTextLayer { pages: page_count });
    }
    Ok(Extracted {
        format: Format::Pdf,
        title: metadata_title(&doc),
        text: builder.text,
        blocks: Some(builder.blocks),
        pages: builder.pages,
        layout: Some(DocLayout {
            lines: builder.lines,
        }),
    })
}

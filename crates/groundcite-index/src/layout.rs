//! Glyph boxes of extracted PDF text, and a quote's rectangles on its page.
//!
//! The PDF extractor keeps, for every character it puts on a line, the
//! horizontal extent of its glyph, and per line the vertical extent of its
//! glyphs, all in the page's user space (PDF points, unrotated page, origin
//! bottom left). Offsets count code points of the document's extracted
//! text, like the contract's spans count code points of a chunk.
//!
//! Stored per document as `layout/<xxh3-128 of the file>.bin` in the index
//! directory, so that an unchanged file keeps its table and a lookup needs
//! only the chunk ID: the manifest gives the file's hash. A table that is
//! missing or unreadable gives no location; it never fails a request.

use std::fs;
use std::io::Write;
use std::path::Path;

use groundcite_core::QuoteLocation;

use crate::error::IndexError;

/// Directory of the tables inside the index directory.
pub(crate) const LAYOUT_DIR: &str = "layout";

const MAGIC: &[u8; 4] = b"GCLY";
const VERSION: u32 = 1;

/// One line of text on a page.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct LineGlyphs {
    /// 1-based page number.
    pub(crate) page: u32,
    /// Code point offset of the line's first character in the text.
    pub(crate) start_cp: u32,
    /// Bottom and top of the line's glyphs.
    pub(crate) y0: f32,
    pub(crate) y1: f32,
    /// `[x0, x1]` of each character from `start_cp` on.
    pub(crate) xs: Vec<[f32; 2]>,
}

/// The glyph table of one document.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct DocLayout {
    /// Lines in text order.
    pub(crate) lines: Vec<LineGlyphs>,
}

/// A document's table together with where each of its chunks starts.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct StoredLayout {
    /// Code point offset of chunk `N` (1-based) at index `N - 1`.
    pub(crate) chunk_starts: Vec<u32>,
    pub(crate) layout: DocLayout,
}

impl DocLayout {
    /// Rectangles of code points `start..end` of the text, one per line
    /// (the union of the glyph boxes of the line's characters in range).
    /// `None` when no character in range has a box.
    pub(crate) fn locate(&self, start: u32, end: u32) -> Option<QuoteLocation> {
        if start >= end {
            return None;
        }
        // Lines are in text order: skip those that end before `start`.
        let first = self
            .lines
            .partition_point(|l| l.start_cp + l.xs.len() as u32 <= start);
        let mut page = None;
        let mut rects = Vec::new();
        for line in &self.lines[first..] {
            if line.start_cp >= end {
                break;
            }
            if page.is_some_and(|p| p != line.page) {
                break;
            }
            let from = start.saturating_sub(line.start_cp) as usize;
            let to = ((end - line.start_cp) as usize).min(line.xs.len());
            let Some(span) = line.xs.get(from..to).filter(|s| !s.is_empty()) else {
                continue;
            };
            if !(line.y0.is_finite() && line.y1.is_finite()) {
                continue;
            }
            let x0 = span.iter().map(|x| x[0]).fold(f32::INFINITY, f32::min);
            let x1 = span.iter().map(|x| x[1]).fold(f32::NEG_INFINITY, f32::max);
            page.get_or_insert(line.page);
            rects.push([round(x0), round(line.y0), round(x1), round(line.y1)]);
        }
        Some(QuoteLocation {
            page_number: page?,
            rects,
        })
    }
}

/// Two decimals: a hundredth of a point is far below a pixel.
fn round(v: f32) -> f64 {
    (f64::from(v) * 100.0).round() / 100.0
}

impl StoredLayout {
    pub(crate) fn path(index_dir: &Path, hash: &str) -> std::path::PathBuf {
        index_dir.join(LAYOUT_DIR).join(format!("{hash}.bin"))
    }

    /// Writes the table atomically (temporary file, then rename).
    pub(crate) fn save(&self, index_dir: &Path, hash: &str) -> Result<(), IndexError> {
        let dir = index_dir.join(LAYOUT_DIR);
        fs::create_dir_all(&dir).map_err(|e| IndexError::io("create directory", &dir, e))?;
        let path = Self::path(index_dir, hash);
        let tmp = dir.join(format!("{hash}.tmp"));
        let mut out = Vec::new();
        out.extend_from_slice(MAGIC);
        put(&mut out, VERSION);
        put(&mut out, self.chunk_starts.len() as u32);
        for s in &self.chunk_starts {
            put(&mut out, *s);
        }
        put(&mut out, self.layout.lines.len() as u32);
        for l in &self.layout.lines {
            put(&mut out, l.page);
            put(&mut out, l.start_cp);
            put(&mut out, l.xs.len() as u32);
            out.extend_from_slice(&l.y0.to_le_bytes());
            out.extend_from_slice(&l.y1.to_le_bytes());
            for x in &l.xs {
                out.extend_from_slice(&x[0].to_le_bytes());
                out.extend_from_slice(&x[1].to_le_bytes());
            }
        }
        let write = || -> std::io::Result<()> {
            let mut file = fs::File::create(&tmp)?;
            file.write_all(&out)?;
            file.sync_all()
        };
        write().map_err(|e| IndexError::io("write layout", &tmp, e))?;
        fs::rename(&tmp, &path).map_err(|e| IndexError::io("replace layout", &path, e))
    }

    /// Reads a table; `None` when missing or unreadable.
    pub(crate) fn load(index_dir: &Path, hash: &str) -> Option<StoredLayout> {
        let bytes = fs::read(Self::path(index_dir, hash)).ok()?;
        Self::parse(&bytes)
    }

    fn parse(bytes: &[u8]) -> Option<StoredLayout> {
        let mut r = Cursor { bytes, at: 0 };
        if r.take(4)? != MAGIC || r.u32()? != VERSION {
            return None;
        }
        let n = r.u32()? as usize;
        let mut chunk_starts = Vec::with_capacity(n.min(bytes.len() / 4));
        for _ in 0..n {
            chunk_starts.push(r.u32()?);
        }
        let n = r.u32()? as usize;
        let mut lines = Vec::with_capacity(n.min(bytes.len() / 20));
        for _ in 0..n {
            let page = r.u32()?;
            let start_cp = r.u32()?;
            let len = r.u32()? as usize;
            let y0 = r.f32()?;
            let y1 = r.f32()?;
            let mut xs = Vec::with_capacity(len.min(bytes.len() / 8));
            for _ in 0..len {
                xs.push([r.f32()?, r.f32()?]);
            }
            lines.push(LineGlyphs {
                page,
                start_cp,
                y0,
                y1,
                xs,
            });
        }
        Some(StoredLayout {
            chunk_starts,
            layout: DocLayout { lines },
        })
    }
}

fn put(out: &mut Vec<u8>, v: u32) {
    out.extend_from_slice(&v.to_le_bytes());
}

struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Cursor<'_> {
    fn take(&mut self, n: usize) -> Option<&[u8]> {
        let s = self.bytes.get(self.at..self.at.checked_add(n)?)?;
        self.at += n;
        Some(s)
    }
    fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?))
    }
    fn f32(&mut self) -> Option<f32> {
        Some(f32::from_le_bytes(self.take(4)?.try_into().ok()?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> StoredLayout {
        StoredLayout {
            chunk_starts: vec![0, 6],
            layout: DocLayout {
                lines: vec![
                    LineGlyphs {
                        page: 2,
                        start_cp: 0,
                        y0: 700.0,
                        y1: 712.0,
                        xs: (0..5)
                            .map(|i| [72.0 + 6.0 * i as f32, 78.0 + 6.0 * i as f32])
                            .collect(),
                    },
                    LineGlyphs {
                        page: 2,
                        start_cp: 6,
                        y0: 686.0,
                        y1: 698.0,
                        xs: (0..5)
                            .map(|i| [72.0 + 6.0 * i as f32, 78.0 + 6.0 * i as f32])
                            .collect(),
                    },
                ],
            },
        }
    }

    #[test]
    fn rectangles_per_line() {
        let s = sample();
        let one = s.layout.locate(1, 3).unwrap();
        assert_eq!(one.page_number, 2);
        assert_eq!(one.rects, [[78.0, 700.0, 90.0, 712.0]]);
        // Across the line break (code point 5 is the newline, without a box).
        let two = s.layout.locate(3, 8).unwrap();
        assert_eq!(
            two.rects,
            [[90.0, 700.0, 102.0, 712.0], [72.0, 686.0, 84.0, 698.0]]
        );
        assert_eq!(s.layout.locate(5, 6), None);
        assert_eq!(s.layout.locate(40, 50), None);
    }

    #[test]
    fn round_trip_and_garbage() {
        let dir = tempfile::tempdir().unwrap();
        let s = sample();
        s.save(dir.path(), "abc").unwrap();
        assert_eq!(StoredLayout::load(dir.path(), "abc"), Some(s));
        assert_eq!(StoredLayout::load(dir.path(), "missing"), None);
        let mut bytes = fs::read(StoredLayout::path(dir.path(), "abc")).unwrap();
        bytes.truncate(bytes.len() - 3);
        assert_eq!(StoredLayout::parse(&bytes), None);
        assert_eq!(
            StoredLayout::parse(b"GCLY\x01\x00\x00\x00\xff\xff\xff\xff"),
            None
        );
    }
}

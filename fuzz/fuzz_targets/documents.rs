//! Arbitrary bytes as an HTML page, a DOCX, ODT or EPUB file, or the main
//! XML part of a DOCX, ODT or EPUB package (the first byte picks),
//! extracted and chunked. Must not panic; every chunk is the extracted text under its
//! byte range, never empty, never over the size limit.
//!
//! Raw bytes seldom get past the ZIP reader, so the XML walkers are fed
//! through a package made here: the bytes become `word/document.xml`,
//! `content.xml`, or an EPUB's chapter or package document.
//!
//! PDF is left out: its parser (pdf-extract over lopdf) may panic on bad
//! files, which `groundcite_index::extract` catches and reports as a corrupt
//! file, but libFuzzer's panic hook aborts before any catch.
#![no_main]

use std::io::Write;

use groundcite_index::{ChunkerConfig, chunk_extracted, extract};
use libfuzzer_sys::fuzz_target;

fn package(parts: &[(&str, &[u8])]) -> Vec<u8> {
    let mut out = std::io::Cursor::new(Vec::new());
    let mut zip = zip::ZipWriter::new(&mut out);
    let opts = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Stored);
    for (name, body) in parts {
        zip.start_file(*name, opts).unwrap();
        zip.write_all(body).unwrap();
    }
    zip.finish().unwrap();
    out.into_inner()
}

const CONTAINER: &[u8] = br#"<container><rootfiles><rootfile full-path="OPS/book.opf"/></rootfiles></container>"#;
const OPF: &[u8] = br#"<package><metadata><dc:title>T</dc:title></metadata><manifest><item id="a" href="a.xhtml" media-type="application/xhtml+xml"/><item id="c" href="../c.xhtml"/></manifest><spine><itemref idref="a"/><itemref idref="c"/></spine></package>"#;

fuzz_target!(|data: &[u8]| {
    let Some((&pick, bytes)) = data.split_first() else {
        return;
    };
    let (name, file) = match pick % 8 {
        0 => ("page.html", bytes.to_vec()),
        1 => ("file.docx", bytes.to_vec()),
        2 => ("file.odt", bytes.to_vec()),
        3 => ("file.docx", package(&[("word/document.xml", bytes)])),
        5 => ("book.epub", bytes.to_vec()),
        6 => (
            "book.epub",
            package(&[
                ("META-INF/container.xml", CONTAINER),
                ("OPS/book.opf", OPF),
                ("OPS/a.xhtml", bytes),
                ("c.xhtml", bytes),
            ]),
        ),
        7 => (
            "book.epub",
            package(&[
                ("mimetype", b"application/epub+zip"),
                ("META-INF/container.xml", CONTAINER),
                ("OPS/book.opf", bytes),
                ("OPS/a.xhtml", bytes),
            ]),
        ),
        _ => (
            "file.odt",
            package(&[
                ("mimetype", b"application/vnd.oasis.opendocument.text"),
                ("content.xml", bytes),
                ("styles.xml", bytes),
                ("meta.xml", bytes),
            ]),
        ),
    };
    let Ok(doc) = extract(name, &file) else {
        return;
    };
    let cfg = ChunkerConfig { max_chars: 200, overlap_chars: 30 };
    for c in chunk_extracted(name, &doc, &cfg) {
        assert_eq!(doc.text.get(c.byte_range.clone()), Some(c.content.as_str()));
        assert!(!c.content.trim().is_empty());
        assert!(c.content.chars().count() <= cfg.max_chars);
        assert_eq!(c.page_number, None);
    }
});

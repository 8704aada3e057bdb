//! PDF, HTML, DOCX, ODT and EPUB through the real index: documents made here (PDFs with
//! lopdf, DOCX with zip), indexed, searched, re-indexed, and quotes located
//! on their page.

#![allow(clippy::unwrap_used)]

use std::fs;
use std::io::Write;
use std::path::Path;

use groundcite_core::{
    ChunkSet, Citation, Claim, GroundedAnswer, MatchProfile, Provenance, Span, verify,
};
use groundcite_index::{ExtractError, Format, Index, IndexConfig, extract};
use lopdf::content::{Content, Operation};
use lopdf::{Document, Object, Stream, dictionary};

/// Left margin, first baseline and line step of the fixture PDFs (points).
const LEFT: f64 = 72.0;
const TOP: f64 = 720.0;
const STEP: f64 = 14.0;

/// A PDF whose pages hold `pages[i]`: lines of Helvetica 12 pt, an empty
/// line leaving a paragraph gap. `rotate` sets `/Rotate` on every page.
fn make_pdf(title: Option<&str>, pages: &[&[&str]], rotate: i64) -> Vec<u8> {
    let mut doc = Document::with_version("1.5");
    let pages_id = doc.new_object_id();
    let font_id = doc.add_object(dictionary! {
        "Type" => "Font", "Subtype" => "Type1", "BaseFont" => "Helvetica",
        "Encoding" => "WinAnsiEncoding",
    });
    let resources_id = doc.add_object(dictionary! {
        "Font" => dictionary! { "F1" => font_id },
    });
    let mut kids = Vec::new();
    for lines in pages {
        let mut ops = vec![
            Operation::new("BT", vec![]),
            Operation::new("Tf", vec!["F1".into(), 12.into()]),
        ];
        let mut y = TOP;
        for line in *lines {
            if !line.is_empty() {
                ops.push(Operation::new(
                    "Tm",
                    vec![
                        1.into(),
                        0.into(),
                        0.into(),
                        1.into(),
                        LEFT.into(),
                        y.into(),
                    ],
                ));
                ops.push(Operation::new("Tj", vec![Object::string_literal(*line)]));
                y -= STEP;
            } else {
                y -= 2.0 * STEP;
            }
        }
        ops.push(Operation::new("ET", vec![]));
        let content = Content { operations: ops };
        let content_id = doc.add_object(Stream::new(dictionary! {}, content.encode().unwrap()));
        let page_id = doc.add_object(dictionary! {
            "Type" => "Page", "Parent" => pages_id, "Contents" => content_id,
            "Rotate" => rotate,
        });
        kids.push(page_id.into());
    }
    let count = kids.len() as i64;
    doc.objects.insert(
        pages_id,
        Object::Dictionary(dictionary! {
            "Type" => "Pages", "Kids" => kids, "Count" => count,
            "Resources" => resources_id,
            "MediaBox" => vec![0.into(), 0.into(), 612.into(), 792.into()],
        }),
    );
    let catalog_id = doc.add_object(dictionary! { "Type" => "Catalog", "Pages" => pages_id });
    doc.trailer.set("Root", catalog_id);
    if let Some(title) = title {
        let info = doc.add_object(dictionary! { "Title" => Object::string_literal(title) });
        doc.trailer.set("Info", info);
    }
    let mut out = Vec::new();
    doc.save_to(&mut out).unwrap();
    out
}

/// A PDF page with a drawn rectangle and no text (a scan has an image).
fn make_textless_pdf() -> Vec<u8> {
    let mut doc = Document::with_version("1.5");
    let pages_id = doc.new_object_id();
    let content = Content {
        operations: vec![
            Operation::new("re", vec![10.into(), 10.into(), 100.into(), 100.into()]),
            Operation::new("f", vec![]),
        ],
    };
    let content_id = doc.add_object(Stream::new(dictionary! {}, content.encode().unwrap()));
    let page_id = doc.add_object(
        dictionary! { "Type" => "Page", "Parent" => pages_id, "Contents" => content_id },
    );
    doc.objects.insert(
        pages_id,
        Object::Dictionary(dictionary! {
            "Type" => "Pages", "Kids" => vec![page_id.into()], "Count" => 1,
            "MediaBox" => vec![0.into(), 0.into(), 612.into(), 792.into()],
        }),
    );
    let catalog_id = doc.add_object(dictionary! { "Type" => "Catalog", "Pages" => pages_id });
    doc.trailer.set("Root", catalog_id);
    let mut out = Vec::new();
    doc.save_to(&mut out).unwrap();
    out
}

/// Why `bytes` named `name` is a corrupt file of its format (panics when
/// it is read, or fails otherwise).
fn corrupt_reason(name: &str, bytes: &[u8]) -> String {
    match extract(name, bytes) {
        Err(ExtractError::Corrupt { format, message }) => {
            assert_eq!(Some(format), name.rsplit('.').next());
            message
        }
        other => panic!("{name}: {other:?}"),
    }
}

/// A fresh index of `docs` (its directory lives as long as the guard).
fn index_folder(docs: &Path) -> (tempfile::TempDir, Index, groundcite_index::UpdateReport) {
    let dir = tempfile::tempdir().unwrap();
    let mut index = Index::open_or_create(dir.path()).unwrap();
    let report = index
        .update(docs, &IndexConfig::default(), &mut |_| {})
        .unwrap();
    (dir, index, report)
}

/// A ZIP of `(name, text)` parts, in order (DOCX, ODT and EPUB packages).
fn zip_parts<N: AsRef<str>, B: AsRef<str>>(parts: impl IntoIterator<Item = (N, B)>) -> Vec<u8> {
    let mut out = std::io::Cursor::new(Vec::new());
    {
        let mut zip = zip::ZipWriter::new(&mut out);
        let opts = zip::write::SimpleFileOptions::default();
        for (name, body) in parts {
            zip.start_file(name.as_ref(), opts).unwrap();
            zip.write_all(body.as_ref().as_bytes()).unwrap();
        }
        zip.finish().unwrap();
    }
    out.into_inner()
}

/// A DOCX with a title in its core properties, a `Heading1` paragraph
/// (style named "heading 1"), body paragraphs split into runs, a tab (read
/// as a space, like all white space inside a paragraph), an
/// entity and a deleted revision.
fn make_docx(title: &str) -> Vec<u8> {
    let document = r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>
<w:p><w:pPr><w:pStyle w:val="Heading1"/></w:pPr><w:r><w:t>Returns &amp; exchanges</w:t></w:r></w:p>
<w:p><w:r><w:t xml:space="preserve">Items can be returned </w:t></w:r><w:r><w:t>within 45 days.</w:t></w:r><w:del><w:r><w:delText>within 10 days.</w:delText></w:r></w:del></w:p>
<w:p><w:r><w:t>Code</w:t></w:r><w:r><w:tab/><w:t>RMA-7</w:t></w:r></w:p>
<w:p><w:pPr><w:pStyle w:val="Heading1"/></w:pPr><w:r><w:t>Warranty</w:t></w:r></w:p>
<w:p><w:r><w:t>Hardware carries a two-year warranty.</w:t></w:r></w:p>
</w:body></w:document>"#;
    let styles = r#"<?xml version="1.0" encoding="UTF-8"?>
<w:styles xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main">
<w:style w:type="paragraph" w:styleId="Heading1"><w:name w:val="heading 1"/></w:style></w:styles>"#;
    let core = format!(
        r#"<?xml version="1.0" encoding="UTF-8"?><cp:coreProperties xmlns:cp="http://schemas.openxmlformats.org/package/2006/metadata/core-properties" xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>{title}</dc:title></cp:coreProperties>"#
    );
    zip_parts([
        ("word/document.xml", document.to_string()),
        ("word/styles.xml", styles.to_string()),
        ("docProps/core.xml", core),
    ])
}

const PAGE_1: &[&str] = &[
    "Shipping guide",
    "",
    "Standard shipping takes 3 to 7 business days.",
    "Express shipping takes 1 to 2 business days.",
];
const PAGE_2: &[&str] = &[
    "Returns",
    "",
    "Refunds are issued within 5 business days of",
    "receiving the returned item.",
];

fn write(dir: &Path, rel: &str, bytes: &[u8]) {
    let path = dir.join(rel);
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, bytes).unwrap();
}

#[test]
fn pdf_text_pages_title_and_glyph_boxes() {
    let pdf = make_pdf(Some("Shop handbook"), &[PAGE_1, PAGE_2], 0);
    let e = extract("guide.pdf", &pdf).unwrap();
    assert_eq!(e.format, Format::Pdf);
    assert_eq!(e.title.as_deref(), Some("Shop handbook"));
    let pages: Vec<(u32, &str)> = e.pages().map(|(n, r)| (n, &e.text[r])).collect();
    assert_eq!(
        pages,
        [
            (
                1,
                "Shipping guide\n\nStandard shipping takes 3 to 7 business days. Express shipping takes 1 to 2 business days."
            ),
            (
                2,
                "Returns\n\nRefunds are issued within 5 business days of receiving the returned item."
            ),
        ]
    );
}

#[test]
fn unreadable_files_are_named_and_the_rest_is_indexed() {
    assert_eq!(
        extract("scan.pdf", &make_textless_pdf()),
        Err(ExtractError::NoTextLayer { pages: 1 })
    );
    let docs = tempfile::tempdir().unwrap();
    write(docs.path(), "ok.pdf", &make_pdf(None, &[PAGE_1], 0));
    write(docs.path(), "scan.pdf", &make_textless_pdf());
    write(
        docs.path(),
        "broken.pdf",
        b"%PDF-1.7\n1 0 obj << /Type /Catalog >> endobj\ntrailer <<>>\n%%EOF",
    );
    write(
        docs.path(),
        "truncated.pdf",
        &make_pdf(None, &[PAGE_1], 0)[..200],
    );
    write(docs.path(), "broken.docx", b"PK\x03\x04 not really a zip");
    write(docs.path(), "notes.md", b"# Notes\n\nStill indexed.\n");
    let (_index_dir, _index, report) = index_folder(docs.path());
    assert_eq!(report.added, 2, "{report:?}");
    let skipped: Vec<&str> = report.skipped.iter().map(|(p, _)| p.as_str()).collect();
    assert_eq!(
        skipped,
        ["broken.docx", "broken.pdf", "scan.pdf", "truncated.pdf"]
    );
    let reason = |p: &str| &report.skipped.iter().find(|(q, _)| q == p).unwrap().1;
    assert!(
        reason("scan.pdf").contains("no text layer"),
        "{}",
        reason("scan.pdf")
    );
    assert!(
        reason("broken.pdf").starts_with("not a readable pdf file"),
        "{}",
        reason("broken.pdf")
    );
    assert!(
        reason("broken.docx").starts_with("not a readable docx file"),
        "{}",
        reason("broken.docx")
    );
}

#[test]
fn html_and_docx_sections_become_headings_without_pages() {
    let docs = tempfile::tempdir().unwrap();
    write(
        docs.path(),
        "site/returns.html",
        b"<html><head><title>Returns</title><script>var x = 1;</script></head><body><nav>Home | Shop</nav>\
          <h1>Returns policy</h1><p>Unworn shoes may be returned within 60 days.</p>\
          <h2>Exchanges</h2><p>Exchanges ship free of charge.</p></body></html>",
    );
    write(docs.path(), "handbook.docx", &make_docx("Service handbook"));
    let (_index_dir, index, report) = index_folder(docs.path());
    assert_eq!((report.added, report.skipped.len()), (2, 0), "{report:?}");

    let hit = &index.search("exchanges free", 1).unwrap()[0];
    assert_eq!(hit.chunk_id, "site/returns.html#chunk-2");
    assert_eq!(hit.content, "Exchanges\n\nExchanges ship free of charge.");
    assert_eq!(hit.source_title.as_deref(), Some("Returns"));
    assert_eq!(hit.page_number, None);
    assert!(
        index
            .all_chunks()
            .unwrap()
            .iter()
            .all(|c| !c.content.contains("Home") && !c.content.contains("var x"))
    );

    let hit = &index.search("RMA code for returned items", 1).unwrap()[0];
    assert_eq!(hit.chunk_id, "handbook.docx#chunk-1");
    assert_eq!(
        hit.content,
        "Returns & exchanges\n\nItems can be returned within 45 days.\n\nCode RMA-7"
    );
    assert_eq!(hit.source_title.as_deref(), Some("Service handbook"));
    assert_eq!(hit.page_number, None);
    assert_eq!(
        index.get("handbook.docx#chunk-2").unwrap().unwrap().content,
        "Warranty\n\nHardware carries a two-year warranty."
    );
}

/// A table row is read as one paragraph (a cell means little without its
/// row; an empty cell keeps its place), and a heading of an extracted page is context, never a stored
/// sentence: the embedded model cannot quote "Ports Used for Sharing" as a
/// claim, as it cannot quote a Markdown `#` line.
#[test]
fn html_table_rows_are_paragraphs_and_headings_are_never_sentences() {
    let docs = tempfile::tempdir().unwrap();
    write(
        docs.path(),
        "firewalls.html",
        b"<html><head><title>Firewalls</title></head><body>\
          <h1>Ports Used for Printer Sharing</h1>\
          <p>Table 2 lists the ports used for SMB printer sharing.</p>\
          <table><thead><tr><th>Port</th><th>Protocol</th><th>Description</th></tr></thead>\
          <tbody><tr><td>139 (SMB)</td><td>TCP</td><td>Windows SMB printing.</td></tr>\
          <tr><td>445</td><td></td><td>Authenticated <b>SMB</b> printing.</td></tr></tbody></table>\
          </body></html>",
    );
    let (_index_dir, index, _) = index_folder(docs.path());
    let chunk = index.get("firewalls.html#chunk-1").unwrap().unwrap();
    assert_eq!(
        chunk.content,
        "Ports Used for Printer Sharing\n\n\
         Table 2 lists the ports used for SMB printer sharing.\n\n\
         Port | Protocol | Description\n\n\
         139 (SMB) | TCP | Windows SMB printing.\n\n\
         445 | | Authenticated SMB printing."
    );
    let sentences: Vec<&str> = index
        .sentences_of(&chunk.chunk_id, None)
        .into_iter()
        .map(|h| &chunk.content[h.start..h.end])
        .collect();
    assert_eq!(
        sentences,
        [
            "Table 2 lists the ports used for SMB printer sharing.",
            "Port | Protocol | Description",
            "139 (SMB) | TCP | Windows SMB printing.",
            "445 | | Authenticated SMB printing.",
        ]
    );
    // The heading is still the sentences' context.
    assert!(
        index
            .sentences_of(&chunk.chunk_id, None)
            .iter()
            .all(|h| h.context == "Firewalls > Ports Used for Printer Sharing"),
        "{:?}",
        index.sentences_of(&chunk.chunk_id, None)
    );
}

/// The span of `quote` in `content`, in code points.
fn span_of(content: &str, quote: &str) -> Span {
    let byte = content.find(quote).unwrap();
    let start = content[..byte].chars().count();
    Span::new(start, start + quote.chars().count())
}

#[test]
fn pdf_chunks_know_their_page_and_quotes_their_rectangles() {
    for rotate in [0, 90] {
        let docs = tempfile::tempdir().unwrap();
        write(
            docs.path(),
            "manuals/shop.pdf",
            &make_pdf(Some("Shop handbook"), &[PAGE_1, PAGE_2], rotate),
        );
        let index_dir = tempfile::tempdir().unwrap();
        let mut index = Index::open_or_create(index_dir.path()).unwrap();
        let report = index
            .update(docs.path(), &IndexConfig::default(), &mut |_| {})
            .unwrap();
        assert_eq!((report.added, report.chunks), (1, 2), "{report:?}");

        let hit = &index.search("how fast are refunds issued", 1).unwrap()[0];
        assert_eq!(hit.chunk_id, "manuals/shop.pdf#chunk-2");
        assert_eq!(hit.page_number, Some(2));
        assert_eq!(hit.source_title.as_deref(), Some("Shop handbook"));
        let first = index.get("manuals/shop.pdf#chunk-1").unwrap().unwrap();
        assert_eq!(first.page_number, Some(1));

        // A quote across the line break (the paragraph reflowed: a space
        // where the line broke): one rectangle per line, in PDF
        // points of the unrotated page (Helvetica 12 pt at x = 72; the
        // second body line's baseline is 720 - 14 - 28 - 14, as drawn,
        // whatever the page's /Rotate).
        let quote = "within 5 business days of receiving";
        let loc = index
            .locate(&hit.chunk_id, span_of(&hit.content, quote))
            .unwrap();
        assert_eq!(loc.page_number, 2);
        assert_eq!(loc.rects.len(), 2, "{loc:?}");
        let [x0, y0, x1, y1] = loc.rects[1];
        assert!((x0 - LEFT).abs() < 0.05, "{loc:?}");
        let baseline = TOP - 4.0 * STEP;
        assert!(
            y0 < baseline && baseline < y1 && (y1 - y0 - 12.0).abs() < 0.05,
            "{loc:?}"
        );
        // "receiving" in Helvetica: 500+556+444+556+444+222+500+222+556 = 4000/1000 em.
        assert!((x1 - (LEFT + 48.0)).abs() < 0.05, "{loc:?}");
        let [a0, _, a1, _] = loc.rects[0];
        assert!(a0 > LEFT + 100.0 && a1 > a0, "{loc:?}");

        // Through the verifier and the contract.
        let chunks = ChunkSet::new(vec![hit.clone(), first.clone()]).unwrap();
        let answer = GroundedAnswer {
            answerable: true,
            claims: vec![Claim {
                text: "Refunds take 5 business days.".into(),
                citations: vec![Citation {
                    chunk_id: hit.chunk_id.clone(),
                    quote: quote.into(),
                }],
            }],
        };
        let provenance = Provenance {
            trace_id: "t".into(),
            created_at: "2026-01-01T00:00:00Z".into(),
            question: None,
            model: None,
        };
        let mut contract = verify(&answer, &chunks, MatchProfile::default(), provenance);
        assert!(contract.answerable, "{contract:?}");
        assert_eq!(contract.sources[0].page_number, Some(2));
        index.attach_locations(&mut contract);
        assert_eq!(
            contract.claims[0].citations[0].location.as_ref(),
            Some(&loc)
        );
        let json = serde_json::to_value(&contract).unwrap();
        assert_eq!(
            json["claims"][0]["citations"][0]["location"]["page_number"],
            2
        );
    }
}

#[test]
fn changed_pdf_is_reindexed_and_old_glyph_tables_go() {
    let docs = tempfile::tempdir().unwrap();
    write(docs.path(), "a.pdf", &make_pdf(None, &[PAGE_1], 0));
    write(docs.path(), "b.pdf", &make_pdf(None, &[PAGE_2], 0));
    let index_dir = tempfile::tempdir().unwrap();
    let mut index = Index::open_or_create(index_dir.path()).unwrap();
    let cfg = IndexConfig::default();
    index.update(docs.path(), &cfg, &mut |_| {}).unwrap();
    let tables = || {
        fs::read_dir(index_dir.path().join("layout"))
            .unwrap()
            .count()
    };
    assert_eq!(tables(), 2);

    let again = index.update(docs.path(), &cfg, &mut |_| {}).unwrap();
    assert_eq!((again.unchanged, again.changed, again.chunks), (2, 0, 0));

    write(docs.path(), "a.pdf", &make_pdf(None, &[PAGE_2, PAGE_1], 0));
    fs::remove_file(docs.path().join("b.pdf")).unwrap();
    let changed = index.update(docs.path(), &cfg, &mut |_| {}).unwrap();
    assert_eq!((changed.changed, changed.removed), (1, 1), "{changed:?}");
    assert_eq!(tables(), 1);
    let c = index.get("a.pdf#chunk-2").unwrap().unwrap();
    assert_eq!(c.page_number, Some(2));
    assert!(c.content.starts_with("Shipping guide"));
    let loc = index
        .locate("a.pdf#chunk-2", span_of(&c.content, "Shipping"))
        .unwrap();
    assert_eq!(loc.page_number, 2);
    assert_eq!(index.locate("a.pdf#chunk-9", Span::new(0, 3)), None);
}

/// The text of `testdata/odt/travel-policy.fodt` as the document shows it:
/// its ODT and DOCX (both saved by LibreOffice) must read as this.
const TRAVEL_POLICY: &str = "Northwind travel policy\n\n\
         Booking travel\n\n\
         Book every business trip through the travel portal at least 14 days before you leave. \
         The portal applies the negotiated rates automatically.\n\n\
         Trips booked later need your manager's written approval.\n\n\
         Rail and air\n\n\
         Take the train for journeys under 4 hours. Flights are booked in economy class.\n\n\
         Seat reservations are reimbursed.\n\n\
         Checked baggage up to 23 kg is reimbursed.\n\n\
         Daily allowances\n\n\
         Trips over 8 hours | €28 per day\n\nOvernight stays | €40 per day & hotel";

/// The LibreOffice ODT of `testdata/odt/travel-policy.fodt` (made with
/// `soffice --headless --convert-to odt:writer8 travel-policy.fodt`):
/// a title paragraph, a table of contents, a footnote, a tracked deletion,
/// a comment, a list, a table, `<text:s>` spaces and a hidden section.
fn libreoffice_odt() -> Vec<u8> {
    fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/odt/travel-policy.odt"))
        .unwrap()
}

#[test]
fn odt_from_libreoffice_reads_the_body_and_leaves_out_what_is_not_text() {
    let e = extract("policies/travel.odt", &libreoffice_odt()).unwrap();
    assert_eq!(e.format, Format::Odt);
    assert_eq!(e.title.as_deref(), Some("Travel policy 2026"));
    assert_eq!(e.text, TRAVEL_POLICY);

    let docs = tempfile::tempdir().unwrap();
    write(docs.path(), "policies/travel.odt", &libreoffice_odt());
    let (_index_dir, index, report) = index_folder(docs.path());
    assert_eq!((report.added, report.skipped.len()), (1, 0), "{report:?}");
    let hit = &index.search("how heavy can checked baggage be", 1).unwrap()[0];
    assert!(hit.chunk_id.starts_with("policies/travel.odt#chunk-"));
    assert!(
        hit.content.contains("Checked baggage up to 23 kg"),
        "{hit:?}"
    );
    assert_eq!(hit.source_title.as_deref(), Some("Travel policy 2026"));
    assert_eq!(hit.page_number, None);
    // Every chunk under a heading starts with it (headings start sections).
    let chunks = index.all_chunks().unwrap();
    assert!(
        chunks
            .iter()
            .any(|c| c.content.starts_with("Rail and air\n\nTake the train")),
        "{chunks:?}"
    );
}

/// An ODT package made here: `content` is the body of `<office:text>`.
fn make_odt(mimetype: &str, meta: Option<&str>, content: &str, encrypted: bool) -> Vec<u8> {
    let content = format!(
        r#"<?xml version="1.0" encoding="UTF-8"?>
<office:document-content xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" xmlns:style="urn:oasis:names:tc:opendocument:xmlns:style:1.0" xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" xmlns:draw="urn:oasis:names:tc:opendocument:xmlns:drawing:1.0" xmlns:svg="urn:oasis:names:tc:opendocument:xmlns:svg-compatible:1.0"><office:automatic-styles><style:style style:name="P1" style:family="paragraph" style:parent-style-name="Title"/><style:style style:name="P2" style:family="paragraph" style:parent-style-name="Heading_20_3"/></office:automatic-styles><office:body><office:text>{content}</office:text></office:body></office:document-content>"#
    );
    let manifest = if encrypted {
        r#"<manifest:manifest xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0"><manifest:file-entry manifest:full-path="content.xml"><manifest:encryption-data manifest:checksum-type="SHA1/1K"/></manifest:file-entry></manifest:manifest>"#
    } else {
        r#"<manifest:manifest xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0"/>"#
    };
    let mut parts = vec![
        ("mimetype", mimetype.to_owned()),
        ("META-INF/manifest.xml", manifest.to_owned()),
        ("content.xml", content),
    ];
    if let Some(title) = meta {
        parts.push((
            "meta.xml",
            format!(
                r#"<office:document-meta xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" xmlns:dc="http://purl.org/dc/elements/1.1/"><office:meta><dc:title>{title}</dc:title></office:meta></office:document-meta>"#
            ),
        ));
    }
    zip_parts(parts)
}

const ODT_MIME: &str = "application/vnd.oasis.opendocument.text";

#[test]
fn odt_titles_styles_frames_and_unreadable_packages() {
    // No meta title: the paragraph whose automatic style inherits from
    // `Title` names the document; a style inheriting from `Heading 3` is a
    // heading. A text frame's paragraph (with its image description) is
    // read after the paragraph that anchors it.
    let body = r#"<text:p text:style-name="P1">Expense guide</text:p><text:p text:style-name="P2">Receipts</text:p><text:p>Keep receipts for 6 years.<draw:frame><draw:text-box><text:p>Scans count as receipts.</text:p></draw:text-box><svg:desc>A scanner</svg:desc></draw:frame> Submit them monthly.</text:p><text:h>Level one by default</text:h><text:h text:outline-level="9">Deep</text:h>"#;
    let e = extract("expenses.odt", &make_odt(ODT_MIME, None, body, false)).unwrap();
    assert_eq!(e.title.as_deref(), Some("Expense guide"));
    assert_eq!(
        e.text,
        "Expense guide\n\nReceipts\n\nKeep receipts for 6 years. Submit them monthly.\n\n\
         Scans count as receipts.\n\nLevel one by default\n\nDeep"
    );
    // Blank meta title: the Title paragraph still names it.
    let e = extract("expenses.odt", &make_odt(ODT_MIME, Some("  "), body, false)).unwrap();
    assert_eq!(e.title.as_deref(), Some("Expense guide"));
    // Headings only: the first heading names it.
    let e = extract(
        "h.odt",
        &make_odt(
            ODT_MIME,
            None,
            "<text:h>Overview</text:h><text:p>Text.</text:p>",
            false,
        ),
    )
    .unwrap();
    assert_eq!(e.title.as_deref(), Some("Overview"));

    let err = |bytes: &[u8]| corrupt_reason("x.odt", bytes);
    let spreadsheet = make_odt(
        "application/vnd.oasis.opendocument.spreadsheet",
        None,
        "",
        false,
    );
    assert!(
        err(&spreadsheet).contains("not an OpenDocument text"),
        "{}",
        err(&spreadsheet)
    );
    let locked = make_odt(ODT_MIME, None, "<text:p>secret</text:p>", true);
    assert!(
        err(&locked).contains("password-protected"),
        "{}",
        err(&locked)
    );
    assert!(!err(b"PK\x03\x04 not really a zip").is_empty());
    let truncated = &libreoffice_odt()[..4000];
    assert!(!err(truncated).is_empty());
}

/// The LibreOffice EPUB of `testdata/odt/travel-policy.odt`
/// (`soffice --headless --convert-to epub:EPUB travel-policy.odt`): two
/// XHTML sections, a navigation document, a footnote as an `<aside>`.
/// LibreOffice's export writes headings as plain paragraphs and keeps the
/// tracked deletion and the hidden section as text: the book shows them,
/// so they are read.
#[test]
fn epub_from_libreoffice_reads_the_spine_in_order() {
    let bytes = fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/epub/travel-policy.epub"),
    )
    .unwrap();
    let e = extract("books/travel.epub", &bytes).unwrap();
    assert_eq!(e.format, Format::Epub);
    assert_eq!(e.title.as_deref(), Some("Travel policy 2026"));
    assert_eq!(
        e.text,
        "Northwind travel policy\n\n\
         Booking travel\n\n\
         Book every business trip through the travel portal at least 14 days before you leave. \
         The portal applies the negotiated rates automatically.\n\n\
         Rail and air\n\n\
         Take the train for journeys under 4 hours.Business class is never reimbursed. \
         Flights are booked in economy class.\n\n\
         Seat reservations are reimbursed.\n\n\
         Checked baggage up to 23 kg is reimbursed.\n\n\
         Daily allowances\n\n\
         Trips over 8 hours | €28 per day\n\nOvernight stays | €40 per day & hotel\n\n\
         Allowances rise to €50 in 2027.\n\n\
         Trips booked later need your manager's written approval."
    );
}

/// An EPUB made here: `pages` are (path, XHTML body) in spine order, the
/// package document at `OPS/book.opf`.
fn make_epub(mimetype: &str, pages: &[(&str, &str)], extra: &[(&str, &str)]) -> Vec<u8> {
    let mut manifest = String::from(
        r#"<item id="nav" href="nav.xhtml" media-type="application/xhtml+xml" properties="nav"/>"#,
    );
    let mut spine = String::from(r#"<itemref idref="nav"/>"#);
    for (i, (path, _)) in pages.iter().enumerate() {
        manifest.push_str(&format!(
            r#"<item id="p{i}" href="{path}" media-type="application/xhtml+xml"/>"#
        ));
        spine.push_str(&format!(r#"<itemref idref="p{i}"/>"#));
    }
    let opf = format!(
        r#"<?xml version="1.0"?><package xmlns="http://www.idpf.org/2007/opf" version="3.0"><metadata xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>Field guide</dc:title></metadata><manifest>{manifest}</manifest><spine>{spine}</spine></package>"#
    );
    let page = |body: &str| {
        format!(
            r#"<?xml version="1.0"?><html xmlns="http://www.w3.org/1999/xhtml"><head><title>x</title></head><body>{body}</body></html>"#
        )
    };
    let mut parts: Vec<(String, String)> = vec![
        ("mimetype".into(), mimetype.into()),
        (
            "META-INF/container.xml".into(),
            r#"<container xmlns="urn:oasis:names:tc:opendocument:xmlns:container"><rootfiles><rootfile full-path="OPS/book.opf" media-type="application/oebps-package+xml"/></rootfiles></container>"#.into(),
        ),
        ("OPS/book.opf".into(), opf),
        (
            "OPS/nav.xhtml".into(),
            page(r#"<nav epub:type="toc"><ol><li><a href="text/one.xhtml">Contents entry</a></li></ol></nav><p>Navigation text.</p>"#),
        ),
    ];
    for (path, body) in pages {
        let full = format!("OPS/{path}").replace("OPS/../", "");
        parts.push((full.replace("%20", " "), page(body)));
    }
    for (name, body) in extra {
        parts.push(((*name).into(), (*body).into()));
    }
    zip_parts(parts)
}

#[test]
fn epub_spine_order_paths_navigation_and_unreadable_books() {
    let pages = [
        (
            "text/one%20two.xhtml",
            "<h1>Setting up</h1><p>Charge the unit for 4 hours.</p>",
        ),
        (
            "../Text/b.xhtml",
            "<h2>Storage</h2><p>Store it below 30 °C.</p>",
        ),
    ];
    let book = make_epub("application/epub+zip", &pages, &[]);
    let e = extract("guide.epub", &book).unwrap();
    assert_eq!(e.title.as_deref(), Some("Field guide"));
    // Spine order, percent-encoded and `..` paths resolved, and the
    // navigation document (its entries repeat the headings) left out.
    assert_eq!(
        e.text,
        "Setting up\n\nCharge the unit for 4 hours.\n\nStorage\n\nStore it below 30 °C."
    );
    // Through the index: headings start sections.
    let docs = tempfile::tempdir().unwrap();
    write(docs.path(), "guide.epub", &book);
    let (_index_dir, index, report) = index_folder(docs.path());
    assert_eq!((report.added, report.skipped.len()), (1, 0), "{report:?}");
    assert_eq!(
        index.get("guide.epub#chunk-2").unwrap().unwrap().content,
        "Storage\n\nStore it below 30 °C."
    );

    let err = |bytes: &[u8]| corrupt_reason("x.epub", bytes);
    let drm = make_epub(
        "application/epub+zip",
        &pages,
        &[(
            "META-INF/encryption.xml",
            r#"<encryption><EncryptedData><CipherData><CipherReference URI="OPS/text/one two.xhtml"/></CipherData></EncryptedData></encryption>"#,
        )],
    );
    assert!(err(&drm).contains("DRM-protected"), "{}", err(&drm));
    // Obfuscated fonts are not DRM: the book reads.
    let fonts = make_epub(
        "application/epub+zip",
        &pages,
        &[(
            "META-INF/encryption.xml",
            r#"<encryption><EncryptedData><CipherData><CipherReference URI="OPS/fonts/a.otf"/></CipherData></EncryptedData></encryption>"#,
        )],
    );
    assert!(extract("x.epub", &fonts).is_ok());
    let odt_renamed = make_epub("application/vnd.oasis.opendocument.text", &pages, &[]);
    assert!(
        err(&odt_renamed).contains("not an EPUB"),
        "{}",
        err(&odt_renamed)
    );
    assert!(!err(b"PK\x03\x04 not really a zip").is_empty());
    assert!(!err(&libreoffice_odt()).is_empty());
}

/// LibreOffice's DOCX of `testdata/odt/travel-policy.fodt`
/// (`soffice --headless --convert-to "docx:MS Word 2007 XML"`): a table of
/// contents in a content control around a `TOC` field, a footnote, a
/// tracked deletion and a comment. LibreOffice writes the hidden section as
/// ordinary text, so it is read.
#[test]
fn docx_from_libreoffice_reads_footnotes_and_leaves_out_the_table_of_contents() {
    let bytes = fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/docx/travel-policy.docx"),
    )
    .unwrap();
    let e = extract("policies/travel.docx", &bytes).unwrap();
    assert_eq!(e.title.as_deref(), Some("Travel policy 2026"));
    assert_eq!(
        e.text,
        format!("{TRAVEL_POLICY}\n\nAllowances rise to €50 in 2027.")
    );
}

/// Word's own shapes, made here: a `TOC` field with no content control
/// around it, hidden text (`w:vanish`, and `w:val="0"` that is not), an
/// endnote, and the separators Word keeps among the footnotes.
#[test]
fn docx_hidden_text_toc_fields_and_endnotes() {
    let w = r#"xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main""#;
    let document = format!(
        r#"<w:document {w}><w:body>
<w:p><w:r><w:fldChar w:fldCharType="begin"/></w:r><w:r><w:instrText xml:space="preserve"> TOC \o "1-3" \h </w:instrText></w:r><w:r><w:fldChar w:fldCharType="separate"/></w:r><w:r><w:t>Claims</w:t></w:r><w:r><w:tab/><w:t>2</w:t></w:r></w:p>
<w:p><w:r><w:t>Limits</w:t></w:r><w:r><w:tab/><w:t>3</w:t></w:r><w:r><w:fldChar w:fldCharType="end"/></w:r></w:p>
<w:p><w:r><w:t xml:space="preserve">Claims are paid within 10 days</w:t></w:r><w:r><w:rPr><w:vanish/></w:rPr><w:t xml:space="preserve"> (or 30, internal note)</w:t></w:r><w:r><w:rPr><w:vanish w:val="0"/></w:rPr><w:t>.</w:t></w:r><w:r><w:endnoteReference w:id="1"/></w:r><w:r><w:t xml:space="preserve"> See the </w:t></w:r><w:r><w:fldChar w:fldCharType="begin"/></w:r><w:r><w:instrText> HYPERLINK "https://example.com" </w:instrText></w:r><w:r><w:fldChar w:fldCharType="separate"/></w:r><w:r><w:t>claims page</w:t></w:r><w:r><w:fldChar w:fldCharType="end"/></w:r><w:r><w:t>.</w:t></w:r></w:p>
</w:body></w:document>"#
    );
    let endnotes = format!(
        r#"<w:endnotes {w}><w:endnote w:type="separator" w:id="-1"><w:p><w:r><w:separator/></w:r></w:p></w:endnote><w:endnote w:type="continuationSeparator" w:id="0"><w:p><w:r><w:t>cont</w:t></w:r></w:p></w:endnote><w:endnote w:id="1"><w:p><w:r><w:endnoteRef/></w:r><w:r><w:t xml:space="preserve"> Working days, not calendar days.</w:t></w:r></w:p></w:endnote></w:endnotes>"#
    );
    let docx = zip_parts([
        ("word/document.xml", document),
        ("word/endnotes.xml", endnotes),
    ]);
    let e = extract("claims.docx", &docx).unwrap();
    assert_eq!(
        e.text,
        "Claims are paid within 10 days. See the claims page.\n\nWorking days, not calendar days."
    );
}

/// The sentences the index stores for `chunk_id`, as text.
fn sentences_of(index: &Index, chunk_id: &str) -> Vec<String> {
    let chunk = index.get(chunk_id).unwrap().unwrap();
    index
        .sentences_of(chunk_id, None)
        .into_iter()
        .map(|h| chunk.content[h.start..h.end].to_owned())
        .collect()
}

/// A DOCX table: a row is one paragraph, its cells joined by " | " (an
/// empty cell keeps its place, a cell's paragraphs are joined by a space);
/// a footnote cited in a cell is read after the row; a heading style in a
/// cell does not make the row a heading; a deletion in a cell stays out.
#[test]
fn docx_table_rows_are_paragraphs() {
    let w = r#"xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main""#;
    let cell = |text: &str| format!("<w:tc><w:p><w:r><w:t>{text}</w:t></w:r></w:p></w:tc>");
    let document = format!(
        r#"<w:document {w}><w:body>
<w:p><w:r><w:t>Table 3 lists the daily allowances.</w:t></w:r></w:p>
<w:tbl><w:tblPr/><w:tblGrid><w:gridCol/><w:gridCol/><w:gridCol/></w:tblGrid>
<w:tr><w:tc><w:p><w:pPr><w:pStyle w:val="Heading1"/></w:pPr><w:r><w:t>Trip</w:t></w:r></w:p></w:tc>{}{}</w:tr>
<w:tr>{}<w:tc><w:p/></w:tc><w:tc><w:p><w:r><w:t>€28 per day</w:t></w:r><w:r><w:footnoteReference w:id="1"/></w:r><w:del><w:r><w:delText> (€25)</w:delText></w:r></w:del></w:p></w:tc></w:tr>
<w:tr>{}{}<w:tc><w:p><w:r><w:t>€40 per day</w:t></w:r></w:p><w:p><w:r><w:t xml:space="preserve">  plus hotel</w:t></w:r></w:p></w:tc></w:tr>
</w:tbl>
<w:p><w:pPr><w:pStyle w:val="Heading1"/></w:pPr><w:r><w:t>Claims</w:t></w:r></w:p>
<w:p><w:r><w:t>Claims go to finance within a month.</w:t></w:r></w:p>
</w:body></w:document>"#,
        cell("Receipts"),
        cell("Allowance"),
        cell("Over 8 hours"),
        cell("Overnight"),
        cell("Required"),
    );
    let footnotes = format!(
        r#"<w:footnotes {w}><w:footnote w:type="separator" w:id="-1"><w:p><w:r><w:separator/></w:r></w:p></w:footnote><w:footnote w:id="1"><w:p><w:r><w:footnoteRef/></w:r><w:r><w:t xml:space="preserve"> Paid in the local currency.</w:t></w:r></w:p></w:footnote></w:footnotes>"#
    );
    let styles = format!(
        r#"<w:styles {w}><w:style w:type="paragraph" w:styleId="Heading1"><w:name w:val="heading 1"/></w:style></w:styles>"#
    );
    let docx = zip_parts([
        ("word/document.xml", document),
        ("word/footnotes.xml", footnotes),
        ("word/styles.xml", styles),
    ]);
    let e = extract("allowances.docx", &docx).unwrap();
    // "Trip" is styled as a heading, but in a cell: the title is the first
    // heading outside the table.
    assert_eq!(e.title.as_deref(), Some("Claims"));
    assert_eq!(
        e.text,
        "Table 3 lists the daily allowances.\n\n\
         Trip | Receipts | Allowance\n\n\
         Over 8 hours | | €28 per day\n\n\
         Paid in the local currency.\n\n\
         Overnight | Required | €40 per day plus hotel\n\n\
         Claims\n\n\
         Claims go to finance within a month."
    );

    assert_allowances_indexed(
        "allowances.docx",
        &docx,
        "Overnight | Required | €40 per day plus hotel",
    );
}

/// The allowances table of the DOCX and ODT row tests, indexed: its first
/// chunk holds the table, one stored sentence per row.
fn assert_allowances_indexed(name: &str, bytes: &[u8], last_row: &str) {
    let docs = tempfile::tempdir().unwrap();
    write(docs.path(), name, bytes);
    let (_index_dir, index, _) = index_folder(docs.path());
    let id = format!("{name}#chunk-1");
    let rows = [
        "Table 3 lists the daily allowances.",
        "Trip | Receipts | Allowance",
        "Over 8 hours | | €28 per day",
        "Paid in the local currency.",
        last_row,
    ];
    assert_eq!(index.get(&id).unwrap().unwrap().content, rows.join("\n\n"));
    assert_eq!(sentences_of(&index, &id), rows);
}

/// An ODT table: rows inside `<table:table-header-rows>` are rows as usual,
/// an empty cell (`<table:table-cell/>`) and a covered one (merged into
/// the cell before it) keep their place, a cell's paragraphs and list
/// items are joined by a space, and a footnote cited in a cell is read
/// after the row. A heading style in a cell does not make the row a
/// heading.
#[test]
fn odt_table_rows_are_paragraphs() {
    let cell = |text: &str| format!("<table:table-cell><text:p>{text}</text:p></table:table-cell>");
    let body = format!(
        r#"<text:p>Table 3 lists the daily allowances.</text:p><table:table xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" table:name="Allowances"><table:table-column table:number-columns-repeated="3"/><table:table-header-rows><table:table-row><table:table-cell><text:p text:style-name="P2">Trip</text:p></table:table-cell>{}{}</table:table-row></table:table-header-rows><table:table-row>{}<table:table-cell/><table:table-cell><text:p>€28 per day<text:note text:id="ftn1" text:note-class="footnote"><text:note-citation>1</text:note-citation><text:note-body><text:p>Paid in the local currency.</text:p></text:note-body></text:note></text:p></table:table-cell></table:table-row><table:table-row><table:table-cell table:number-columns-spanned="2"><text:p>Overnight</text:p></table:table-cell><table:covered-table-cell/><table:table-cell><text:p>€40 per day</text:p><text:list><text:list-item><text:p>plus hotel</text:p></text:list-item></text:list></table:table-cell></table:table-row></table:table><text:h>Claims</text:h><text:p>Claims go to finance within a month.</text:p>"#,
        cell("Receipts"),
        cell("Allowance"),
        cell("Over 8 hours"),
    );
    let odt = make_odt(ODT_MIME, None, &body, false);
    let e = extract("allowances.odt", &odt).unwrap();
    assert_eq!(e.title.as_deref(), Some("Claims"));
    assert_eq!(
        e.text,
        "Table 3 lists the daily allowances.\n\n\
         Trip | Receipts | Allowance\n\n\
         Over 8 hours | | €28 per day\n\n\
         Paid in the local currency.\n\n\
         Overnight | | €40 per day plus hotel\n\n\
         Claims\n\n\
         Claims go to finance within a month."
    );

    assert_allowances_indexed(
        "allowances.odt",
        &odt,
        "Overnight | | €40 per day plus hotel",
    );
}

/// Nested tables and odd shapes lose no text: an inner table's rows are
/// read into the outer cell, a paragraph outside any cell is a cell of its
/// own, and an ODT table in a text frame is read after the paragraph that
/// anchors it.
#[test]
fn docx_and_odt_nested_tables_lose_no_text() {
    let w = r#"xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main""#;
    let p = |text: &str| format!("<w:p><w:r><w:t>{text}</w:t></w:r></w:p>");
    let document = format!(
        "<w:document {w}><w:body><w:tbl><w:tr><w:tc>{}</w:tc><w:tc>{}<w:tbl><w:tr><w:tc>{}</w:tc><w:tc>{}</w:tc></w:tr><w:tr><w:tc>{}</w:tc><w:tc>{}</w:tc></w:tr></w:tbl><w:p/></w:tc></w:tr></w:tbl><w:tbl>{}<w:tc>{}</w:tc></w:tbl>{}</w:body></w:document>",
        p("Zone"),
        p("Rates"),
        p("A"),
        p("€28"),
        p("B"),
        p("€35"),
        p("Loose"),
        p("cell"),
        p("After."),
    );
    let e = extract("zones.docx", &zip_parts([("word/document.xml", document)])).unwrap();
    assert_eq!(
        e.text,
        "Zone | Rates A | €28 B | €35\n\nLoose | cell\n\nAfter."
    );

    let t = r#"xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0""#;
    let cell = |text: &str| format!("<table:table-cell><text:p>{text}</text:p></table:table-cell>");
    let row =
        |a: &str, b: &str| format!("<table:table-row>{}{}</table:table-row>", cell(a), cell(b));
    let body = format!(
        r#"<table:table {t}><table:table-row>{}<table:table-cell><text:p>Rates</text:p><table:table>{}{}</table:table></table:table-cell></table:table-row></table:table><text:p>See the rates.<draw:frame><draw:text-box><table:table {t}>{}</table:table></draw:text-box></draw:frame> They apply from May.</text:p>"#,
        cell("Zone"),
        row("A", "€28"),
        row("B", "€35"),
        row("C", "€40"),
    );
    let e = extract("zones.odt", &make_odt(ODT_MIME, None, &body, false)).unwrap();
    assert_eq!(
        e.text,
        "Zone | Rates A | €28 B | €35\n\nSee the rates. They apply from May.\n\nC | €40"
    );
}

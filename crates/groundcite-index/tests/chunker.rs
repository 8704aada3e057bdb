//! The chunker's contract: exact substrings, size bound, headings, overlap,
//! stable IDs, UTF-8 safety.

#![allow(clippy::unwrap_used)] // Test helpers outside #[test] fns.

use groundcite_index::{ChunkerConfig, DocChunk, chunk_document, document_title};
use proptest::prelude::*;

fn cfg(max_chars: usize, overlap_chars: usize) -> ChunkerConfig {
    ChunkerConfig {
        max_chars,
        overlap_chars,
    }
}

/// Every invariant that must hold for any input.
fn check_invariants(text: &str, chunks: &[DocChunk], cfg: &ChunkerConfig) {
    let max = cfg.max_chars.max(1);
    for (i, c) in chunks.iter().enumerate() {
        assert_eq!(
            &text[c.byte_range.clone()],
            c.content,
            "chunk {i} is not text[byte_range]"
        );
        assert!(!c.content.trim().is_empty(), "chunk {i} is blank");
        assert_eq!(c.content.trim(), c.content, "chunk {i} is not trimmed");
        assert!(
            c.content.chars().count() <= max,
            "chunk {i} has {} chars, max {max}",
            c.content.chars().count()
        );
        assert!(text.contains(&c.content));
        assert_eq!(c.chunk_id, format!("doc.md#chunk-{}", i + 1));
    }
    for pair in chunks.windows(2) {
        assert!(
            pair[0].byte_range.start < pair[1].byte_range.start,
            "chunks are not in document order"
        );
    }
}

const DOC: &str = "# Refund policy

Refunds take 5 business days. They go to the original payment method.

## Exceptions

Gift cards cannot be refunded.

Opened fuel canisters cannot be refunded either.

## Shipping

Return shipping costs $6.95.
";

#[test]
fn splits_at_headings_and_keeps_the_heading_line() {
    let chunks = chunk_document("doc.md", DOC, &ChunkerConfig::default());
    check_invariants(DOC, &chunks, &ChunkerConfig::default());
    let firsts: Vec<&str> = chunks
        .iter()
        .map(|c| c.content.lines().next().unwrap())
        .collect();
    assert_eq!(firsts, ["# Refund policy", "## Exceptions", "## Shipping"]);
    assert!(chunks[1].content.ends_with("either."));
    assert_eq!(chunks[1].heading_path, ["Refund policy", "Exceptions"]);
}

#[test]
fn packs_paragraphs_up_to_max_chars() {
    // Each paragraph is 29 chars; "\n\n" between them.
    let para = "Alpha beta gamma delta omega.";
    let text = [para; 6].join("\n\n");
    let c = cfg(70, 10);
    let chunks = chunk_document("doc.md", &text, &c);
    check_invariants(&text, &chunks, &c);
    // Two paragraphs fit (29 + 2 + 29 = 60), three do not (91).
    assert_eq!(chunks.len(), 3);
    for chunk in &chunks {
        assert_eq!(chunk.content, format!("{para}\n\n{para}"));
    }
}

#[test]
fn long_paragraph_is_split_at_sentences_with_overlap() {
    let sentences: Vec<String> = (1..=40)
        .map(|i| format!("Sentence number {i} says something useful."))
        .collect();
    let text = format!("## Heading\n\n{}", sentences.join(" "));
    let c = cfg(300, 60);
    let chunks = chunk_document("doc.md", &text, &c);
    check_invariants(&text, &chunks, &c);
    assert!(chunks.len() > 5);
    assert!(
        chunks[0]
            .content
            .starts_with("## Heading\n\nSentence number 1 ")
    );
    for (i, pair) in chunks.windows(2).enumerate() {
        let (a, b) = (&pair[0], &pair[1]);
        // Pieces end at a sentence end...
        assert!(a.content.ends_with('.'), "piece {i} ends mid-sentence");
        // ...and the next piece starts inside the previous one (overlap),
        // at a word boundary.
        assert!(
            b.byte_range.start < a.byte_range.end,
            "no overlap after {i}"
        );
        let overlap = &text[b.byte_range.start..a.byte_range.end];
        assert!(overlap.chars().count() <= 60 + 1);
        assert!(text[..b.byte_range.start].ends_with(' '));
    }
    // Nothing lost: the pieces cover the paragraph.
    assert!(
        chunks
            .last()
            .unwrap()
            .content
            .ends_with("number 40 says something useful.")
    );
}

#[test]
fn no_overlap_when_disabled() {
    let text = "word ".repeat(200);
    let c = cfg(50, 0);
    let chunks = chunk_document("doc.md", &text, &c);
    check_invariants(&text, &chunks, &c);
    for pair in chunks.windows(2) {
        assert!(pair[1].byte_range.start >= pair[0].byte_range.end);
    }
}

#[test]
fn unbroken_text_is_split_at_char_boundaries() {
    let text = "x".repeat(1000);
    let c = cfg(128, 32);
    let chunks = chunk_document("doc.md", &text, &c);
    check_invariants(&text, &chunks, &c);
    assert_eq!(chunks[0].content.len(), 128);
}

#[test]
fn multibyte_text_is_never_split_inside_a_char() {
    let text = format!(
        "# 返品について\n\n{}\n\n{}",
        "商品到着後30日以内であれば返品できます。".repeat(30),
        "🎒🏕️⛺ café naïve ".repeat(50)
    );
    for (max, overlap) in [(7, 3), (50, 10), (100, 40), (1200, 150)] {
        let c = cfg(max, overlap);
        let chunks = chunk_document("doc.md", &text, &c);
        check_invariants(&text, &chunks, &c);
        assert!(chunks.len() > 1);
    }
    // Japanese full stops count as sentence ends.
    let c = cfg(50, 0);
    let chunks = chunk_document("doc.md", &text, &c);
    assert!(chunks[1].content.ends_with('。'));
}

#[test]
fn ids_are_stable_and_numbered_from_one() {
    let a = chunk_document("doc.md", DOC, &ChunkerConfig::default());
    let b = chunk_document("doc.md", DOC, &ChunkerConfig::default());
    assert_eq!(a, b);
    assert_eq!(a[0].chunk_id, "doc.md#chunk-1");
    let other = chunk_document("help/doc.md", DOC, &ChunkerConfig::default());
    assert_eq!(other[2].chunk_id, "help/doc.md#chunk-3");
}

#[test]
fn crlf_and_degenerate_configs() {
    let text = "# T\r\n\r\nLine one.\r\nLine two.\r\n\r\n## U\r\n\r\nMore.\r\n";
    let c = ChunkerConfig::default();
    let chunks = chunk_document("doc.md", text, &c);
    check_invariants(text, &chunks, &c);
    assert_eq!(chunks[0].content, "# T\r\n\r\nLine one.\r\nLine two.");
    // max 0 behaves as 1; overlap larger than max is clamped.
    for c in [cfg(0, 0), cfg(1, 100), cfg(3, 3)] {
        let chunks = chunk_document("doc.md", text, &c);
        check_invariants(text, &chunks, &c);
    }
}

/// What static site generators write: front matter (YAML or TOML) is
/// metadata, so no chunk holds it and its title names the document; a
/// document without front matter keeps its first heading as title.
#[test]
fn front_matter_is_not_text_and_names_the_document() {
    let doc = "---\ntitle: npm-audit\ndescription: Run a security audit\n---\n\n### Synopsis\n\nnpm audit [fix]\n";
    let chunks = chunk_document("npm-audit.md", doc, &ChunkerConfig::default());
    assert_eq!(chunks.len(), 1);
    assert_eq!(chunks[0].content, "### Synopsis\n\nnpm audit [fix]");
    assert_eq!(chunks[0].heading_path, ["Synopsis"]);
    assert_eq!(document_title("npm-audit.md", doc), "npm-audit");
    let toml = "+++\ntitle = \"Billing FAQ\"\n+++\n# Billing\n\nInvoices go out monthly.\n";
    assert_eq!(document_title("billing.md", toml), "Billing FAQ");
    assert_eq!(
        chunk_document("billing.md", toml, &ChunkerConfig::default())[0].content,
        "# Billing\n\nInvoices go out monthly."
    );
    // Front matter without a title: the first heading names it.
    let untitled = "---\nlayout: doc\n---\n## Cards\n\nText.\n";
    assert_eq!(document_title("cards.md", untitled), "Cards");
    // A plain text file is not Markdown: nothing is front matter.
    let txt = "---\ntitle: x\n---\nBody\n";
    assert_eq!(document_title("notes.txt", txt), "notes.txt");
    assert!(
        chunk_document("notes.txt", txt, &ChunkerConfig::default())[0]
            .content
            .starts_with("---")
    );
}

/// CommonMark's setext headings ("Refunds" over "=======") start sections
/// and name documents as `#` headings do; a rule (`---` after a blank line,
/// `***`) separates blocks and is no heading.
#[test]
fn setext_headings_and_rules() {
    let doc = "DNS SRV record support\n======================\n\nApt supports SRV records.\n\nDetails\n-------\nThey are tried in order.\n\n---\n\nAfter a rule.\n";
    let chunks = chunk_document("srv.md", doc, &cfg(100, 0));
    let paths: Vec<Vec<String>> = chunks.iter().map(|c| c.heading_path.clone()).collect();
    assert_eq!(
        paths,
        [
            vec!["DNS SRV record support".to_string()],
            vec!["DNS SRV record support".to_string(), "Details".to_string()],
        ]
    );
    assert_eq!(
        chunks[1].content,
        "Details\n-------\nThey are tried in order.\n\n---\n\nAfter a rule."
    );
    assert_eq!(document_title("srv.md", doc), "DNS SRV record support");
    // A list's `---` is a rule, not an underline; a heading over two lines
    // is one line of context.
    let list = "- one\n- two\n---\nText here.\n";
    assert_eq!(document_title("l.md", list), "l.md");
    let two = "Shipping and\nreturns\n---\nText.\n";
    assert_eq!(document_title("t.md", two), "Shipping and returns");
    assert_eq!(
        chunk_document("t.md", two, &cfg(100, 0))[0].heading_path,
        ["Shipping and returns"]
    );
}

/// `.mdx` (Docusaurus and friends) is read as Markdown; its `import` /
/// `export` lines and lines of JSX tags are markup between blocks, so no
/// chunk starts or ends on one.
#[test]
fn mdx_markup_is_not_text() {
    let doc = "---\ntitle: Install\n---\nimport Tabs from '@theme/Tabs';\n\n## Steps\n\n<Tabs>\n<TabItem value=\"apt\">\nRun the installer.\n</TabItem>\n</Tabs>\n";
    let chunks = chunk_document("install.mdx", doc, &ChunkerConfig::default());
    let contents: Vec<&str> = chunks.iter().map(|c| c.content.as_str()).collect();
    assert_eq!(
        contents,
        ["## Steps\n\n<Tabs>\n<TabItem value=\"apt\">\nRun the installer."]
    );
    assert_eq!(document_title("install.mdx", doc), "Install");
    // In Markdown the same lines are text.
    let md = chunk_document("install.md", doc, &ChunkerConfig::default());
    assert!(md[0].content.starts_with("import Tabs"));
    assert!(md[1].content.ends_with("</Tabs>"));
}

/// Sphinx sources: section titles by their adornment, levels in order of
/// first use; directives and comments are markup; the first title names
/// the document.
#[test]
fn restructuredtext_sections_and_markup() {
    let doc = ".. _guide:\n\n==========\nUser Guide\n==========\n\nIntro.\n\nInstalling\n----------\n\n.. note::\n   :class: tip\n\n   Keep your key safe.\n\n.. toctree::\n   intro\n\nOn Debian\n~~~~~~~~~\n\nUse apt.\n";
    let chunks = chunk_document("guide.rst", doc, &cfg(100, 0));
    let got: Vec<(&str, Vec<String>)> = chunks
        .iter()
        .map(|c| (c.content.as_str(), c.heading_path.clone()))
        .collect();
    assert_eq!(
        got,
        [
            (
                "==========\nUser Guide\n==========\n\nIntro.",
                vec!["User Guide".to_string()]
            ),
            (
                "Installing\n----------\n\n.. note::\n   :class: tip\n\n   Keep your key safe.",
                vec!["User Guide".to_string(), "Installing".to_string()]
            ),
            (
                "On Debian\n~~~~~~~~~\n\nUse apt.",
                vec![
                    "User Guide".to_string(),
                    "Installing".to_string(),
                    "On Debian".to_string()
                ]
            ),
        ]
    );
    assert_eq!(document_title("guide.rst", doc), "User Guide");
    assert_eq!(document_title("empty.rest", "Just text.\n"), "empty.rest");
    // Front matter is a Markdown convention: in reStructuredText those
    // lines are an over- and underlined section title, as docutils reads them.
    assert_eq!(document_title("t.rst", "---\ntitle: x\n---\n"), "title: x");
}

/// Asciidoctor and Antora sources: `=` titles, the document header and
/// markup lines are not text; a listing block is one block of code; the
/// document title names the document.
#[test]
fn asciidoc_sections_and_markup() {
    let doc = "= Agent Guide\nOps Team <ops@example.com>\n:toc: left\n\nIntro.\n\n== Installing\n\n[source,bash]\n----\napt install agent\n\n== not a title\n----\n\n=== On Debian\n\nUse apt.\n";
    let chunks = chunk_document("guide.adoc", doc, &cfg(100, 0));
    let got: Vec<(&str, Vec<String>)> = chunks
        .iter()
        .map(|c| (c.content.as_str(), c.heading_path.clone()))
        .collect();
    assert_eq!(
        got,
        [
            (
                "= Agent Guide\nOps Team <ops@example.com>\n:toc: left\n\nIntro.",
                vec!["Agent Guide".to_string()]
            ),
            (
                "== Installing\n\n[source,bash]\n----\napt install agent\n\n== not a title\n----",
                vec!["Agent Guide".to_string(), "Installing".to_string()]
            ),
            (
                "=== On Debian\n\nUse apt.",
                vec![
                    "Agent Guide".to_string(),
                    "Installing".to_string(),
                    "On Debian".to_string()
                ]
            ),
        ]
    );
    assert_eq!(document_title("guide.adoc", doc), "Agent Guide");
    assert_eq!(document_title("sub/page.asciidoc", "== Only\n"), "Only");
    assert_eq!(document_title("notes.adoc", "Just text.\n"), "notes.adoc");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn any_string_any_config(
        text in prop_oneof![
            any::<String>(),
            "([#]{0,3} ?|```|~~~|  )?[a-zé日🎉 .!?。\"')\t\r\n-]{0,80}(\n{1,2}[#` ]{0,4}[a-z日🎉 .!?。\n]{0,120}){0,8}",
            // Front matter, setext underlines, rules, MDX lines.
            "(---|\\+\\+\\+)?(\r?\n(title: ?[a-z'\"]{0,8}|[a-z]{0,6}|===?|---?|\\*\\*\\*|\\+\\+\\+|\\.\\.\\.|import x|<[A-Z]?[a-z]{0,3}>|# [a-z]{0,5})){0,12}\r?\n?",
            // AsciiDoc: titles, header lines, attributes, delimiters, macros.
            "(= [a-z]{0,5})?(\r?\n(={1,7} ?[a-z]{0,5}|:[a-z]{0,4}: ?[a-z]{0,3}|\\[[a-z,]{0,6}\\]|\\.[A-Z][a-z]{0,3}|//+|-{2,5}|\\.{4}|\\+{1,4}|\\|===|image::[a-z]{0,3}\\[\\]|[a-z .]{0,12}|\\. [a-z]{0,4})){0,14}\r?\n?",
        ],
        max_chars in 0usize..300,
        overlap_chars in 0usize..200,
    ) {
        let c = cfg(max_chars, overlap_chars);
        let chunks = chunk_document("doc.md", &text, &c);
        check_invariants(&text, &chunks, &c);
        for name in ["doc.mdx", "doc.rst", "doc.adoc"] {
            let _ = document_title(name, &text);
            for chunk in chunk_document(name, &text, &c) {
                prop_assert_eq!(&text[chunk.byte_range.clone()], chunk.content.as_str());
                prop_assert!(!chunk.content.trim().is_empty());
                prop_assert!(chunk.content.chars().count() <= c.max_chars.max(1));
            }
        }
        let again = chunk_document("doc.md", &text, &c);
        prop_assert_eq!(chunks, again);
        // Plain-text mode too.
        for chunk in chunk_document("doc.txt", &text, &c) {
            prop_assert!(text.contains(&chunk.content));
        }
    }
}

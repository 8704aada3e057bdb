//! HTML: the page's main text, block by block, headings as section titles.
//!
//! Walks the tokens of a WHATWG tokenizer (so entities, unclosed tags and
//! tag soup read as a browser reads them) and keeps the text of block
//! elements. Dropped: scripts, styles, templates, forms, navigation (`<nav>`,
//! `role="navigation"`, the navigation classes of common documentation
//! generators), contents lists, indexes, images with their captions,
//! `<aside>` and `<footer>`. When the page marks its main content
//! (`<main>` or `role="main"`), only that is kept.
//!
//! Notes are read by their semantics (EPUB's `epub:type`, ARIA's DPUB
//! roles): a footnote or endnote is kept even as an `<aside>`; a note
//! reference (`noteref`, `doc-noteref`) and a note's link back to it are
//! markers, not text, so "…you leave.<sup>1</sup> The portal…" reads as
//! two sentences.

use std::collections::BTreeMap;

use html5gum::{Token, Tokenizer};

use super::{Extracted, Format, TextBuilder, collapse_spaces};

/// Elements whose content is never text a reader reads.
const DROPPED: &[&str] = &[
    "script", "style", "noscript", "template", "nav", "aside", "footer", "form", "button",
    "select", "textarea", "svg", "math", "iframe", "object", "canvas", "audio", "video", "head",
];

/// Class names of blocks that are not the page's text: navigation in
/// generated documentation (DocBook's `navheader`/`navfooter`, Sphinx's
/// `related`/`sphinxsidebar`, common site chrome), contents lists and
/// indexes, and images with their captions.
const NAV_CLASSES: &[&str] = &[
    "navheader",
    "navfooter",
    "navbar",
    "navigation",
    "nav",
    "breadcrumb",
    "breadcrumbs",
    "related",
    "sphinxsidebar",
    "sidebar",
    "menu",
    "skip-link",
    "footer",
    // Sphinx's "¶" permalink after every heading and term.
    "headerlink",
    // Tables of contents and back-of-book indexes repeat the headings and
    // terms of other pages as links (DocBook's `toc`, `list-of-figures`
    // and `indexdiv`, Sphinx's `toctree-wrapper` and `genindextable`): a
    // newcomer's trial over GIMP's help quoted "Crop An Image" and a run
    // of index entries as claims.
    "toc",
    "toctree-wrapper",
    "list-of-figures",
    "list-of-tables",
    "list-of-examples",
    "list-of-procedures",
    "list-of-equations",
    "indexdiv",
    "genindextable",
    // An image's title and captions (DocBook's figures and media objects,
    // CUPS's figure tables): the image is not read, and its caption alone
    // ("Horizontal flipped image") is not a statement.
    "figure",
    "informalfigure",
    "mediaobject",
    "inlinemediaobject",
];

/// Elements that end the paragraph before them and start a new one.
const BLOCKS: &[&str] = &[
    "p",
    "div",
    "li",
    "ul",
    "ol",
    "dl",
    "dt",
    "dd",
    "pre",
    "blockquote",
    "table",
    "tr",
    "caption",
    "section",
    "article",
    "main",
    "header",
    "figure",
    "figcaption",
    "address",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "body",
    "html",
    "hr",
    "br",
    "details",
    "summary",
    "aside",
];

/// Elements without an end tag: they must not open a dropped region.
const VOID: &[&str] = &[
    "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track",
    "wbr",
];

type Attrs = BTreeMap<Vec<u8>, String>;

fn tokens(text: &str) -> impl Iterator<Item = Token> + '_ {
    let mut emitter = html5gum::DefaultEmitter::default();
    // Read the content of <script>, <style>, <textarea>, … as raw text, as
    // a browser does, instead of as markup.
    emitter.naively_switch_states(true);
    Tokenizer::new_with_emitter(text, emitter).filter_map(|t| t.ok())
}

fn is_nav(name: &str, attrs: &Attrs) -> bool {
    if attrs
        .get(b"role".as_slice())
        .is_some_and(|r| r.eq_ignore_ascii_case("navigation"))
    {
        return true;
    }
    if attrs
        .get(b"aria-hidden".as_slice())
        .is_some_and(|v| v == "true")
    {
        return true;
    }
    if name == "header" || name == "html" || name == "body" || name == "main" {
        return false;
    }
    has_class(attrs, NAV_CLASSES)
}

/// Whether the element has one of `names` among its classes (ASCII case
/// ignored).
fn has_class(attrs: &Attrs, names: &[&str]) -> bool {
    attrs.get(b"class".as_slice()).is_some_and(|classes| {
        classes
            .split_ascii_whitespace()
            .any(|c| names.iter().any(|n| c.eq_ignore_ascii_case(n)))
    })
}

/// The element's semantic types: EPUB's `epub:type` and ARIA's `role`.
fn semantics(attrs: &Attrs) -> impl Iterator<Item = &str> {
    attrs
        .get(b"epub:type".as_slice())
        .into_iter()
        .chain(attrs.get(b"role".as_slice()))
        .flat_map(|v| v.split_ascii_whitespace())
}

/// A footnote or endnote: text, even where its element (`<aside>`) is
/// otherwise dropped.
fn is_note(attrs: &Attrs) -> bool {
    semantics(attrs).any(|t| {
        [
            "footnote",
            "endnote",
            "rearnote",
            "doc-footnote",
            "doc-endnote",
        ]
        .iter()
        .any(|n| t.eq_ignore_ascii_case(n))
    })
}

/// An admonition's block: DocBook's `<div class="note">` (`tip`,
/// `warning`, `caution`, `important`), AsciiDoc's and Asciidoctor's `<div
/// class="admonitionblock">`.
fn is_admonition(attrs: &Attrs) -> bool {
    has_class(
        attrs,
        &[
            "note",
            "tip",
            "warning",
            "caution",
            "important",
            "admonitionblock",
        ],
    )
}

/// A note reference or a note's link back to it: a marker ("1", "↩"),
/// not text. Inside a note, any link to a fragment of the page is one
/// (LibreOffice marks its back-links with nothing else).
fn is_note_marker(name: &str, attrs: &Attrs, in_note: bool) -> bool {
    semantics(attrs).any(|t| {
        ["noteref", "doc-noteref", "doc-backlink"]
            .iter()
            .any(|n| t.eq_ignore_ascii_case(n))
    }) || (in_note
        && name == "a"
        && attrs
            .get(b"href".as_slice())
            .is_some_and(|h| h.starts_with('#')))
}

fn is_main(name: &str, attrs: &Attrs) -> bool {
    name == "main"
        || attrs
            .get(b"role".as_slice())
            .is_some_and(|r| r.eq_ignore_ascii_case("main"))
}

fn heading_level(name: &str) -> Option<u8> {
    match name {
        "h1" => Some(1),
        "h2" => Some(2),
        "h3" => Some(3),
        "h4" => Some(4),
        "h5" => Some(5),
        "h6" => Some(6),
        _ => None,
    }
}

fn lossy(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The most terms one description joins (`-S[<keyid>], --gpg-sign[=<keyid>],
/// --no-gpg-sign` is three); more are a list of entries of their own.
const MAX_TERMS: usize = 4;

/// Where a definition list's term stands (see [`Walker::block_boundary`]).
#[derive(Default, Clone, Copy, PartialEq, Eq)]
enum Term {
    #[default]
    None,
    /// `</dt>` seen: the term is in the buffer.
    Pending,
    /// `<dd>` seen: the term and ": " are in the buffer, no text yet.
    Joined,
}

/// The walk's state.
#[derive(Default)]
struct Walker {
    out: TextBuilder,
    /// Text of the current block, not yet collapsed.
    buf: String,
    /// Heading level of the current block.
    heading: Option<u8>,
    /// Inside `<pre>` (depth).
    pre: usize,
    /// A dropped element being skipped: its name and nesting depth.
    skip: Option<(String, usize)>,
    /// Inside the main element (depth); `None` when the page has none.
    main: Option<(String, usize)>,
    /// Inside a footnote or endnote: its element's name and depth.
    note: Option<(String, usize)>,
    /// Table cells open in the current row (`<td>`, `<th>`): their
    /// paragraphs and line breaks join the row instead of ending it.
    cells: usize,
    /// A definition list's term (`<dt>`) waiting for its description, or
    /// joined to a description that has no text yet.
    term: Term,
    /// A `<dt>` or `<dd>` is open: HTML lets their end tags be left out
    /// (man pages converted to HTML leave them out), so the next `<dt>` or
    /// `<dd>`, or `</dl>`, closes them.
    open_dt: bool,
    open_dd: bool,
    /// The earlier terms of a description with several (`<dt>-h</dt>
    /// <dt>--help</dt><dd>…`), each with its link flags: joined to the
    /// last when a `<dd>` follows, else blocks of their own (a contents
    /// list of `<dt>` entries, as DocBook writes one, is not a term list).
    terms: Vec<(String, bool, bool)>,
    /// Where the current table row's text starts in `buf` (a definition's
    /// term may stand before it).
    row_start: usize,
    /// The last table cell opened was an admonition's label cell
    /// (Asciidoctor's `<td class="icon">`).
    after_icon: bool,
    /// Inside an admonition ([`is_admonition`]): its element's name and
    /// depth.
    admonition: Option<(String, usize)>,
    /// Inside an `<a href="#…">`: a link to a place on the same page.
    in_page_link: bool,
    /// The current block has text inside, and text outside, such links.
    link_text: bool,
    other_text: bool,
    in_title: bool,
    title: String,
    first_h1: Option<String>,
    first_heading: Option<String>,
}

impl Walker {
    fn flush(&mut self) {
        let earlier = std::mem::take(&mut self.terms);
        self.flush_apart(earlier);
        self.flush_block();
    }

    /// Writes held-back terms as paragraphs of their own, the current
    /// block's text kept where it was.
    fn flush_apart(&mut self, terms: Vec<(String, bool, bool)>) {
        if terms.is_empty() {
            return;
        }
        let current = (
            std::mem::take(&mut self.buf),
            self.link_text,
            self.other_text,
        );
        for (text, link, other) in terms {
            (self.buf, self.link_text, self.other_text) = (text, link, other);
            self.flush_block();
        }
        (self.buf, self.link_text, self.other_text) = current;
    }

    fn flush_block(&mut self) {
        self.term = Term::None;
        let body = if self.pre > 0 {
            self.buf
                .trim_end()
                .trim_start_matches(['\n', '\r'])
                .to_owned()
        } else {
            collapse_spaces(&self.buf)
        };
        // A block that is nothing but links to places on this page is the
        // page's own table of contents ("Printer Driver Basics" above the
        // section of that name): navigation, not text. A heading that is
        // its own permalink stays a heading.
        let contents_entry = self.heading.is_none() && self.link_text && !self.other_text;
        self.link_text = false;
        self.other_text = false;
        if contents_entry {
            self.buf.clear();
            self.row_start = 0;
            return;
        }
        if let Some(level) = self.heading
            && !body.is_empty()
        {
            if level == 1 {
                self.first_h1.get_or_insert_with(|| body.clone());
            }
            self.first_heading.get_or_insert_with(|| body.clone());
        }
        self.out.block(&body, self.heading);
        self.buf.clear();
        self.row_start = 0;
        self.heading = None;
    }

    /// A block element starts or ends: a new paragraph, except inside a
    /// table cell, where `<p>`, `<div>`, `<br>` and lists only separate
    /// words (Sphinx and most generators wrap every cell's text in `<p>`).
    ///
    /// A definition's description starts with its term ("-E: Enables the
    /// printer and accepts new print jobs."): as a table cell does, a
    /// description means little without it (man pages, option and API
    /// references, glossaries). So `</dt>` keeps the term, `<dd>` adds
    /// ": ", and the blocks that open the description (`<p>` in Sphinx)
    /// do not split it from its term. Several terms of one description
    /// (`-S`, `--gpg-sign`, `--no-gpg-sign`) are joined by ", ": left
    /// apart, the last term alone read "--no-gpg-sign: GPG-sign commits."
    fn block_boundary(&mut self, name: &str, end: bool) {
        if self.cells > 0 && !matches!(name, "table" | "tr" | "caption") {
            self.buf.push(' ');
            return;
        }
        // End tags left out: what opens next closes them first.
        let closes_dd = matches!((name, end), ("dt" | "dd", false) | ("dl", true));
        if closes_dd && std::mem::take(&mut self.open_dd) {
            self.block_boundary("dd", true);
        }
        let closes_dt = matches!((name, end), ("dt" | "dd", false) | ("dl", true));
        if closes_dt && std::mem::take(&mut self.open_dt) {
            self.block_boundary("dt", true);
        }
        match (name, end) {
            ("dt", _) => self.open_dt = !end,
            ("dd", _) => self.open_dd = !end,
            _ => {}
        }
        match (self.term, name, end) {
            (Term::None, "dt", true) if self.heading.is_none() && !self.buf.trim().is_empty() => {
                self.term = Term::Pending;
                return;
            }
            // Another term: of the same description if a `<dd>` follows.
            (Term::Pending, "dt", false) => {
                self.terms.push((
                    std::mem::take(&mut self.buf),
                    std::mem::take(&mut self.link_text),
                    std::mem::take(&mut self.other_text),
                ));
                self.term = Term::None;
                return;
            }
            (Term::Pending, "dt", true) => return,
            (Term::Pending, "dd", false) => {
                let earlier = std::mem::take(&mut self.terms);
                if earlier.len() >= MAX_TERMS {
                    // Not the spellings of one option but entries of their
                    // own (an index whose last entry has sub-entries): each
                    // stands apart, and the last alone is the term.
                    self.flush_apart(earlier);
                } else if !earlier.is_empty() {
                    let mut joined = String::new();
                    for (text, link, other) in earlier {
                        joined.push_str(text.trim().trim_end_matches(':'));
                        joined.push_str(", ");
                        self.link_text |= link;
                        self.other_text |= other;
                    }
                    joined.push_str(self.buf.trim());
                    self.buf = joined;
                }
                let term = self.buf.trim_end().len();
                self.buf.truncate(term);
                if !self.buf.ends_with(':') {
                    self.buf.push(':');
                }
                self.buf.push(' ');
                self.term = Term::Joined;
                return;
            }
            (Term::Joined, _, _) if !(name == "dd" && end) => return,
            _ => {}
        }
        self.flush();
    }

    fn collecting(&self, has_main: bool) -> bool {
        self.skip.is_none() && (!has_main || self.main.is_some())
    }
}

pub(super) fn extract(bytes: &[u8]) -> Extracted {
    let source = lossy(bytes);
    let has_main = tokens(&source).any(|t| match t {
        Token::StartTag(tag) => {
            let attrs = attrs(&tag.attributes);
            is_main(&lossy(&tag.name), &attrs)
        }
        _ => false,
    });
    let mut w = Walker::default();
    for token in tokens(&source) {
        match token {
            Token::StartTag(tag) => {
                let name = lossy(&tag.name).to_ascii_lowercase();
                let attrs = attrs(&tag.attributes);
                // The title lives in <head>, which is otherwise dropped.
                if name == "title" && w.title.is_empty() && !tag.self_closing {
                    w.in_title = true;
                    continue;
                }
                if let Some((skipped, depth)) = w.skip.as_mut() {
                    if *skipped == name && !tag.self_closing {
                        *depth += 1;
                    }
                    continue;
                }
                let void = VOID.contains(&name.as_str()) || tag.self_closing;
                if let Some((adm, depth)) = w.admonition.as_mut() {
                    if *adm == name && !void {
                        *depth += 1;
                    }
                } else if is_admonition(&attrs) && !void {
                    w.admonition = Some((name.clone(), 1));
                }
                // A graphical admonition's label ("Note" beside its icon)
                // stays a paragraph of its own, except where it would lead
                // a definition's description ("Input Type: Note"): there
                // the admonition's text follows the term.
                let label = name == "th" && w.admonition.is_some() && w.term == Term::Joined;
                let dropped = (DROPPED.contains(&name.as_str()) || label) && !is_note(&attrs);
                if !void
                    && (dropped
                        || is_nav(&name, &attrs)
                        || is_note_marker(&name, &attrs, w.note.is_some()))
                {
                    w.skip = Some((name, 1));
                    continue;
                }
                if let Some((note, depth)) = w.note.as_mut() {
                    if *note == name && !void {
                        *depth += 1;
                    }
                } else if is_note(&attrs) && !void {
                    w.note = Some((name.clone(), 1));
                }
                if let Some((main, depth)) = w.main.as_mut() {
                    if *main == name && !void {
                        *depth += 1;
                    }
                } else if has_main && is_main(&name, &attrs) && !void {
                    w.main = Some((name.clone(), 1));
                }
                if !w.collecting(has_main) {
                    continue;
                }
                if name == "tr" || name == "table" {
                    w.cells = 0;
                    w.after_icon = false;
                }
                if BLOCKS.contains(&name.as_str()) {
                    w.block_boundary(&name, false);
                }
                if name == "tr" || name == "table" {
                    w.row_start = w.buf.len();
                }
                if let Some(level) = heading_level(&name)
                    && w.cells == 0
                {
                    w.heading = Some(level);
                }
                if name == "pre" {
                    w.pre += 1;
                }
                if name == "a" {
                    w.in_page_link = attrs
                        .get(b"href".as_slice())
                        .is_some_and(|h| h.trim_start().starts_with('#'));
                }
                // A table row is one paragraph: a cell means little
                // without the rest of its row ("139 (SMB) | TCP | IN |
                // Windows SMB printing."), so cells are joined, not split.
                if name == "td" || name == "th" {
                    let row = w.buf.get(w.row_start..).unwrap_or_default();
                    if row.trim().is_empty() {
                        w.buf.push(' ');
                    } else if w.after_icon {
                        // Asciidoctor's admonition: its label cell, then
                        // its text ("Note: Back up first.").
                        w.buf.truncate(w.buf.trim_end().len());
                        w.buf.push_str(": ");
                    } else {
                        w.buf.push_str(" | ");
                    }
                    w.after_icon = w.admonition.is_some() && has_class(&attrs, &["icon"]);
                    w.cells += 1;
                }
            }
            Token::EndTag(tag) => {
                let name = lossy(&tag.name).to_ascii_lowercase();
                if name == "title" && w.in_title {
                    w.in_title = false;
                    continue;
                }
                if let Some((skipped, depth)) = w.skip.as_mut() {
                    if *skipped == name {
                        *depth -= 1;
                        if *depth == 0 {
                            w.skip = None;
                        }
                    }
                    continue;
                }
                if let Some((note, depth)) = w.note.as_mut()
                    && *note == name
                {
                    *depth -= 1;
                    if *depth == 0 {
                        w.note = None;
                    }
                }
                if let Some((adm, depth)) = w.admonition.as_mut()
                    && *adm == name
                {
                    *depth -= 1;
                    if *depth == 0 {
                        w.admonition = None;
                    }
                }
                let collecting = w.collecting(has_main);
                if name == "a" {
                    w.in_page_link = false;
                }
                if name == "td" || name == "th" {
                    w.cells = w.cells.saturating_sub(1);
                }
                if name == "tr" || name == "table" {
                    w.cells = 0;
                }
                if collecting && BLOCKS.contains(&name.as_str()) {
                    w.block_boundary(&name, true);
                }
                if collecting && name == "pre" {
                    w.pre = w.pre.saturating_sub(1);
                }
                if let Some((main, depth)) = w.main.as_mut()
                    && *main == name
                {
                    *depth -= 1;
                    if *depth == 0 {
                        w.main = None;
                        // Main content seen: nothing after it is kept.
                        w.skip = Some((String::new(), 1));
                    }
                }
            }
            Token::String(s) => {
                if w.in_title {
                    w.title.push_str(&lossy(&s.value));
                } else if w.collecting(has_main) {
                    let text = lossy(&s.value);
                    if !text.trim().is_empty() {
                        // Text after a term: its description has begun.
                        w.term = Term::None;
                        if w.in_page_link {
                            w.link_text = true;
                        } else {
                            w.other_text = true;
                        }
                    }
                    w.buf.push_str(&text);
                }
            }
            Token::Comment(_) | Token::Doctype(_) | Token::Error(_) => {}
        }
    }
    w.flush();
    let title = Some(collapse_spaces(&w.title))
        .filter(|t| !t.is_empty())
        .map(|t| page_title(t, w.first_h1.as_deref()))
        .or(w.first_h1)
        .or(w.first_heading);
    w.out.finish(Format::Html, title)
}

/// Separators between a page's own title and its site's name in `<title>`
/// ("Installation — Foo 1.0 documentation", "Pricing | Acme Help").
const TITLE_SEPARATORS: &[&str] = &[" - ", " | ", " — ", " – ", " · ", " :: ", " » "];

/// The page's own title: `<title>` without the site's name when the page's
/// `<h1>` is what precedes or follows a separator; else `<title>` as it is.
fn page_title(title: String, h1: Option<&str>) -> String {
    let Some(h1) = h1.map(str::trim).filter(|h| !h.is_empty()) else {
        return title;
    };
    let own = TITLE_SEPARATORS.iter().any(|sep| {
        title
            .strip_prefix(h1)
            .is_some_and(|rest| rest.starts_with(sep) && rest.len() > sep.len())
            || title
                .strip_suffix(h1)
                .is_some_and(|rest| rest.ends_with(sep) && rest.len() > sep.len())
    });
    if own { h1.to_owned() } else { title }
}

fn attrs<S: html5gum::SpanBound>(
    raw: &BTreeMap<html5gum::HtmlString, html5gum::Spanned<html5gum::HtmlString, S>>,
) -> Attrs {
    raw.iter()
        .map(|(k, v)| (k.0.to_ascii_lowercase(), lossy(&v.value)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn blocks(e: &Extracted) -> Vec<(&str, Option<u8>)> {
        e.blocks
            .as_ref()
            .map(|b| {
                b.iter()
                    .map(|b| (&e.text[b.range.clone()], b.heading))
                    .collect()
            })
            .unwrap_or_default()
    }

    #[test]
    fn a_table_row_is_one_paragraph_whatever_its_cells_hold() {
        // Sphinx wraps each cell's text in <p>; a heading in a cell is text.
        let html = br#"<html><body><h1>Limits</h1>
            <table><tr><th><p>Card</p></th><th><h3>Daily limit</h3></th></tr>
            <tr><td><p>Debit</p></td><td><p>500 EUR.</p><p>Raised on request.</p></td></tr>
            <tr><td>Credit<br>card</td><td><ul><li>1000 EUR</li></ul></td></tr>
            <tr><td>Prepaid</td><td>none</td></table>
            <p>After the table.</p></body></html>"#;
        let e = extract(html);
        assert_eq!(
            blocks(&e),
            [
                ("Limits", Some(1)),
                ("Card | Daily limit", None),
                ("Debit | 500 EUR. Raised on request.", None),
                ("Credit card | 1000 EUR", None),
                ("Prepaid | none", None),
                ("After the table.", None),
            ]
        );
    }

    #[test]
    fn a_definition_starts_with_its_term() {
        // A man page's options, then Sphinx's <dd><p>, a term ending in a
        // colon, an empty description, and two terms for one description.
        let html = br#"<html><body><h2>Options</h2><dl>
            <dt>-E</dt>
            <dd>Enables the printer and accepts new print jobs.</dd>
            <dt><code>--share-printers</code></dt>
            <dd><p>Enables sharing of printers.</p><p>See also remote access.</p></dd>
            <dt>Note:</dt><dd>Only root may do this.</dd>
            <dt>-x</dt><dd></dd>
            <dt>-h</dt><dt>--help</dt><dd>Shows help.</dd>
            </dl><p>After the list.</p></body></html>"#;
        let e = extract(html);
        assert_eq!(
            blocks(&e),
            [
                ("Options", Some(2)),
                ("-E: Enables the printer and accepts new print jobs.", None),
                ("--share-printers: Enables sharing of printers.", None),
                ("See also remote access.", None),
                ("Note: Only root may do this.", None),
                ("-x:", None),
                ("-h, --help: Shows help.", None),
                ("After the list.", None),
            ]
        );
    }

    #[test]
    fn the_terms_of_one_description_stay_together() {
        // As git's AsciiDoc-made man pages list an option's spellings; the
        // last term alone would read "--no-gpg-sign: GPG-sign commits."
        let html = br#"<html><body><div class="dlist"><dl>
            <dt class="hdlist1">
            -S[&lt;keyid&gt;]
            </dt>
            <dt class="hdlist1">
            --gpg-sign[=&lt;keyid&gt;]
            </dt>
            <dt class="hdlist1">
            --no-gpg-sign
            </dt>
            <dd>
            <p>
                    GPG-sign commits. <code>--no-gpg-sign</code> is useful to
                    countermand an earlier <code>--gpg-sign</code>.
            </p>
            </dd>
            <dt>See also:</dt><dt>Related</dt><dd>git-tag(1)</dd>
            <dt>-q<dt>--quiet<dd>Quiet.
            </dl></div>
            <dl><dt><a href="a.html#maze">A.1. The Debian maze</a></dt>
            <dt><a href="a.html#history">A.2. Copyright history</a></dt></dl>
            </body></html>"#;
        let e = extract(html);
        assert_eq!(
            blocks(&e),
            [
                (
                    "-S[<keyid>], --gpg-sign[=<keyid>], --no-gpg-sign: GPG-sign commits. \
                     --no-gpg-sign is useful to countermand an earlier --gpg-sign.",
                    None
                ),
                ("See also, Related: git-tag(1)", None),
                ("-q, --quiet: Quiet.", None),
                // Terms without a description (a list of links) stay
                // apart.
                ("A.1. The Debian maze", None),
                ("A.2. Copyright history", None),
            ]
        );
    }

    #[test]
    fn more_than_four_terms_before_a_description_are_entries_of_their_own() {
        // A back-of-book index written as a definition list: the last entry
        // has sub-entries, the entries before it are complete.
        let html = br#"<html><body><dl>
            <dt>Abyss Policy, <a href="w.html">Options</a></dt>
            <dt>Acquire, <a href="c.html">Create</a></dt>
            <dt>Airbrush, <a href="a.html">Airbrush</a></dt>
            <dt>Align, <a href="al.html">Align</a></dt>
            <dt>Animation</dt>
            <dd>Animated GIF options.</dd>
            <dt>-a</dt><dt>-b</dt><dt>-c</dt><dt>-d</dt><dd>Four spellings.</dd>
            </dl></body></html>"#;
        let e = extract(html);
        assert_eq!(
            blocks(&e),
            [
                ("Abyss Policy, Options", None),
                ("Acquire, Create", None),
                ("Airbrush, Airbrush", None),
                ("Align, Align", None),
                ("Animation: Animated GIF options.", None),
                ("-a, -b, -c, -d: Four spellings.", None),
            ]
        );
    }

    #[test]
    fn contents_lists_indexes_and_image_captions_are_not_text() {
        // As DocBook writes them (GIMP's help, the Debian Reference), with
        // Sphinx's and CUPS's forms.
        let html = br#"<html><head><title>Crop</title></head><body>
            <div class="toc"><p><b>Table of Contents</b></p><dl class="toc">
              <dt><span class="sect1"><a href="crop.html">4.5. Crop An Image</a></span></dt>
              <dd><dl><dt><a href="crop.html#x">4.5.1. Intention</a></dt></dl></dd>
            </dl></div>
            <div class="list-of-figures"><p><b>List of Figures</b></p><dl><dt>3.27. Example</dt></dl></div>
            <div class="toctree-wrapper compound"><ul><li><a href="install.html">Installation</a></li></ul></div>
            <p>To crop an image, activate the Crop tool.</p>
            <div class="figure"><p class="title"><strong>Figure 3.27. Example Image for Cropping</strong></p>
              <div class="figure-contents"><div class="mediaobject"><img src="a.jpg" alt="Example" />
              <div class="caption"><p>Source image</p></div></div></div></div>
            <div class="informalfigure"><div class="mediaobject"><img src="b.jpg" />
              <div class="caption"><p>Horizontal flipped image</p></div></div></div>
            <p>Click the <span class="inlinemediaobject"><img src="i.png" /></span> icon.</p>
            <div class='figure'><table summary='Chain'><caption>Figure 1: Raster Filter Chain</caption>
              <tr><td><img src='chain.png'></td></tr></table></div>
            <div class="index"><h2>Index</h2><div class="indexdiv"><h3>A</h3><dl>
              <dt>Abyss Policy, <a href="w.html">Options</a></dt></dl></div></div>
            <p>The end.</p>
            </body></html>"#;
        let e = extract(html);
        assert_eq!(
            blocks(&e),
            [
                ("To crop an image, activate the Crop tool.", None),
                ("Click the icon.", None),
                ("Index", Some(2)),
                ("The end.", None),
            ]
        );
    }

    #[test]
    fn an_admonitions_label_does_not_lead_a_description_and_a_term_does_not_open_a_table_row() {
        // DocBook's graphical admonitions, as GIMP's help writes them inside
        // a definition.
        let html = br#"<html><body><dl class="variablelist">
            <dt><span class="term">Input Type</span></dt>
            <dd><div class="note"><table border="0" summary="Note">
              <tr><td rowspan="2"><img alt="[Note]" src="note.png" /></td><th align="left">Note</th></tr>
              <tr><td align="left"><p>These options are described in Section 2.</p></td></tr>
            </table></div></dd>
            <dt>Port</dt><dd><table><tr><td>631</td><td>TCP</td></tr></table></dd>
            </dl>
            <div class="warning"><table><tr><th>Warning</th></tr><tr><td>Back up first.</td></tr></table></div>
            <table><tr><th>Name</th><th>Value</th></tr></table>
            <div class="admonitionblock"><table><tr><td class="icon">
              <div class="title">Note</div></td>
              <td class="content">The build is parallelizable.</td></tr></table></div>
            <table><tr><td class="icon">x</td><td>y</td></tr></table>
            </body></html>"#;
        let e = extract(html);
        assert_eq!(
            blocks(&e),
            [
                (
                    "Input Type: These options are described in Section 2.",
                    None
                ),
                ("Port: 631 | TCP", None),
                // Outside a definition the label stays, as the text
                // edition of such a manual prints it.
                ("Warning", None),
                ("Back up first.", None),
                ("Name | Value", None),
                // Asciidoctor's admonition: label, then text.
                ("Note: The build is parallelizable.", None),
                // An icon cell outside an admonition is a cell.
                ("x | y", None),
            ]
        );
    }

    #[test]
    fn a_definition_whose_end_tags_are_left_out_still_starts_with_its_term() {
        // As CUPS's man pages are written: no </dt>, no </dd>.
        let html = br#"<html><body><h2>Options</h2>
            The <b>lpmove</b> command supports the following options:
            <dl class="man">
            <dt><b>-E</b>
            <dd style="margin-left: 5.0em">Forces encryption when connecting to the server.
            <dt><b>-U </b><i>username</i>
            <dd style="margin-left: 5.0em">Specifies an alternate username.
            <dt><b>-h</b><dt><b>--help</b>
            <dd>Shows help.
            </dl><p>After the list.</p></body></html>"#;
        let e = extract(html);
        assert_eq!(
            blocks(&e),
            [
                ("Options", Some(2)),
                ("The lpmove command supports the following options:", None),
                ("-E: Forces encryption when connecting to the server.", None),
                ("-U username: Specifies an alternate username.", None),
                ("-h, --help: Shows help.", None),
                ("After the list.", None),
            ]
        );
    }

    #[test]
    fn unbalanced_definition_lists_lose_no_text() {
        // Stray, nested and unclosed terms and descriptions, in any order:
        // every word survives, nothing panics.
        for html in [
            "<dd>a1</dd></dt><dt>b1<dl><dt>c1<dd>d1</dl>e1</dd>f1",
            "</dl></dd></dt>a1<dt><dt><dd><dd>b1</dl></dl>",
            "<dl><dt>a1<dd><dl><dt>b1<dd>c1</dl>d1<dt>e1",
            "<dt>a1<table><tr><td><dd>b1</td></tr></table>c1",
        ] {
            let e = extract(html.as_bytes());
            for w in ["a1", "b1", "c1", "d1", "e1", "f1"] {
                assert_eq!(
                    html.contains(w),
                    e.text.contains(w),
                    "{w} in {html:?}: {:?}",
                    e.text
                );
            }
        }
    }

    #[test]
    fn every_short_sequence_of_list_tags_loses_no_text() {
        // Every sequence of five tags from the definition-list family (and
        // the blocks that end a term), each followed by a word: terms held
        // back for a description that never comes are still written.
        every_sequence_keeps_its_words(
            &[
                "<dt>", "</dt>", "<dd>", "</dd>", "<dl>", "</dl>", "<p>", "<h2>",
            ],
            5,
        );
        // Long enough for more terms than one description joins.
        every_sequence_keeps_its_words(&["<dt>", "</dt>", "<dd>", "<p>"], 7);
    }

    fn every_sequence_keeps_its_words(tags: &[&str], len: u32) {
        let n = tags.len();
        for code in 0..n.pow(len) {
            let mut html = String::new();
            let mut c = code;
            for i in 0..len {
                html.push_str(tags[c % n]);
                c /= n;
                html.push_str(&format!(" w{i} "));
            }
            let e = extract(html.as_bytes());
            for i in 0..len {
                let w = format!("w{i}");
                assert!(e.text.contains(&w), "{w} lost from {html:?}: {:?}", e.text);
            }
        }
    }

    #[test]
    fn the_pages_own_contents_list_is_navigation() {
        let html = br##"<html><head><title>Raster drivers</title></head><body>
            <div class="contents"><h2>Contents</h2><ul>
              <li><a href="#BASICS">Printer Driver Basics</a></li>
              <li><a href="#FILTERS">Using Filters</a><ul><li><a href="#F1">Filter Order</a></li></ul></li>
            </ul></div>
            <h2 id="BASICS"><a href="#BASICS">Printer Driver Basics</a></h2>
            <p>A driver is a PPD file and filters (see <a href="#FILTERS">Using Filters</a>).</p>
            <ul><li><a href="other.html#x">Another page</a></li></ul>
            </body></html>"##;
        let e = extract(html);
        assert_eq!(
            blocks(&e),
            [
                ("Contents", Some(2)),
                ("Printer Driver Basics", Some(2)),
                (
                    "A driver is a PPD file and filters (see Using Filters).",
                    None
                ),
                ("Another page", None),
            ]
        );
    }

    #[test]
    fn keeps_text_drops_chrome() {
        let html = br#"<!doctype html><html><head><title>Refunds &amp; returns</title>
            <style>p { color: red }</style><script>if (a<b) { document.write("<p>x</p>") }</script></head>
            <body><nav><a href="/">Home</a></nav>
            <div class="navheader">Prev | Next</div>
            <h1>Refund policy</h1>
            <p>Refunds are   issued within
               5 business days.</p>
            <ul><li>Opened software can&#8217;t be refunded.</li><li>Gift cards neither.</li></ul>
            <pre>$ refund --order 42
  done</pre>
            <footer>Copyright</footer></body></html>"#;
        let e = extract(html);
        assert_eq!(e.title.as_deref(), Some("Refunds & returns"));
        assert_eq!(
            blocks(&e),
            [
                ("Refund policy", Some(1)),
                ("Refunds are issued within 5 business days.", None),
                ("Opened software can\u{2019}t be refunded.", None),
                ("Gift cards neither.", None),
                ("$ refund --order 42\n  done", None),
            ]
        );
        assert!(!e.text.contains("Home") && !e.text.contains("Copyright"));
        assert!(!e.text.contains("color") && !e.text.contains("document.write"));
    }

    #[test]
    fn main_element_wins_and_nested_drops_count_depth() {
        let html = b"<body><div>Site banner</div><main><h2>Doc</h2><div role=navigation><div>in nav</div>still nav</div><p>Body text.</p></main><p>After main.</p></body>";
        let e = extract(html);
        assert_eq!(blocks(&e), [("Doc", Some(2)), ("Body text.", None)]);
        assert_eq!(e.title.as_deref(), Some("Doc"));
    }

    #[test]
    fn the_site_name_leaves_the_title_and_permalinks_the_text() {
        let sphinx = "<html><head><title>Installation \u{2014} Foo 1.0 documentation</title></head><body><div role=main><h1>Installation<a class=\"headerlink\" href=\"#installation\" title=\"Link to this heading\">\u{b6}</a></h1><p>Run pip.</p></div></body></html>";
        let e = extract(sphinx.as_bytes());
        assert_eq!(e.title.as_deref(), Some("Installation"));
        assert_eq!(blocks(&e), [("Installation", Some(1)), ("Run pip.", None)]);
        let mdbook = b"<title>Storing Text with Strings - The Rust Programming Language</title><main><h1><a class=header href=#s>Storing Text with Strings</a></h1><p>Text.</p></main>";
        assert_eq!(
            extract(mdbook).title.as_deref(),
            Some("Storing Text with Strings")
        );
        let site_first = b"<title>Acme Help | Pricing</title><h1>Pricing</h1>";
        assert_eq!(extract(site_first).title.as_deref(), Some("Pricing"));
        // A title that is not the h1 plus a site name stays as it is.
        for (html, want) in [
            (
                &b"<title>Pricing plans</title><h1>Pricing</h1>"[..],
                "Pricing plans",
            ),
            (b"<title>Pricing - </title><h1>Pricing</h1>", "Pricing -"),
            (b"<title>A - B</title><h1>C</h1>", "A - B"),
            (b"<title>Only title</title>", "Only title"),
        ] {
            assert_eq!(extract(html).title.as_deref(), Some(want));
        }
    }

    #[test]
    fn notes_are_text_and_their_markers_are_not() {
        // EPUB 3 (LibreOffice's export): a noteref in the sentence, the
        // footnote as an <aside> whose first link points back.
        let epub = br##"<body><p>Book before you leave.<sup id="c1"><a epub:type="noteref" href="#d1">1</a></sup> The portal applies rates.</p>
            <aside epub:type="footnote" id="d1"><p><sup><a href="#c1">1</a></sup>Late trips need approval, see <a href="https://example.com/x">the form</a>.</p></aside>
            <aside class="related"><p>Also read this.</p></aside></body>"##;
        assert_eq!(
            extract(epub).text,
            "Book before you leave. The portal applies rates.\n\n\
             Late trips need approval, see the form."
        );
        // Pandoc: ARIA's DPUB roles.
        let pandoc = br##"<p>Rates apply.<a href="#fn1" class="footnote-ref" id="fnref1" role="doc-noteref"><sup>1</sup></a> Book early.</p>
            <section class="footnotes" role="doc-endnotes"><hr /><ol><li id="fn1"><p>Negotiated rates only.<a href="#fnref1" class="footnote-back" role="doc-backlink">&#8617;&#65038;</a></p></li></ol></section>"##;
        assert_eq!(
            extract(pandoc).text,
            "Rates apply. Book early.\n\nNegotiated rates only."
        );
    }

    #[test]
    fn garbage_is_text_not_a_panic() {
        for input in [
            &b""[..],
            b"<",
            b"</p></div><<<>>>&#xFFFFFF;",
            b"\xff\xfe<h1>\x00</h1>",
            b"<script>",
        ] {
            let _ = extract(input);
        }
        assert_eq!(extract(b"<p>a</p>").text, "a");
    }
}

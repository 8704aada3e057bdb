//! Per-document metadata: title and source URL.

use percent_encoding::{AsciiSet, CONTROLS, utf8_percent_encode};

use crate::chunker::{Flavor, blocks};
use crate::formats::{Extracted, Format};
use crate::markdown;

/// The title of a document: the `title` of its front matter (YAML or TOML,
/// as static site generators write it; in reStructuredText, a `:title:` in
/// the field list that opens the file), else its first level-1 heading
/// (in reStructuredText, its first section title; in AsciiDoc, its
/// `= Title`)
/// (`# Title`, or `Title` underlined with `===`), else its first heading of
/// any level, else the file name (last segment of `rel_path`). Headings
/// inside fenced code blocks do not count; `.txt` files always get their
/// file name.
pub fn document_title(rel_path: &str, text: &str) -> String {
    let file_name = rel_path.rsplit('/').next().unwrap_or(rel_path).to_owned();
    let flavor = Flavor::of(rel_path);
    if flavor == Flavor::Text {
        return file_name;
    }
    let from = if text.starts_with('\u{feff}') { 3 } else { 0 };
    let metadata = match flavor {
        Flavor::Rst => crate::rst::metadata_title(text, from),
        // The document title (`= Title`) is its first level-1 heading.
        Flavor::AsciiDoc => None,
        _ => markdown::front_matter(text, from).and_then(|f| f.title),
    };
    if let Some(title) = metadata {
        return title;
    }
    let mut first_any: Option<&str> = None;
    for block in blocks(text, flavor) {
        let Some((level, title)) = block.heading else {
            continue;
        };
        if title.is_empty() {
            continue;
        }
        if level == 1 {
            return markdown::one_line(title);
        }
        first_any.get_or_insert(title);
    }
    first_any.map_or(file_name, markdown::one_line)
}

/// The title of an extracted document: Markdown and text as
/// [`document_title`]; PDF from its metadata (`/Title`); HTML from `<title>`,
/// else its first `<h1>`, else its first heading; DOCX from its core
/// properties and ODT from its `meta.xml`, else its first title or heading
/// paragraph; EPUB from its package document, else its first document's
/// title; else the file name.
pub fn extracted_title(rel_path: &str, doc: &Extracted) -> String {
    match doc.format {
        Format::Markdown | Format::Text | Format::Rst | Format::AsciiDoc => {
            document_title(rel_path, &doc.text)
        }
        _ => doc
            .title
            .clone()
            .unwrap_or_else(|| rel_path.rsplit('/').next().unwrap_or(rel_path).to_owned()),
    }
}

/// Characters escaped in a URL path segment: controls, space, and everything
/// RFC 3986 does not allow there unescaped (`/` is escaped too: we join the
/// segments ourselves).
const SEGMENT: &AsciiSet = &CONTROLS
    .add(b' ')
    .add(b'"')
    .add(b'#')
    .add(b'%')
    .add(b'/')
    .add(b'<')
    .add(b'>')
    .add(b'?')
    .add(b'[')
    .add(b'\\')
    .add(b']')
    .add(b'^')
    .add(b'`')
    .add(b'{')
    .add(b'|')
    .add(b'}');

/// `base_url` joined with `rel_path`, each path segment percent-encoded
/// (non-ASCII as UTF-8). A `/` is inserted between them unless `base_url`
/// already ends with one. `None` when there is no base URL.
///
/// ```
/// use groundcite_index::source_url;
/// assert_eq!(
///     source_url(Some("https://help.example.com/docs"), "privacy/data export.md").as_deref(),
///     Some("https://help.example.com/docs/privacy/data%20export.md"),
/// );
/// assert_eq!(source_url(None, "a.md"), None);
/// ```
pub fn source_url(base_url: Option<&str>, rel_path: &str) -> Option<String> {
    let base = base_url?;
    let mut url = base.to_owned();
    if !url.ends_with('/') {
        url.push('/');
    }
    for (i, segment) in rel_path.split('/').enumerate() {
        if i > 0 {
            url.push('/');
        }
        url.extend(utf8_percent_encode(segment, SEGMENT));
    }
    Some(url)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn title_rules() {
        assert_eq!(document_title("a/b.md", "## Sub\n# Main\n"), "Main");
        assert_eq!(document_title("a/b.md", "text\n### Only\n"), "Only");
        assert_eq!(document_title("a/b.md", "no headings"), "b.md");
        assert_eq!(document_title("b.md", "```\n# code\n```\n"), "b.md");
        assert_eq!(document_title("b.md", "#\n# Real"), "Real");
        assert_eq!(document_title("b.txt", "# Not markdown"), "b.txt");
        assert_eq!(document_title("b.md", "\u{feff}# Bom"), "Bom");
    }

    #[test]
    fn url_joining() {
        assert_eq!(
            source_url(Some("https://x.example/"), "a b/c#d?.md").as_deref(),
            Some("https://x.example/a%20b/c%23d%3F.md")
        );
        assert_eq!(
            source_url(Some("https://x.example/h"), "日本.md").as_deref(),
            Some("https://x.example/h/%E6%97%A5%E6%9C%AC.md")
        );
    }
}

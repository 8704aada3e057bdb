//! EPUB (2 and 3): the XHTML documents of the package's spine, in reading
//! order, each read as an HTML page is (headings start sections). The
//! navigation document (EPUB 3's table of contents) is left out: its
//! entries repeat the headings. The title is the package's `dc:title`,
//! else the first document's.

use std::collections::HashMap;

use quick_xml::Reader;
use quick_xml::events::Event;

use super::package::{self, Package, attr, dc_title};
use super::{ExtractError, Extracted, Format, TextBuilder, html};

/// Most uncompressed bytes read from one book's documents: a ZIP of many
/// small bombs stops here, as one large one stops at the part limit.
const MAX_BOOK_BYTES: usize = 256 * 1024 * 1024;

fn corrupt(message: impl std::fmt::Display) -> ExtractError {
    ExtractError::corrupt(Format::Epub, message)
}

fn read_part(zip: &mut Package<'_>, name: &str) -> Result<Option<String>, ExtractError> {
    package::read_part(zip, name, Format::Epub)
}

/// The package document's path, from `META-INF/container.xml`.
fn rootfile(container: &str) -> Option<String> {
    let mut reader = Reader::from_str(container);
    loop {
        match reader.read_event() {
            Ok(Event::Start(e) | Event::Empty(e)) if e.local_name().as_ref() == "rootfile" => {
                if let Some(path) = attr(&e, "full-path") {
                    return Some(path);
                }
            }
            Ok(Event::Eof) | Err(_) => return None,
            _ => {}
        }
    }
}

/// A manifest item.
struct Item {
    href: String,
    media_type: String,
    nav: bool,
}

/// The spine's documents, in reading order, from the package document.
fn spine(opf: &str) -> Vec<Item> {
    let mut manifest: HashMap<String, Item> = HashMap::new();
    let mut order: Vec<String> = Vec::new();
    let mut reader = Reader::from_str(opf);
    loop {
        match reader.read_event() {
            Ok(Event::Start(e) | Event::Empty(e)) => match e.local_name().as_ref() {
                "item" => {
                    if let (Some(id), Some(href)) = (attr(&e, "id"), attr(&e, "href")) {
                        let properties = attr(&e, "properties").unwrap_or_default();
                        manifest.insert(
                            id,
                            Item {
                                href,
                                media_type: attr(&e, "media-type").unwrap_or_default(),
                                nav: properties.split_whitespace().any(|p| p == "nav"),
                            },
                        );
                    }
                }
                "itemref" => {
                    if let Some(id) = attr(&e, "idref") {
                        order.push(id);
                    }
                }
                _ => {}
            },
            Ok(Event::Eof) | Err(_) => break,
            _ => {}
        }
    }
    let mut out = Vec::new();
    for id in order {
        if let Some(item) = manifest.remove(&id) {
            out.push(item);
        }
    }
    out
}

/// `href` (relative to the package document `base`, percent-encoded,
/// perhaps with a fragment) as a path inside the ZIP; `None` when it
/// leaves the package.
fn resolve(base: &str, href: &str) -> Option<String> {
    let href = href.split('#').next().unwrap_or_default();
    let href = percent_encoding::percent_decode_str(href)
        .decode_utf8()
        .ok()?;
    let dir = base.rsplit_once('/').map_or("", |(dir, _)| dir);
    let mut parts: Vec<&str> = dir.split('/').filter(|s| !s.is_empty()).collect();
    for seg in href.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            s => parts.push(s),
        }
    }
    Some(parts.join("/")).filter(|p| !p.is_empty())
}

pub(super) fn extract(bytes: &[u8]) -> Result<Extracted, ExtractError> {
    let mut zip = package::open(bytes, Format::Epub)?;
    if let Some(mime) = read_part(&mut zip, "mimetype")? {
        let mime = mime.trim();
        if mime != "application/epub+zip" {
            return Err(corrupt(format_args!(
                "not an EPUB (its mimetype is {mime:?})"
            )));
        }
    }
    let container = read_part(&mut zip, "META-INF/container.xml")?
        .ok_or_else(|| corrupt("no META-INF/container.xml (not an EPUB)"))?;
    let opf_path =
        rootfile(&container).ok_or_else(|| corrupt("META-INF/container.xml names no rootfile"))?;
    let opf = read_part(&mut zip, &opf_path)?
        .ok_or_else(|| corrupt(format_args!("no package document {opf_path}")))?;
    let items = spine(&opf);
    // DRM encrypts the documents themselves (font obfuscation, also listed
    // in encryption.xml, touches only fonts).
    if let Some(encryption) = read_part(&mut zip, "META-INF/encryption.xml")? {
        let encrypted = items.iter().any(|item| {
            resolve(&opf_path, &item.href).is_some_and(|p| encryption.contains(p.as_str()))
        });
        if encrypted {
            return Err(corrupt(
                "the book is DRM-protected (its documents are encrypted)",
            ));
        }
    }

    let mut out = TextBuilder::default();
    let mut first_title = None;
    let mut first_heading = None;
    let mut read = 0usize;
    for item in &items {
        let is_page = matches!(
            item.media_type.as_str(),
            "application/xhtml+xml" | "text/html" | "application/x-dtbook+xml"
        ) || item.media_type.is_empty();
        if !is_page || item.nav {
            continue;
        }
        let Some(path) = resolve(&opf_path, &item.href) else {
            continue;
        };
        // A spine entry the package does not hold is skipped, as a
        // reading system skips it.
        let Some(page) = read_part(&mut zip, &path)? else {
            continue;
        };
        read += page.len();
        if read > MAX_BOOK_BYTES {
            return Err(corrupt(format_args!(
                "its documents hold more than {MAX_BOOK_BYTES} bytes uncompressed"
            )));
        }
        let doc = html::extract(page.as_bytes());
        if first_title.is_none() {
            first_title = doc.title.clone();
        }
        for block in doc.blocks.iter().flatten() {
            let body = &doc.text[block.range.clone()];
            if block.heading.is_some() && first_heading.is_none() {
                first_heading = Some(body.to_owned());
            }
            out.block(body, block.heading);
        }
    }
    Ok(out.finish(
        Format::Epub,
        dc_title(&opf).or(first_title).or(first_heading),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hrefs_resolve_against_the_package_document() {
        assert_eq!(
            resolve("OEBPS/content.opf", "sections/a%20b.xhtml#top").as_deref(),
            Some("OEBPS/sections/a b.xhtml")
        );
        assert_eq!(
            resolve("OEBPS/content.opf", "../Text/c.html").as_deref(),
            Some("Text/c.html")
        );
        assert_eq!(
            resolve("content.opf", "./c.html").as_deref(),
            Some("c.html")
        );
        assert_eq!(resolve("content.opf", "../../etc/passwd"), None);
        assert_eq!(resolve("content.opf", "#only-a-fragment"), None);
    }

    #[test]
    fn the_spine_orders_the_manifest_and_marks_navigation() {
        let opf = r#"<package><manifest>
            <item id="b" href="b.xhtml" media-type="application/xhtml+xml"/>
            <item id="toc" href="toc.xhtml" media-type="application/xhtml+xml" properties="nav scripted"/>
            <item id="a" href="a.xhtml" media-type="application/xhtml+xml"/>
            <item id="css" href="s.css" media-type="text/css"/>
          </manifest><spine><itemref idref="toc"/><itemref idref="a"/><itemref idref="b"/><itemref idref="missing"/></spine></package>"#;
        let items = spine(opf);
        let hrefs: Vec<(&str, bool)> = items.iter().map(|i| (i.href.as_str(), i.nav)).collect();
        assert_eq!(
            hrefs,
            [("toc.xhtml", true), ("a.xhtml", false), ("b.xhtml", false)]
        );
    }
}

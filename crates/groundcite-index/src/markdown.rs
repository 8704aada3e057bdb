//! The little Markdown the chunker needs: lines, ATX and setext headings,
//! code fences, thematic breaks, front matter, and MDX's import lines.
//!
//! Everything here works on byte offsets into the original text and never
//! copies it, so chunk boundaries stay exact substrings of the source.

/// One line of the source: `start..end` excludes the line terminator
/// (`\n` or `\r\n`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Line {
    pub(crate) start: usize,
    pub(crate) end: usize,
}

/// Splits `text[from..]` into lines; a final line without terminator counts.
pub(crate) fn lines(text: &str, from: usize) -> Vec<Line> {
    let mut out = Vec::new();
    let mut start = from;
    while start < text.len() {
        let (end, next) = match text[start..].find('\n') {
            Some(i) => {
                let nl = start + i;
                let end = if text[start..nl].ends_with('\r') {
                    nl - 1
                } else {
                    nl
                };
                (end, nl + 1)
            }
            None => (text.len(), text.len()),
        };
        out.push(Line { start, end });
        start = next;
    }
    out
}

/// Strips up to three leading spaces, as CommonMark allows before a block.
fn strip_indent(line: &str) -> Option<&str> {
    let spaces = line.bytes().take_while(|&b| b == b' ').count();
    (spaces <= 3).then(|| &line[spaces..])
}

/// An ATX heading (`## Title ##`): its level (1 to 6) and its text, trimmed,
/// without the closing `#` sequence. `None` when `line` is not a heading.
pub(crate) fn atx_heading(line: &str) -> Option<(usize, &str)> {
    let rest = strip_indent(line)?;
    let level = rest.bytes().take_while(|&b| b == b'#').count();
    if !(1..=6).contains(&level) {
        return None;
    }
    let after = &rest[level..];
    if !(after.is_empty() || after.starts_with(' ') || after.starts_with('\t')) {
        return None;
    }
    let mut text = after.trim();
    // A closing sequence is a run of `#` preceded by a space (or the whole text).
    let without_hashes = text.trim_end_matches('#');
    if without_hashes.is_empty() {
        text = "";
    } else if without_hashes.len() != text.len()
        && (without_hashes.ends_with(' ') || without_hashes.ends_with('\t'))
    {
        text = without_hashes.trim_end();
    }
    Some((level, text))
}

/// An opening code fence: its character and run length.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Fence {
    ch: u8,
    len: usize,
}

/// `Some` when `line` opens a fenced code block (```` ``` ```` or `~~~`).
pub(crate) fn fence_open(line: &str) -> Option<Fence> {
    let rest = strip_indent(line)?;
    let ch = *rest.as_bytes().first()?;
    if ch != b'`' && ch != b'~' {
        return None;
    }
    let len = rest.bytes().take_while(|&b| b == ch).count();
    if len < 3 {
        return None;
    }
    // A backtick fence's info string may not contain a backtick.
    if ch == b'`' && rest[len..].contains('`') {
        return None;
    }
    Some(Fence { ch, len })
}

/// Whether `line` closes the block opened by `fence`.
pub(crate) fn fence_closes(line: &str, fence: Fence) -> bool {
    let Some(rest) = strip_indent(line) else {
        return false;
    };
    let len = rest.bytes().take_while(|&b| b == fence.ch).count();
    len >= fence.len && rest[len..].trim().is_empty()
}

/// The level of a setext heading underline (`===` → 1, `---` → 2): the
/// sentence rule's own, so a heading the chunker reads is never a quote.
pub(crate) use groundcite_core::sentences::setext_level as setext_underline;

/// Whether `line` is a thematic break (`---`, `***`, `_ _ _`): three or
/// more of one of `-`, `*`, `_`, with only spaces or tabs between. A rule
/// separates blocks; it is not text.
pub(crate) fn thematic_break(line: &str) -> bool {
    let Some(rest) = strip_indent(line) else {
        return false;
    };
    let Some(ch) = rest.trim_start().chars().next() else {
        return false;
    };
    if !matches!(ch, '-' | '*' | '_') {
        return false;
    }
    let mut count = 0;
    for c in rest.chars() {
        if c == ch {
            count += 1;
        } else if c != ' ' && c != '\t' {
            return false;
        }
    }
    count >= 3
}

/// Whether a paragraph that starts with `first` may take a setext
/// underline: not a list item, block quote, table row or HTML line, whose
/// `---` below is a rule.
pub(crate) fn may_be_setext(first: &str) -> bool {
    let t = first.trim_start();
    let bullet = t.starts_with(['-', '*', '+']) && t[1..].starts_with([' ', '\t']);
    let ordered = t.starts_with(|c: char| c.is_ascii_digit())
        && t.trim_start_matches(|c: char| c.is_ascii_digit())
            .starts_with([')', '.']);
    let list = bullet || ordered;
    !(list || t.starts_with(['>', '|', '<']))
}

/// Front matter at the top of a Markdown file, as static site generators
/// (Jekyll, Hugo, Docusaurus, MkDocs) write it: YAML between `---` lines
/// (closed by `---` or `...`), or TOML between `+++` lines. It is metadata,
/// not text: the chunker starts after it, and its `title` names the
/// document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FrontMatter {
    /// Where the body starts (the line after the closing fence).
    pub(crate) body: usize,
    /// The `title` key's value, when it is a one-line string.
    pub(crate) title: Option<String>,
}

/// The front matter that opens `text[from..]`, if any. The block must be
/// closed, and its first non-blank line must be a key (`title: …`,
/// `title = …`, `[table]`): a document that merely opens with a rule is
/// not front matter.
pub(crate) fn front_matter(text: &str, from: usize) -> Option<FrontMatter> {
    let all = lines(text, from);
    let (first, rest) = all.split_first()?;
    let toml = match text[first.start..first.end].trim_end() {
        "---" => false,
        "+++" => true,
        _ => return None,
    };
    let mut title = None;
    let mut keyed = None;
    let mut in_table = false;
    for (k, line) in rest.iter().enumerate() {
        let s = &text[line.start..line.end];
        let closing = s.trim_end();
        if closing == if toml { "+++" } else { "---" } || (!toml && closing == "...") {
            return (keyed == Some(true)).then(|| FrontMatter {
                body: rest.get(k + 1).map_or(text.len(), |next| next.start),
                title,
            });
        }
        if s.trim().is_empty() || s.trim_start().starts_with('#') {
            continue;
        }
        let key = front_matter_key(s, toml);
        keyed.get_or_insert(key.is_some() || (toml && s.starts_with('[')));
        if toml && s.starts_with('[') {
            in_table = true;
        }
        if let Some(("title", value)) = key
            && title.is_none()
            && !in_table
        {
            title = scalar(value, toml).filter(|t| !t.is_empty());
        }
    }
    None
}

/// A top-level `key: value` (YAML) or `key = value` (TOML) line.
fn front_matter_key(line: &str, toml: bool) -> Option<(&str, &str)> {
    if line.starts_with([' ', '\t']) {
        return None;
    }
    let sep = if toml { '=' } else { ':' };
    let (key, value) = line.split_once(sep)?;
    let key = key.trim();
    let simple = !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '.'));
    // YAML wants white space (or nothing) after the colon.
    let spaced = toml || value.is_empty() || value.starts_with([' ', '\t']);
    (simple && spaced).then(|| (key, value.trim()))
}

/// A one-line string value: double- or single-quoted, or (YAML) plain up to
/// a ` #` comment. Block scalars, lists and maps give `None`.
fn scalar(value: &str, toml: bool) -> Option<String> {
    let v = value.trim();
    if let Some(inner) = v.strip_prefix('"') {
        let mut out = String::new();
        let mut chars = inner.chars();
        while let Some(c) = chars.next() {
            match c {
                '"' => return Some(out.trim().to_string()),
                '\\' => match chars.next()? {
                    'n' | 't' | 'r' => out.push(' '),
                    other => out.push(other),
                },
                c => out.push(c),
            }
        }
        return None;
    }
    if let Some(inner) = v.strip_prefix('\'') {
        let mut out = String::new();
        let mut chars = inner.chars().peekable();
        while let Some(c) = chars.next() {
            if c == '\'' {
                if !toml && chars.peek() == Some(&'\'') {
                    chars.next();
                    out.push('\'');
                    continue;
                }
                return Some(out.trim().to_string());
            }
            out.push(c);
        }
        return None;
    }
    if toml || v.starts_with(['|', '>', '[', '{', '&', '*', '!', '%', '@', '`']) {
        return None;
    }
    let plain = match v.find(" #") {
        Some(i) => &v[..i],
        None => v,
    };
    Some(plain.trim().to_string())
}

/// Whether `line` is an MDX `import` or `export` statement: MDX reads
/// every line that starts with either word as JavaScript (in `.mdx` files
/// only: in Markdown, "import your contacts…" is text).
pub(crate) fn mdx_esm(line: &str) -> bool {
    line.starts_with("import ")
        || line.starts_with("export ")
        || line.starts_with("import{")
        || line.starts_with("export{")
}

/// A heading's text on one line (a setext heading may span several).
pub(crate) fn one_line(title: &str) -> String {
    if title.contains(['\n', '\r']) {
        title.split_whitespace().collect::<Vec<_>>().join(" ")
    } else {
        title.to_owned()
    }
}

/// Whether a line holds nothing but white space.
pub(crate) fn is_blank(line: &str) -> bool {
    line.trim().is_empty()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headings() {
        assert_eq!(atx_heading("# Title"), Some((1, "Title")));
        assert_eq!(atx_heading("   ### Deep ###"), Some((3, "Deep")));
        assert_eq!(atx_heading("## C# tips"), Some((2, "C# tips")));
        assert_eq!(atx_heading("## Issue #5"), Some((2, "Issue #5")));
        assert_eq!(atx_heading("#"), Some((1, "")));
        assert_eq!(atx_heading("## ##"), Some((2, "")));
        assert_eq!(atx_heading("#hashtag"), None);
        assert_eq!(atx_heading("    # code"), None);
        assert_eq!(atx_heading("####### seven"), None);
        assert_eq!(atx_heading("plain"), None);
    }

    #[test]
    fn fences() {
        let f = fence_open("```rust").unwrap();
        assert!(fence_closes("```", f));
        assert!(fence_closes("  `````  ", f));
        assert!(!fence_closes("~~~", f));
        assert!(!fence_closes("``", f));
        assert!(fence_open("``").is_none());
        assert!(fence_open("``` a ` b").is_none());
        assert!(fence_open("~~~ a ` b").is_some());
    }

    #[test]
    fn setext_and_rules() {
        assert_eq!(setext_underline("==="), Some(1));
        assert_eq!(setext_underline("   ---  "), Some(2));
        assert_eq!(setext_underline("=="), Some(1));
        assert_eq!(setext_underline("="), None);
        assert_eq!(setext_underline("    ---"), None);
        assert_eq!(setext_underline("- -"), None);
        assert_eq!(setext_underline("--- x"), None);
        assert!(thematic_break("---"));
        assert!(thematic_break(" * * *"));
        assert!(thematic_break("___\t"));
        assert!(!thematic_break("--"));
        assert!(!thematic_break("-*-"));
        assert!(!thematic_break("    ***"));
        assert!(!thematic_break("--- x"));
        assert!(may_be_setext("Refund policy"));
        assert!(may_be_setext("-5 degrees is cold"));
        assert!(!may_be_setext("- item"));
        assert!(!may_be_setext("12. item"));
        assert!(!may_be_setext("> quote"));
        assert!(!may_be_setext("| a | b |"));
        assert!(!may_be_setext("<div>"));
    }

    #[test]
    fn front_matter_yaml_and_toml() {
        let yaml = "---\ntitle: npm-audit\nsection: 1\n---\n\n### Synopsis\n";
        let f = front_matter(yaml, 0).unwrap();
        assert_eq!(f.title.as_deref(), Some("npm-audit"));
        assert_eq!(&yaml[f.body..], "\n### Synopsis\n");
        let crlf = "---\r\ntitle: \"Refunds: how \\\"fast\\\"\" # c\r\n...\r\nBody";
        let f = front_matter(crlf, 0).unwrap();
        assert_eq!(f.title.as_deref(), Some("Refunds: how \"fast\""));
        assert_eq!(&crlf[f.body..], "Body");
        let single = "---\ntitle: 'It''s here'\n---\n";
        assert_eq!(
            front_matter(single, 0).unwrap().title.as_deref(),
            Some("It's here")
        );
        let plain = "---\ntitle: Shipping # internal\nlayout: doc\n---";
        let f = front_matter(plain, 0).unwrap();
        assert_eq!(f.title.as_deref(), Some("Shipping"));
        assert_eq!(f.body, plain.len());
        let toml = "+++\ndraft = false\ntitle = \"Billing\"\n[extra]\ntitle = \"no\"\n+++\ntext";
        assert_eq!(
            front_matter(toml, 0).unwrap().title.as_deref(),
            Some("Billing")
        );
        let toml_table_first = "+++\n[params]\ntitle = \"no\"\n+++\n";
        assert_eq!(front_matter(toml_table_first, 0).unwrap().title, None);
        // No title, a block scalar, or a nested one: front matter without a title.
        for t in [
            "---\nlayout: page\n---\n",
            "---\ntitle: >\n  Folded\n---\n",
            "---\nmeta:\n  title: x\n---\n",
        ] {
            let f = front_matter(t, 0).unwrap();
            assert_eq!(f.title, None, "{t}");
        }
        // Not front matter: unclosed, no key first, not at the top.
        assert_eq!(front_matter("---\ntitle: x\n", 0), None);
        assert_eq!(front_matter("---\nJust a paragraph.\n---\n", 0), None);
        assert_eq!(front_matter("\n---\ntitle: x\n---\n", 0), None);
        assert_eq!(front_matter("----\ntitle: x\n----\n", 0), None);
        assert_eq!(front_matter("---\ntitle:x\n---\n", 0), None);
        assert_eq!(front_matter("", 0), None);
    }

    #[test]
    fn mdx_markup_lines() {
        assert!(mdx_esm("import Tabs from '@theme/Tabs';"));
        assert!(mdx_esm("export const toc = [];"));
        assert!(!mdx_esm("Import settings"));
        assert!(!mdx_esm("  import x from 'y'"));
    }

    #[test]
    fn line_splitting() {
        let text = "a\r\nb\n\nc";
        let got: Vec<&str> = lines(text, 0)
            .iter()
            .map(|l| &text[l.start..l.end])
            .collect();
        assert_eq!(got, ["a", "b", "", "c"]);
        assert!(lines("", 0).is_empty());
    }
}

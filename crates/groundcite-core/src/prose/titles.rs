//! Titles: normalisation, the bounded edit distance, and how a name resolved.

/// Normalizes a title for comparison: lower case, every run of characters
/// that are not letters or digits becomes one space, the articles "the",
/// "a" and "an" are dropped, and so is a trailing file extension (`.pdf`,
/// `.docx`, `.odt`, `.md`, …).
pub fn normalize_title(title: &str) -> String {
    let trimmed = title.trim();
    let ext_stripped = match trimmed.rsplit_once('.') {
        Some((stem, ext))
            if !stem.trim().is_empty()
                && matches!(
                    ext.to_ascii_lowercase().as_str(),
                    "pdf"
                        | "doc"
                        | "docx"
                        | "odt"
                        | "epub"
                        | "txt"
                        | "md"
                        | "html"
                        | "htm"
                        | "pptx"
                        | "xlsx"
                        | "csv"
                        | "rtf"
                ) =>
        {
            stem
        }
        _ => trimmed,
    };
    let mut words: Vec<String> = Vec::new();
    let mut cur = String::new();
    for c in ext_stripped.chars() {
        if c.is_alphanumeric() {
            cur.extend(c.to_lowercase());
        } else if !cur.is_empty() {
            words.push(std::mem::take(&mut cur));
        }
    }
    if !cur.is_empty() {
        words.push(cur);
    }
    words.retain(|w| !matches!(w.as_str(), "the" | "a" | "an"));
    words.join(" ")
}

/// Typos tolerated between two normalized titles whose longer one has `len`
/// characters: 0 up to 3 characters, 1 up to 8, 2 up to 20, 3 beyond.
pub fn max_title_typos(len: usize) -> usize {
    match len {
        0..=3 => 0,
        4..=8 => 1,
        9..=20 => 2,
        _ => 3,
    }
}

/// Edit distance (insertions, deletions, substitutions and adjacent
/// transpositions, each costing 1) between two normalized titles, or `None`
/// when it exceeds `limit`.
pub fn title_distance(a: &str, b: &str, limit: usize) -> Option<usize> {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    if a.len().abs_diff(b.len()) > limit {
        return None;
    }
    let (n, m) = (a.len(), b.len());
    let inf = usize::MAX / 2;
    // Three rows of the optimal-string-alignment table.
    let mut prev2 = vec![inf; m + 1];
    let mut prev: Vec<usize> = (0..=m).collect();
    let mut cur = vec![inf; m + 1];
    for i in 1..=n {
        cur.fill(inf);
        cur[0] = i;
        let lo = i.saturating_sub(limit).max(1);
        let hi = (i + limit).min(m);
        let mut row_min = cur[0];
        for j in lo..=hi {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut d = (prev[j] + 1).min(cur[j - 1] + 1).min(prev[j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                d = d.min(prev2[j - 2] + 1);
            }
            cur[j] = d;
            row_min = row_min.min(d);
        }
        if row_min > limit {
            return None;
        }
        std::mem::swap(&mut prev2, &mut prev);
        std::mem::swap(&mut prev, &mut cur);
    }
    let d = prev[m];
    (d <= limit).then_some(d)
}

/// How a name resolved against the chunks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum NameRes {
    /// One chunk.
    Chunk(usize),
    /// 1-based positions (from "Document 2", "Source 2").
    Positions(Vec<(usize, usize)>),
    /// Several chunks are equally good.
    Ambiguous(Vec<usize>),
    /// Nothing matches.
    NotFound,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn titles_normalize() {
        assert_eq!(
            normalize_title("The Q3 Revenue Memo.pdf"),
            "q3 revenue memo"
        );
        assert_eq!(normalize_title("  Refund—policy!! "), "refund policy");
        assert_eq!(normalize_title("A"), "");
        assert_eq!(normalize_title("Travel Policy.ODT"), "travel policy");
    }

    #[test]
    fn distance_is_bounded() {
        assert_eq!(title_distance("refund policy", "refund polciy", 2), Some(1));
        assert_eq!(title_distance("refund policy", "shipping faq", 3), None);
        assert_eq!(title_distance("abc", "abc", 0), Some(0));
        assert_eq!(title_distance("", "ab", 2), Some(2));
    }
}

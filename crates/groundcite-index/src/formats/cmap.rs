//! ToUnicode CMaps, read leniently and written back in the one form
//! pdf-extract reads without panicking.
//!
//! pdf-extract hands a font's ToUnicode stream to adobe-cmap-parser and
//! unwraps every step: a CMap it cannot parse, a `bfrange` whose destination
//! is not 2 or 4 bytes, an odd-length destination or a lone surrogate each
//! abort the whole document. Real files do this: the Debian Developer's
//! Reference (LaTeX through Sphinx) maps ranges to one-byte destinations
//! such as `<C5>`. So before extraction every ToUnicode stream is read here,
//! with the PDF rules where they are clear and a stated repair where the file
//! breaks them, and replaced by an equivalent CMap: `bfchar` entries, and
//! `bfrange` entries only of the one shape every reader agrees on (single
//! UTF-16 units, consecutive within one block of 256).
//!
//! Repairs: a destination of an odd number of bytes gets a leading zero byte
//! (`<C5>` is read as U+00C5: the producer wrote the code point without its
//! high byte); a destination that is not valid UTF-16 after that is dropped
//! (the glyph falls back to the font's encoding, as with no entry); a range
//! increments the destination's last UTF-16 unit (PDF 32000-1, 9.10.3) and
//! stops where that would overflow. Entries for codes wider than 4 bytes are
//! dropped. Work is bounded: at most [`MAX_ENTRIES`] entries per CMap.

use std::collections::BTreeMap;

/// Most entries kept from one CMap (a range of 2^32 codes must not allocate
/// 2^32 entries); a real font maps at most 65,536 codes.
pub(super) const MAX_ENTRIES: usize = 1 << 16;

/// Entries per `beginbfchar` block; the CMap specification allows 100.
const BLOCK: usize = 100;

#[derive(Debug, Clone, PartialEq)]
enum Token {
    Hex(Vec<u8>),
    Open,
    Close,
    Word(Vec<u8>),
    /// Anything else (literal strings, dictionaries, names): skipped.
    Other,
}

/// A code's bytes as written (their width matters to nobody downstream, but
/// keeping it makes the output the same code as the input), and its
/// destination as UTF-16 units.
type Map = BTreeMap<(u32, usize), Vec<u16>>;

fn hex_value(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

fn is_delimiter(b: u8) -> bool {
    matches!(
        b,
        b'(' | b')' | b'<' | b'>' | b'[' | b']' | b'{' | b'}' | b'/' | b'%'
    )
}

fn tokens(input: &[u8]) -> Vec<Token> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < input.len() {
        let b = input[i];
        if b.is_ascii_whitespace() || b == 0 {
            i += 1;
        } else if b == b'%' {
            while i < input.len() && input[i] != b'\n' && input[i] != b'\r' {
                i += 1;
            }
        } else if input[i..].starts_with(b"<<") || input[i..].starts_with(b">>") {
            out.push(Token::Other);
            i += 2;
        } else if b == b'<' {
            // A hex string; an odd digit count means a final 0 (PDF 7.3.4.3).
            let end = input[i + 1..]
                .iter()
                .position(|&c| c == b'>')
                .map_or(input.len(), |p| i + 1 + p);
            let digits: Option<Vec<u8>> = input[i + 1..end]
                .iter()
                .filter(|c| !c.is_ascii_whitespace())
                .map(|&c| hex_value(c))
                .collect();
            out.push(match digits {
                Some(d) => Token::Hex(
                    d.chunks(2)
                        .map(|p| (p[0] << 4) | p.get(1).copied().unwrap_or(0))
                        .collect(),
                ),
                None => Token::Other,
            });
            i = end + 1;
        } else if b == b'(' {
            // A literal string, nested parentheses balanced, `\` escaping.
            let mut depth = 0usize;
            while i < input.len() {
                match input[i] {
                    b'\\' => i += 1,
                    b'(' => depth += 1,
                    b')' => {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    _ => {}
                }
                i += 1;
            }
            out.push(Token::Other);
            i += 1;
        } else if b == b'[' {
            out.push(Token::Open);
            i += 1;
        } else if b == b']' {
            out.push(Token::Close);
            i += 1;
        } else {
            let start = i;
            i += 1;
            while i < input.len()
                && !input[i].is_ascii_whitespace()
                && input[i] != 0
                && !is_delimiter(input[i])
            {
                i += 1;
            }
            out.push(if b == b'/' || is_delimiter(b) {
                Token::Other
            } else {
                Token::Word(input[start..i].to_vec())
            });
        }
    }
    out
}

fn is_word(token: &Token, word: &[u8]) -> bool {
    matches!(token, Token::Word(w) if w == word)
}

fn code(bytes: &[u8]) -> Option<(u32, usize)> {
    if bytes.is_empty() || bytes.len() > 4 {
        return None;
    }
    Some((
        bytes.iter().fold(0u32, |c, &b| (c << 8) | u32::from(b)),
        bytes.len(),
    ))
}

/// A destination's UTF-16 units, with the odd-length repair; `None` when
/// empty or not valid UTF-16.
fn units(bytes: &[u8]) -> Option<Vec<u16>> {
    if bytes.is_empty() {
        return None;
    }
    let padded: Vec<u8> = if bytes.len() % 2 == 1 {
        std::iter::once(0).chain(bytes.iter().copied()).collect()
    } else {
        bytes.to_vec()
    };
    let units: Vec<u16> = padded
        .chunks(2)
        .map(|p| u16::from_be_bytes([p[0], p[1]]))
        .collect();
    valid(&units).then_some(units)
}

fn valid(units: &[u16]) -> bool {
    char::decode_utf16(units.iter().copied()).all(|c| c.is_ok())
}

fn insert(map: &mut Map, key: (u32, usize), value: Vec<u16>) {
    if map.len() < MAX_ENTRIES || map.contains_key(&key) {
        map.insert(key, value);
    }
}

fn read(input: &[u8]) -> Map {
    let toks = tokens(input);
    let mut map = Map::new();
    let mut i = 0;
    while i < toks.len() {
        match &toks[i] {
            t if is_word(t, b"beginbfchar") => {
                i += 1;
                while i + 1 < toks.len() && !is_word(&toks[i], b"endbfchar") {
                    if let (Token::Hex(src), Token::Hex(dst)) = (&toks[i], &toks[i + 1]) {
                        if let (Some(key), Some(value)) = (code(src), units(dst)) {
                            insert(&mut map, key, value);
                        }
                        i += 2;
                    } else {
                        i += 1;
                    }
                }
            }
            t if is_word(t, b"beginbfrange") => {
                i += 1;
                i = read_ranges(&toks, i, &mut map);
            }
            _ => i += 1,
        }
    }
    map
}

/// The entries of one `bfrange` block from `toks[i]`; returns where it ended.
fn read_ranges(toks: &[Token], mut i: usize, map: &mut Map) -> usize {
    while i + 2 < toks.len() && !is_word(&toks[i], b"endbfrange") {
        let (Token::Hex(lo), Token::Hex(hi)) = (&toks[i], &toks[i + 1]) else {
            i += 1;
            continue;
        };
        let (Some((lo, width)), Some((hi, hi_width))) = (code(lo), code(hi)) else {
            i += 2;
            continue;
        };
        i += 2;
        let usable = width == hi_width && lo <= hi;
        match &toks[i] {
            Token::Hex(dst) => {
                if let (true, Some(first)) = (usable, units(dst)) {
                    let last = first.len() - 1;
                    for (step, c) in (lo..=hi).enumerate() {
                        if map.len() >= MAX_ENTRIES {
                            break;
                        }
                        let Some(unit) = u16::try_from(step)
                            .ok()
                            .and_then(|s| first[last].checked_add(s))
                        else {
                            break;
                        };
                        let mut value = first.clone();
                        value[last] = unit;
                        if valid(&value) {
                            insert(map, (c, width), value);
                        }
                    }
                }
                i += 1;
            }
            Token::Open => {
                i += 1;
                let mut c = lo;
                while i < toks.len() && toks[i] != Token::Close {
                    if let (true, Token::Hex(dst)) = (usable && c <= hi, &toks[i]) {
                        if let Some(value) = units(dst) {
                            insert(map, (c, width), value);
                        }
                        c = c.saturating_add(1);
                    }
                    i += 1;
                }
                i += 1;
            }
            _ => {}
        }
    }
    i
}

fn push_hex(out: &mut String, bytes: impl IntoIterator<Item = u8>) {
    use std::fmt::Write as _;
    out.push('<');
    for b in bytes {
        let _ = write!(out, "{b:02X}");
    }
    out.push('>');
}

/// One line of the output: a single code, or a run of consecutive codes
/// mapped to consecutive single UTF-16 units (written as a `bfrange`, which
/// keeps a CID font's map as short as its producer wrote it: pdf-extract's
/// CMap parser is slow per line).
enum Line<'a> {
    Char((u32, usize), &'a [u16]),
    Range((u32, usize), u32, u16),
}

fn lines(map: &Map) -> Vec<Line<'_>> {
    let mut out: Vec<Line<'_>> = Vec::new();
    for (&(code, width), value) in map {
        if let ([unit], Some(Line::Range((lo, w), hi, first))) = (value.as_slice(), out.last_mut())
        {
            // Extend a run within one block of 256 codes and 256 units, so
            // that only the last byte of either ever changes.
            let next = hi.checked_add(1) == Some(code)
                && *w == width
                && code >> 8 == *lo >> 8
                && u32::from(*unit) == u32::from(*first) + (code - *lo)
                && unit >> 8 == *first >> 8;
            if next {
                *hi = code;
                continue;
            }
        }
        match value.as_slice() {
            [unit] if valid(&[*unit]) => out.push(Line::Range((code, width), code, *unit)),
            _ => out.push(Line::Char((code, width), value)),
        }
    }
    out
}

fn push_code(out: &mut String, (code, width): (u32, usize)) {
    push_hex(out, code.to_be_bytes()[4 - width..].iter().copied());
}

/// The CMap `input` (any bytes) as a CMap of `bfchar` and `bfrange` entries
/// whose destinations are valid UTF-16 (a range's, one unit); empty of
/// entries when nothing could be read.
pub(super) fn canonical(input: &[u8]) -> Vec<u8> {
    let map = read(input);
    let lines = lines(&map);
    let mut out = String::from(
        "/CIDInit /ProcSet findresource begin\n12 dict begin\nbegincmap\n/CMapType 2 def\n",
    );
    let chars: Vec<_> = lines
        .iter()
        .filter_map(|l| match l {
            Line::Char(code, value) => Some((*code, *value)),
            Line::Range(code, hi, unit) if code.0 == *hi => {
                Some((*code, std::slice::from_ref(unit)))
            }
            Line::Range(..) => None,
        })
        .collect();
    for block in chars.chunks(BLOCK) {
        out.push_str(&format!("{} beginbfchar\n", block.len()));
        for (code, value) in block {
            push_code(&mut out, *code);
            out.push(' ');
            push_hex(&mut out, value.iter().flat_map(|u| u.to_be_bytes()));
            out.push('\n');
        }
        out.push_str("endbfchar\n");
    }
    let ranges: Vec<_> = lines
        .iter()
        .filter_map(|l| match l {
            Line::Range(code, hi, unit) if code.0 != *hi => Some((*code, *hi, *unit)),
            _ => None,
        })
        .collect();
    for block in ranges.chunks(BLOCK) {
        out.push_str(&format!("{} beginbfrange\n", block.len()));
        for ((lo, width), hi, unit) in block {
            push_code(&mut out, (*lo, *width));
            out.push(' ');
            push_code(&mut out, (*hi, *width));
            out.push(' ');
            push_hex(&mut out, unit.to_be_bytes());
            out.push('\n');
        }
        out.push_str("endbfrange\n");
    }
    out.push_str("endcmap\nCMapName currentdict /CMap defineresource pop\nend\nend\n");
    out.into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::HashMap;

    /// What pdf-extract makes of a CMap, with its own checks as assertions.
    fn as_pdf_extract_reads(cmap: &[u8]) -> HashMap<u32, String> {
        adobe_cmap_parser::get_unicode_map(cmap)
            .expect("adobe-cmap-parser reads it")
            .into_iter()
            .map(|(k, v)| {
                assert!(v.len() % 2 == 0);
                let be: Vec<u16> = v
                    .chunks(2)
                    .map(|p| u16::from_be_bytes([p[0], p[1]]))
                    .collect();
                (k, String::from_utf16(&be).expect("valid UTF-16"))
            })
            .collect()
    }

    #[test]
    fn one_byte_range_destinations_read_as_latin_1_code_points() {
        // The shape of the Developer's Reference's CMaps.
        let input = b"1 begincodespacerange <00> <FF> endcodespacerange\n\
            2 beginbfrange\n<41> <43> <0041>\n<C5> <C7> <C5>\nendbfrange\n\
            1 beginbfchar\n<1B> <006600660069>\nendbfchar\n";
        let map = as_pdf_extract_reads(&canonical(input));
        assert_eq!(map[&0x41], "A");
        assert_eq!(map[&0x43], "C");
        assert_eq!(map[&0xC5], "Å");
        assert_eq!(map[&0xC7], "Ç");
        assert_eq!(map[&0x1B], "ffi");
        assert_eq!(map.len(), 7);
    }

    #[test]
    fn ranges_increment_the_last_unit_and_arrays_map_one_by_one() {
        let input = b"beginbfrange\n<0010> <0011> <D835DC00>\n<0020> <0022> [<0061> <00620063> <zz>]\nendbfrange";
        let map = as_pdf_extract_reads(&canonical(input));
        assert_eq!(map[&0x10], "\u{1D400}");
        assert_eq!(map[&0x11], "\u{1D401}");
        assert_eq!(map[&0x20], "a");
        assert_eq!(map[&0x21], "bc");
        // `<zz>` is not hex: no entry for 0x22.
        assert!(!map.contains_key(&0x22));
    }

    #[test]
    fn lone_surrogates_empty_and_overflowing_entries_are_dropped() {
        let input = b"beginbfchar <01> <D800> <02> <> endbfchar\n\
            beginbfrange <10> <12> <FFFF> endbfrange";
        let map = as_pdf_extract_reads(&canonical(input));
        assert_eq!(map.len(), 1, "{map:?}");
        assert_eq!(map[&0x10], "\u{FFFF}");
    }

    #[test]
    fn consecutive_codes_stay_ranges_split_at_256() {
        let input = b"beginbfrange <0000> <012B> <0041> endbfrange";
        let out = canonical(input);
        let text = String::from_utf8(out.clone()).unwrap();
        // 0x0000..=0x00BE, 0x00BF..=0x00FF, 0x0100..=0x012B.
        assert_eq!(
            text.lines().filter(|l| l.starts_with('<')).count(),
            3,
            "{text}"
        );
        let map = as_pdf_extract_reads(&out);
        assert_eq!(map.len(), 300);
        assert!((0..300u32).all(|c| map[&c] == char::from_u32(0x41 + c).unwrap().to_string()));
    }

    #[test]
    fn a_huge_range_is_bounded() {
        let out = canonical(b"beginbfrange <00000000> <FFFFFFFF> <0041> endbfrange");
        let map = as_pdf_extract_reads(&out);
        assert!(map.len() <= MAX_ENTRIES);
    }

    proptest! {
        #[test]
        fn any_bytes_become_a_cmap_pdf_extract_reads(input in proptest::collection::vec(any::<u8>(), 0..400)) {
            as_pdf_extract_reads(&canonical(&input));
        }

        /// Hostile input in the CMap's own vocabulary: operators out of
        /// place, ranges without ends, odd and huge hex strings, arrays left
        /// open, comments and strings where entries should be.
        #[test]
        fn any_cmap_tokens_become_a_cmap_pdf_extract_reads(
            parts in proptest::collection::vec(prop_oneof![
                Just("beginbfchar".to_string()),
                Just("endbfchar".to_string()),
                Just("beginbfrange".to_string()),
                Just("endbfrange".to_string()),
                Just("[".to_string()),
                Just("]".to_string()),
                Just("<<".to_string()),
                Just(">>".to_string()),
                Just("(a (b) \\) c)".to_string()),
                Just("% comment\n".to_string()),
                Just("<zz>".to_string()),
                Just("<".to_string()),
                Just("100".to_string()),
                Just("/Name".to_string()),
                "[0-9A-Fa-f]{0,12}".prop_map(|h| format!("<{h}>")),
            ], 0..60)
        ) {
            as_pdf_extract_reads(&canonical(parts.join(" ").as_bytes()));
        }

        #[test]
        fn cmap_shaped_input_keeps_its_valid_entries(
            entries in proptest::collection::vec((any::<u8>(), 0x20u16..0xD000), 1..50)
        ) {
            let mut input = format!("{} beginbfchar\n", entries.len());
            for (c, u) in &entries {
                input.push_str(&format!("<{c:02X}> <{u:04X}>\n"));
            }
            input.push_str("endbfchar\n");
            let map = as_pdf_extract_reads(&canonical(input.as_bytes()));
            let mut expected = HashMap::new();
            for (c, u) in &entries {
                expected.insert(u32::from(*c), String::from_utf16(&[*u]).unwrap());
            }
            prop_assert_eq!(map, expected);
        }
    }
}

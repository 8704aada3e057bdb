//! Tokens and the look-up helpers over the tables.

use super::units::UNITS;
use super::words::{ID_WORDS, MONTHS, NUMBER_WORDS, ORDINAL_WORDS, SCALE_WORDS};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum K {
    Num,
    Word,
    Sym(char),
    Space,
}

#[derive(Debug, Clone, Copy)]
pub(super) struct Tok {
    pub(super) k: K,
    pub(super) s: usize,
    pub(super) e: usize,
}

#[derive(PartialEq, Eq, Clone, Copy)]
pub(super) enum Class {
    Digit,
    Letter,
    Space,
    Sym,
}

pub(super) fn class_of(c: char) -> Class {
    if c.is_ascii_digit() {
        Class::Digit
    } else if c.is_alphabetic() {
        Class::Letter
    } else if c.is_whitespace() {
        Class::Space
    } else {
        Class::Sym
    }
}

pub(super) fn tokenize(text: &str) -> Vec<Tok> {
    let mut out = Vec::with_capacity(text.len() / 3 + 1);
    let mut it = text.char_indices().peekable();
    while let Some((s, c)) = it.next() {
        let class = class_of(c);
        let mut e = s + c.len_utf8();
        let k = match class {
            Class::Sym => K::Sym(c),
            Class::Digit => K::Num,
            Class::Letter => K::Word,
            Class::Space => K::Space,
        };
        if class != Class::Sym {
            while let Some(&(b, d)) = it.peek() {
                if class_of(d) != class {
                    break;
                }
                e = b + d.len_utf8();
                it.next();
            }
        }
        out.push(Tok { k, s, e });
    }
    out
}

/// Words that can start something in
/// [`Parser::at_word`](super::parser::Parser::at_word); every other word is
/// skipped at the cost of one hash look-up.
pub(super) fn lexicon() -> &'static std::collections::HashSet<String> {
    static LEXICON: std::sync::OnceLock<std::collections::HashSet<String>> =
        std::sync::OnceLock::new();
    LEXICON.get_or_init(|| {
        let mut set = std::collections::HashSet::new();
        let mut add = |w: &str| {
            set.insert(w.to_ascii_lowercase());
        };
        NUMBER_WORDS.iter().for_each(|(w, _)| add(w));
        SCALE_WORDS.iter().for_each(|(w, _)| add(w));
        ORDINAL_WORDS.iter().for_each(|(w, _)| add(w));
        MONTHS.iter().for_each(|(w, _)| add(w));
        ID_WORDS.iter().for_each(|w| add(w));
        for w in [
            "q", "fy", "a", "an", "dozen", "half", "quarter", "twice", "thrice", "once", "noon",
            "midday", "midnight", "free", "daily", "weekly", "monthly", "yearly", "annually",
            "hourly", "nightly", "per", "every", "each",
        ] {
            add(w);
        }
        set
    })
}

pub(super) fn word_may_matter(w: &str) -> bool {
    if w.len() > 24 || !w.is_ascii() {
        return false;
    }
    let mut buf = [0u8; 24];
    for (b, c) in buf.iter_mut().zip(w.bytes()) {
        *b = c.to_ascii_lowercase();
    }
    let lw = std::str::from_utf8(&buf[..w.len()]).unwrap_or("");
    lexicon().contains(lw) || lw.ends_with("fold")
}

/// The look-up key of the first piece of a unit spelling or token: a run of
/// letters, lower-cased, or a single other character.
pub(super) fn first_piece_key(s: &str) -> String {
    let mut chars = s.chars();
    match chars.next() {
        Some(c) if c.is_alphabetic() => s
            .chars()
            .take_while(|c| c.is_alphabetic())
            .flat_map(char::to_lowercase)
            .collect(),
        Some(c) => c.to_string(),
        None => String::new(),
    }
}

/// [`UNITS`] indexed by the key of their first piece.
pub(super) fn unit_index() -> &'static std::collections::HashMap<String, Vec<usize>> {
    static INDEX: std::sync::OnceLock<std::collections::HashMap<String, Vec<usize>>> =
        std::sync::OnceLock::new();
    INDEX.get_or_init(|| {
        let mut map: std::collections::HashMap<String, Vec<usize>> =
            std::collections::HashMap::new();
        for (i, u) in UNITS.iter().enumerate() {
            map.entry(first_piece_key(u.spelling)).or_default().push(i);
        }
        map
    })
}

pub(super) fn lookup<T: Copy>(table: &[(&str, T)], w: &str) -> Option<T> {
    table
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case(w))
        .map(|&(_, v)| v)
}

pub(super) fn in_list(list: &[&str], w: &str) -> bool {
    list.iter().any(|k| k.eq_ignore_ascii_case(w))
}

pub(super) const DASHES: &[char] = &['-', '–', '—', '‑', '‒'];

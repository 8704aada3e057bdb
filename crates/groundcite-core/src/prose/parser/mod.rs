//! The prose parser over one answer and its chunks.
//!
//! [`Parser`] is split by concern across the submodules, layered so that each
//! only calls methods of the layers below it: this module (name and title
//! resolution) <- `scan` (markers and quotations in a block) <- `expand`
//! (a marker into citation attempts, and their quote check) <- `claims`
//! (segments and claims, and [`Parser::run`]).

mod claims;
mod expand;
mod scan;

use std::collections::HashMap;

use crate::model::ChunkSet;
use crate::normalize::{LazyNormalized, MatchProfile, QuoteVerdict, find_quote_in};
use crate::prose::markers::{
    clean_name, numbered_name, parse_positions, strip_strong_prefix, strip_weak_prefix,
};
use crate::prose::split::clean_item;
use crate::prose::titles::{NameRes, max_title_typos, normalize_title, title_distance};
use crate::prose::types::{MAX_PLAIN_MARKER, MAX_TITLE_CHARS};

pub(super) struct Parser<'a> {
    answer: &'a str,
    chunks: &'a ChunkSet,
    lazy: Vec<LazyNormalized<'a>>,
    titles: Vec<Option<String>>,
    max_number: usize,
    name_cache: HashMap<String, NameRes>,
}

impl<'a> Parser<'a> {
    pub(super) fn new(answer: &'a str, chunks: &'a ChunkSet, profile: MatchProfile) -> Parser<'a> {
        Parser {
            answer,
            chunks,
            lazy: chunks
                .chunks()
                .iter()
                .map(|c| LazyNormalized::new(&c.content, profile))
                .collect(),
            titles: chunks
                .chunks()
                .iter()
                .map(|c| {
                    c.source_title
                        .as_deref()
                        .map(normalize_title)
                        .filter(|t| !t.is_empty())
                })
                .collect(),
            max_number: MAX_PLAIN_MARKER.max(chunks.len()),
            name_cache: HashMap::new(),
        }
    }

    fn chunk_id(&self, pos: usize) -> &'a str {
        &self.chunks.chunks()[pos].chunk_id
    }

    fn found(&self, chunk: usize, quote: &str) -> bool {
        matches!(
            find_quote_in(&self.lazy[chunk], quote),
            QuoteVerdict::Found(_)
        )
    }

    // -- names ---------------------------------------------------------

    /// Resolves a name: exact chunk ID, "Document 2", or a title.
    fn resolve_name(&mut self, raw: &str) -> NameRes {
        let name = clean_name(raw);
        if name.is_empty() {
            return NameRes::NotFound;
        }
        if let Some(p) = self.chunks.position(name) {
            return NameRes::Chunk(p);
        }
        if let Some(id) = name.strip_prefix("chunk_id:").map(str::trim)
            && let Some(p) = self.chunks.position(id)
        {
            return NameRes::Chunk(p);
        }
        if let Some(n) = numbered_name(name, self.max_number) {
            return NameRes::Positions(n);
        }
        if name.chars().count() > MAX_TITLE_CHARS {
            return NameRes::NotFound;
        }
        let norm = normalize_title(name);
        if norm.is_empty() {
            return NameRes::NotFound;
        }
        if let Some(r) = self.name_cache.get(&norm) {
            return r.clone();
        }
        let r = self.resolve_title(&norm);
        self.name_cache.insert(norm, r.clone());
        r
    }

    /// The chunks whose normalized title is closest to `norm`, within the
    /// typo allowance; several at the same distance are ambiguous.
    fn resolve_title(&self, norm: &str) -> NameRes {
        let mut best: Option<usize> = None;
        let mut hits: Vec<usize> = Vec::new();
        let qlen = norm.chars().count();
        for (i, t) in self.titles.iter().enumerate() {
            let Some(t) = t else { continue };
            let limit = max_title_typos(qlen.max(t.chars().count()));
            let limit = best.map_or(limit, |b| b.min(limit));
            let Some(d) = title_distance(norm, t, limit) else {
                continue;
            };
            match best {
                Some(b) if d > b => {}
                Some(b) if d == b => hits.push(i),
                _ => {
                    best = Some(d);
                    hits.clear();
                    hits.push(i);
                }
            }
        }
        match hits.len() {
            0 => NameRes::NotFound,
            1 => NameRes::Chunk(hits[0]),
            _ => NameRes::Ambiguous(hits),
        }
    }

    /// Resolves a name, else its part before a separator (" — ", ": ", ", "
    /// …), else (for "Source 1: Refund policy") its part after ": ".
    fn resolve_name_loose(&mut self, raw: &str) -> NameRes {
        let whole = self.resolve_name(raw);
        if whole != NameRes::NotFound {
            return whole;
        }
        let name = clean_name(raw);
        for sep in [" — ", " – ", " - ", ": ", " | ", ", ", " ("] {
            if let Some((head, tail)) = name.split_once(sep) {
                let r = self.resolve_name(head);
                if r != NameRes::NotFound {
                    return r;
                }
                if sep == ": " {
                    let r = self.resolve_name(tail);
                    if r != NameRes::NotFound {
                        return r;
                    }
                }
            }
        }
        NameRes::NotFound
    }

    /// Resolves a named marker's payload into parts: `a; b` are two parts;
    /// `a, b and c` are several only when every part resolves; otherwise the
    /// payload is resolved loosely (a title with a descriptive suffix).
    fn resolve_payload(&mut self, payload: &str) -> Vec<(String, NameRes)> {
        let p = clean_name(payload);
        if let Some(pos) = parse_positions(p, self.max_number) {
            return vec![(p.to_string(), NameRes::Positions(pos))];
        }
        let whole = self.resolve_name(p);
        if whole != NameRes::NotFound {
            return vec![(p.to_string(), whole)];
        }
        if p.contains(';') {
            return p
                .split(';')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(|s| (s.to_string(), self.resolve_name_loose(s)))
                .collect();
        }
        let parts: Vec<&str> = p
            .split([',', '&'])
            .flat_map(|s| s.split(" and "))
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .collect();
        if parts.len() >= 2 {
            let res: Vec<(String, NameRes)> = parts
                .iter()
                .map(|s| (s.to_string(), self.resolve_name(s)))
                .collect();
            if res.iter().all(|(_, r)| *r != NameRes::NotFound) {
                return res;
            }
        }
        vec![(p.to_string(), self.resolve_name_loose(p))]
    }

    /// Resolves a reference-section item or a definition's text to one name:
    /// the cleaned text (links, URLs, emphasis removed) loosely, the same
    /// without a leading "see"/"per"/"Source:", a trailing parenthesis, then
    /// a URL equal to a chunk's `source_url`.
    fn resolve_item_name(&mut self, text: &str) -> NameRes {
        let (cleaned, urls) = clean_item(text);
        let r = self.resolve_name_loose(&cleaned);
        if r != NameRes::NotFound {
            return r;
        }
        // "See the Shipping FAQ.", "Source: Shipping FAQ"
        if let Some(rest) = strip_weak_prefix(&cleaned).or_else(|| strip_strong_prefix(&cleaned)) {
            let r = self.resolve_name_loose(rest);
            if r != NameRes::NotFound {
                return r;
            }
        }
        if let Some(open) = cleaned.rfind('(')
            && let Some(close) = cleaned[open..].find(')')
        {
            let r = self.resolve_name(&cleaned[open + 1..open + close]);
            if r != NameRes::NotFound {
                return r;
            }
        }
        for u in urls {
            let hits: Vec<usize> = self
                .chunks
                .chunks()
                .iter()
                .enumerate()
                .filter(|(_, c)| c.source_url.as_deref() == Some(u.as_str()))
                .map(|(i, _)| i)
                .collect();
            match hits.len() {
                0 => {}
                1 => return NameRes::Chunk(hits[0]),
                _ => return NameRes::Ambiguous(hits),
            }
        }
        NameRes::NotFound
    }

    /// Whether quoted text merely names a chunk's title ("the “Refund policy”").
    fn is_title(&self, text: &str) -> bool {
        if text.chars().count() > MAX_TITLE_CHARS {
            return false;
        }
        let n = normalize_title(text);
        !n.is_empty() && self.titles.iter().flatten().any(|t| *t == n)
    }
}

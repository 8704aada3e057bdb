//! From a marker to citation attempts, and the quote check of each attempt.

use std::collections::HashMap;

use crate::contract::WarningCode;
use crate::prose::markers::{CODE, Marker, MarkerKind, inline_code};
use crate::prose::titles::NameRes;
use crate::prose::types::{MarkerFamily, ProseCitation, ProseClaim, warning};
use crate::text::truncate_chars;

use super::Parser;

/// One citation attempt before the quote check.
pub(super) struct Attempt {
    pub(super) chunk: usize,
    pub(super) family: MarkerFamily,
    pub(super) marker: String,
    /// Where the marker sits (for quote proximity).
    pub(super) at: usize,
    /// Citation index within the claim.
    pub(super) ci: usize,
}

/// A marker as its citation attempts record it.
#[derive(Clone, Copy)]
pub(super) struct Cited<'m> {
    /// The marker as written (for a reference section: the list item).
    pub(super) text: &'m str,
    pub(super) family: MarkerFamily,
    /// Where the marker sits (for quote proximity).
    pub(super) at: usize,
}

/// The answer's own definitions a marker may point through: footnote
/// definitions by label, and the numbered items of its source list (label →
/// item text and chunk position).
pub(super) struct Definitions<'d, 'a> {
    pub(super) footnotes: &'d HashMap<String, &'a str>,
    pub(super) legend: &'d HashMap<usize, (String, usize)>,
}

/// The claim being assembled: where a marker's attempts and warnings go,
/// and the texts quoted around it (they settle an ambiguous name).
pub(super) struct Draft<'d, 'q> {
    pub(super) claim: &'d mut ProseClaim,
    pub(super) attempts: &'d mut Vec<Attempt>,
    pub(super) quotes: &'d [&'q str],
}

impl<'a> Parser<'a> {
    pub(super) fn unresolved(&self, claim: &mut ProseClaim, marker_text: &str, name: &str) {
        let ci = claim.attempted;
        claim.attempted += 1;
        claim.warnings.push(warning(
            WarningCode::UnresolvedReference,
            Some(claim.index),
            Some(ci),
            None,
            format!(
                "Marker {} of claim {}: {:?} matches no chunk ID, position or chunk title.",
                truncate_chars(marker_text, 120),
                claim.index,
                truncate_chars(name, 120)
            ),
        ));
    }

    /// Turns one marker into citation attempts (or warnings).
    pub(super) fn expand_marker(
        &mut self,
        m: &Marker,
        marker_text: &str,
        defs: &Definitions<'_, '_>,
        out: &mut Draft<'_, '_>,
    ) {
        let at = m.range.start;
        let cited = Cited {
            text: marker_text,
            family: m.family,
            at,
        };
        match &m.kind {
            MarkerKind::Positions(ranges) => {
                for &(a, b) in ranges {
                    let mut rest: Vec<(usize, usize)> = Vec::new();
                    for n in a..=b {
                        if let Some((item, p)) = defs.legend.get(&n) {
                            if *p + 1 != n {
                                out.claim.warnings.push(warning(
                                    WarningCode::MarkerRemapped,
                                    Some(out.claim.index),
                                    Some(out.claim.attempted),
                                    Some(self.chunk_id(*p)),
                                    format!(
                                        "Marker {marker_text} of claim {}: the answer's own source list defines [{n}] as {:?}, which is chunk {:?} at position {}, not position {n}; the source list was followed.",
                                        out.claim.index,
                                        truncate_chars(item, 120),
                                        self.chunk_id(*p),
                                        p + 1
                                    ),
                                ));
                            }
                            self.expand(&NameRes::Chunk(*p), &cited, out);
                        } else {
                            match rest.last_mut() {
                                Some(r) if r.1 + 1 == n => r.1 = n,
                                _ => rest.push((n, n)),
                            }
                        }
                    }
                    if !rest.is_empty() {
                        self.expand(&NameRes::Positions(rest), &cited, out);
                    }
                }
            }
            MarkerKind::ChunkId(p) => {
                self.expand(&NameRes::Chunk(*p), &cited, out);
            }
            MarkerKind::Named(parts) => {
                for (name, res) in parts {
                    if *res == NameRes::NotFound {
                        self.unresolved(out.claim, marker_text, name);
                        continue;
                    }
                    self.expand(res, &cited, out);
                }
            }
            MarkerKind::Footnote(label) => {
                let numeric = label
                    .parse::<usize>()
                    .ok()
                    .filter(|&n| n <= self.max_number);
                let def = defs.footnotes.get(label).copied();
                let res = match def {
                    Some(def) => self.resolve_definition(def),
                    None => NameRes::NotFound,
                };
                let res = match (res, numeric) {
                    (NameRes::NotFound, Some(n)) => NameRes::Positions(vec![(n, n)]),
                    (r, _) => r,
                };
                if res == NameRes::NotFound {
                    let why = match def {
                        Some(d) => format!("its definition {:?}", truncate_chars(d.trim(), 120)),
                        None => format!("[^{label}] (no definition, label not a number)"),
                    };
                    self.unresolved(out.claim, marker_text, &why);
                    return;
                }
                self.expand(&res, &cited, out);
            }
        }
    }

    /// A footnote definition: markers inside it, else a name.
    fn resolve_definition(&mut self, def: &str) -> NameRes {
        let mut mask = vec![0u8; def.len()];
        for r in inline_code(def) {
            for f in &mut mask[r] {
                *f |= CODE;
            }
        }
        let inner = self.scan_markers(def, &mask);
        let mut positions: Vec<(usize, usize)> = Vec::new();
        for m in &inner {
            match &m.kind {
                MarkerKind::Positions(p) => positions.extend(p.iter().copied()),
                MarkerKind::ChunkId(p) => return NameRes::Chunk(*p),
                MarkerKind::Named(parts) => {
                    for (_, r) in parts {
                        match r {
                            NameRes::Chunk(_) | NameRes::Ambiguous(_) => return r.clone(),
                            NameRes::Positions(p) => positions.extend(p.iter().copied()),
                            NameRes::NotFound => {}
                        }
                    }
                }
                MarkerKind::Footnote(_) => {}
            }
        }
        if !positions.is_empty() {
            return NameRes::Positions(positions);
        }
        self.resolve_item_name(def)
    }

    /// Expands a resolution into attempts; positions out of range and
    /// ambiguous names become warnings.
    pub(super) fn expand(&mut self, res: &NameRes, cited: &Cited<'_>, out: &mut Draft<'_, '_>) {
        let Cited {
            text: marker_text,
            family,
            at,
        } = *cited;
        let claim = &mut *out.claim;
        let attempts = &mut *out.attempts;
        let quotes = out.quotes;
        let len = self.chunks.len();
        let mut push = |claim: &mut ProseClaim, chunk: usize| {
            attempts.push(Attempt {
                chunk,
                family,
                marker: marker_text.to_string(),
                at,
                ci: claim.attempted,
            });
            claim.attempted += 1;
        };
        match res {
            NameRes::Chunk(p) => push(claim, *p),
            NameRes::Positions(ranges) => {
                for &(a, b) in ranges {
                    for n in a.max(1)..=b.min(len) {
                        push(claim, n - 1);
                    }
                    let mut bad = Vec::new();
                    if a == 0 {
                        bad.push("0".to_string());
                    }
                    if b > len {
                        let from = a.max(len + 1);
                        bad.push(if from == b {
                            format!("{b}")
                        } else {
                            format!("{from}–{b}")
                        });
                    }
                    if !bad.is_empty() {
                        let ci = claim.attempted;
                        claim.attempted += 1;
                        claim.warnings.push(warning(
                            WarningCode::MarkerOutOfRange,
                            Some(claim.index),
                            Some(ci),
                            None,
                            format!(
                                "Marker {} of claim {} refers to position {} but the answer was given {len} chunk(s), numbered from 1; it was ignored (positions never wrap around).",
                                truncate_chars(marker_text, 120),
                                claim.index,
                                bad.join(" and ")
                            ),
                        ));
                    }
                }
            }
            NameRes::Ambiguous(cands) => {
                // A quote found in exactly one candidate settles it.
                let hits: Vec<usize> = cands
                    .iter()
                    .copied()
                    .filter(|&c| quotes.iter().any(|q| self.found(c, q)))
                    .collect();
                if hits.len() == 1 {
                    push(claim, hits[0]);
                    return;
                }
                let ci = claim.attempted;
                claim.attempted += 1;
                let ids: Vec<String> = cands
                    .iter()
                    .map(|&c| format!("{:?}", self.chunk_id(c)))
                    .collect();
                claim.warnings.push(warning(
                    WarningCode::AmbiguousReference,
                    Some(claim.index),
                    Some(ci),
                    None,
                    format!(
                        "Marker {} of claim {} matches {} chunks equally well ({}); none was picked.",
                        truncate_chars(marker_text, 120),
                        claim.index,
                        cands.len(),
                        ids.join(", ")
                    ),
                ));
            }
            NameRes::NotFound => {}
        }
    }

    /// Checks each attempt against the sentence's quotes and records the
    /// survivors (deduplicated) on the claim.
    pub(super) fn check_quotes(
        &self,
        claim: &mut ProseClaim,
        attempts: Vec<Attempt>,
        quotes: &[(usize, String)],
    ) {
        for a in attempts {
            let quote = if quotes.is_empty() {
                None
            } else {
                // Nearest quote before the marker first, then after it.
                let mut order: Vec<&(usize, String)> = quotes.iter().collect();
                order.sort_by_key(|(pos, _)| {
                    if *pos <= a.at {
                        (0, a.at - pos)
                    } else {
                        (1, pos - a.at)
                    }
                });
                match order.iter().find(|(_, q)| self.found(a.chunk, q)) {
                    Some((_, q)) => Some(q.clone()),
                    None => {
                        let nearest = &order[0].1;
                        let elsewhere: Vec<String> = (0..self.chunks.len())
                            .filter(|&c| c != a.chunk && self.found(c, nearest))
                            .map(|c| format!("{:?} (position {})", self.chunk_id(c), c + 1))
                            .collect();
                        let where_ = if elsewhere.is_empty() {
                            "it occurs in no retrieved chunk".to_string()
                        } else {
                            format!("it occurs in {}", elsewhere.join(", "))
                        };
                        claim.warnings.push(warning(
                            WarningCode::MisattributedMarker,
                            Some(claim.index),
                            Some(a.ci),
                            Some(self.chunk_id(a.chunk)),
                            format!(
                                "Marker {} of claim {} points to chunk {:?} (position {}), but the quoted text {:?} is not in it under the matching rule; {where_}. The citation was dropped.",
                                truncate_chars(&a.marker, 120),
                                claim.index,
                                self.chunk_id(a.chunk),
                                a.chunk + 1,
                                truncate_chars(nearest, 200)
                            ),
                        ));
                        continue;
                    }
                }
            };
            if claim
                .citations
                .iter()
                .any(|c| c.chunk_position == a.chunk && c.quote == quote)
            {
                claim.warnings.push(warning(
                    WarningCode::DuplicateCitation,
                    Some(claim.index),
                    Some(a.ci),
                    Some(self.chunk_id(a.chunk)),
                    format!(
                        "Marker {} of claim {} repeats an earlier citation of chunk {:?} and was merged into it.",
                        truncate_chars(&a.marker, 120),
                        claim.index,
                        self.chunk_id(a.chunk)
                    ),
                ));
                continue;
            }
            claim.citations.push(ProseCitation {
                chunk_position: a.chunk,
                chunk_id: self.chunk_id(a.chunk).to_string(),
                family: a.family,
                marker: a.marker,
                quote,
            });
        }
    }
}

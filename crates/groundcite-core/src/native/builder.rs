//! The conversion machinery every converter shares: parsed provider
//! citations ([`NativeCitation`], [`Location`]) resolved through the
//! [`SourceLayout`] to chunks and quotes (character, block and page
//! locations, both end-index readings, mismatch warnings), then verified
//! claim by claim into a contract.

use crate::contract::{Contract, Provenance, Warning, WarningCode};
use crate::model::ChunkSet;
use crate::normalize::{MatchProfile, QuoteVerdict, Span, find_quote};
use crate::text::truncate_chars;
use crate::verify::{CitationRef, ClaimOutcome, ClaimPolicy, Verifier};

use super::layout::{SentSource, SourceKind, SourceLayout};
use super::warnings::warning;

/// Where a provider says the cited text is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Location {
    /// Code points into a plain-text document.
    Chars { start: usize, end: usize },
    /// Content blocks (0-based).
    Blocks { start: usize, end: usize },
    /// Pages (1-based).
    Pages { start: usize, end: usize },
}

/// A provider citation, parsed.
#[derive(Debug, Clone)]
pub(crate) struct NativeCitation {
    pub kind: SourceKind,
    pub index: usize,
    pub location: Location,
    pub cited_text: Option<String>,
    /// How the provider called it, for messages ("char_location", …).
    pub label: &'static str,
}

/// One claim on its way into the verifier.
pub(crate) struct Pending {
    pub text: String,
    /// Citations, or the warning of one dropped while parsing (unsupported).
    pub citations: Vec<Result<NativeCitation, Warning>>,
}

/// Builds a contract from pending claims.
pub(crate) struct Builder<'a> {
    v: Verifier<'a>,
    chunks: &'a ChunkSet,
    layout: &'a SourceLayout,
    profile: MatchProfile,
    claims: usize,
}

/// A citation's block or page range, over `units` = (unit number, chunk).
struct UnitRange<'u> {
    units: &'u [(usize, usize)],
    start: usize,
    end: usize,
    /// "block" or "page", for messages.
    unit_name: &'static str,
}

impl<'a> Builder<'a> {
    pub fn new(
        chunks: &'a ChunkSet,
        layout: &'a SourceLayout,
        profile: MatchProfile,
        policy: ClaimPolicy,
    ) -> Builder<'a> {
        Builder {
            v: Verifier::new(chunks, profile).with_claim_policy(policy),
            chunks,
            layout,
            profile,
            claims: 0,
        }
    }

    pub fn warn(&mut self, w: Warning) {
        self.v.warn(w);
    }

    /// Verifies one claim from provider citations.
    pub fn claim(&mut self, pending: Pending) {
        let index = self.claims;
        self.claims += 1;
        let mut refs: Vec<(String, Option<String>)> = Vec::new();
        let attempted = pending.citations.len();
        for (ci, c) in pending.citations.into_iter().enumerate() {
            match c {
                Err(mut w) => {
                    w.claim_index = Some(index);
                    w.citation_index = Some(ci);
                    self.v.warn(w);
                }
                Ok(c) => {
                    for (chunk, quote) in self.resolve(&c, index, ci) {
                        refs.push((self.chunks.chunks()[chunk].chunk_id.clone(), quote));
                    }
                }
            }
        }
        self.submit(index, &pending.text, &refs, attempted);
    }

    /// Feeds citations already resolved to chunk IDs.
    pub fn submit(
        &mut self,
        index: usize,
        text: &str,
        refs: &[(String, Option<String>)],
        attempted: usize,
    ) {
        if refs.is_empty() {
            self.v.warn(warning(
                WarningCode::ClaimUnsupported,
                Some(index),
                None,
                None,
                format!("Claim {index} was dropped: none of its {attempted} citation(s) could be matched to a supplied chunk."),
            ));
            return;
        }
        let citations: Vec<CitationRef<'_>> = refs
            .iter()
            .map(|(id, q)| CitationRef {
                chunk_id: id,
                quote: q.as_deref(),
            })
            .collect();
        let _: ClaimOutcome = self.v.claim_parts(index, text, &citations);
    }

    /// Allocates a claim index for a caller that resolves its own references.
    pub fn next_index(&mut self) -> usize {
        self.claims += 1;
        self.claims - 1
    }

    pub fn finish(self, provenance: Provenance) -> Contract {
        self.v.finish(true, provenance)
    }

    /// Finishes a response that had `text_chars` characters of answer text:
    /// when none of it carried a citation, says so (`uncited_answer`,
    /// ending with `hint`) rather than returning a silent empty list.
    pub fn finish_text(
        mut self,
        text_chars: usize,
        hint: &str,
        provenance: Provenance,
    ) -> Contract {
        if self.claims == 0 && text_chars > 0 {
            self.warn(warning(
                WarningCode::UncitedAnswer,
                None,
                None,
                None,
                format!("The response has {text_chars} characters of text and {hint}"),
            ));
        }
        self.finish(provenance)
    }

    /// Resolves a citation to (chunk, quote) pairs, warning on the way.
    fn resolve(
        &mut self,
        c: &NativeCitation,
        claim: usize,
        ci: usize,
    ) -> Vec<(usize, Option<String>)> {
        let kind_name = match c.kind {
            SourceKind::Document => "document",
            SourceKind::SearchResult => "search result",
        };
        let Some(source) = self.layout.sources(c.kind).get(c.index) else {
            self.v.warn(warning(
                WarningCode::SourceIndexOutOfRange,
                Some(claim),
                Some(ci),
                None,
                format!(
                    "Citation {ci} of claim {claim} ({}) names {kind_name} {} but only {} {kind_name}(s) were sent; it was dropped.",
                    c.label,
                    c.index,
                    self.layout.sources(c.kind).len()
                ),
            ));
            return Vec::new();
        };
        match c.location {
            Location::Chars { start, end } => self.resolve_chars(c, source, start, end, claim, ci),
            Location::Blocks { start, end } => {
                let units: Vec<(usize, usize)> =
                    source.chunks.iter().copied().enumerate().collect();
                self.resolve_units(
                    c,
                    UnitRange {
                        units: &units,
                        start,
                        end,
                        unit_name: "block",
                    },
                    claim,
                    ci,
                )
            }
            Location::Pages { start, end } => {
                let paged: Vec<(usize, usize)> = source
                    .chunks
                    .iter()
                    .filter_map(|&p| self.chunks.chunks()[p].page_number.map(|n| (n as usize, p)))
                    .collect();
                if paged.is_empty() && source.chunks.len() == 1 {
                    // One chunk for the whole PDF without a page number: pages cannot be checked.
                    let chunk = source.chunks[0];
                    return vec![(chunk, c.cited_text.clone())];
                }
                self.resolve_units(
                    c,
                    UnitRange {
                        units: &paged,
                        start,
                        end,
                        unit_name: "page",
                    },
                    claim,
                    ci,
                )
            }
        }
    }

    fn resolve_chars(
        &mut self,
        c: &NativeCitation,
        source: &SentSource,
        start: usize,
        end: usize,
        claim: usize,
        ci: usize,
    ) -> Vec<(usize, Option<String>)> {
        let chunk = source.chunks[0];
        let content = &self.chunks.chunks()[chunk].content;
        let exclusive = (start <= end)
            .then(|| Span::new(start, end).slice(content))
            .flatten();
        let inclusive = (start <= end)
            .then(|| Span::new(start, end.saturating_add(1)).slice(content))
            .flatten();
        let Some(cited) = c.cited_text.as_deref() else {
            // No cited text (Converse without sourceContent): the location is the quote.
            return match exclusive.filter(|s| s.chars().any(char::is_alphanumeric)) {
                Some(s) => vec![(chunk, Some(s.to_string()))],
                None => {
                    self.mismatch(
                        c,
                        claim,
                        ci,
                        chunk,
                        format!("characters {start}..{end} are not a non-empty part of the chunk"),
                    );
                    Vec::new()
                }
            };
        };
        let agrees = |s: Option<&str>| s.is_some_and(|s| covers(s, cited, self.profile));
        if !(agrees(exclusive) || agrees(inclusive)) {
            let shown = exclusive.map_or_else(
                || "outside the chunk".to_string(),
                |s| format!("{:?}", truncate_chars(s, 120)),
            );
            self.mismatch(
                c,
                claim,
                ci,
                chunk,
                format!("characters {start}..{end} (end exclusive, or inclusive) hold {shown}, not the cited text {:?}", truncate_chars(cited, 120)),
            );
        }
        vec![(chunk, Some(cited.to_string()))]
    }

    /// Resolves a block or page range.
    fn resolve_units(
        &mut self,
        c: &NativeCitation,
        range: UnitRange<'_>,
        claim: usize,
        ci: usize,
    ) -> Vec<(usize, Option<String>)> {
        let UnitRange {
            units,
            start,
            end,
            unit_name,
        } = range;
        let pick = |lo: usize, hi_excl: usize| -> Vec<usize> {
            units
                .iter()
                .filter(|(n, _)| *n >= lo && *n < hi_excl)
                .map(|&(_, p)| p)
                .collect()
        };
        let mut readings: Vec<Vec<usize>> = Vec::new();
        if end > start {
            readings.push(pick(start, end));
        }
        if end >= start {
            readings.push(pick(start, end.saturating_add(1)));
        }
        readings.retain(|r| !r.is_empty());
        if readings.is_empty() {
            self.v.warn(warning(
                WarningCode::SourceIndexOutOfRange,
                Some(claim),
                Some(ci),
                None,
                format!(
                    "Citation {ci} of claim {claim} ({}) names {unit_name}s {start}..{end}, which hold no supplied chunk; it was dropped.",
                    c.label
                ),
            ));
            return Vec::new();
        }
        let Some(cited) = c.cited_text.as_deref() else {
            return readings[0].iter().map(|&p| (p, None)).collect();
        };
        for r in &readings {
            if let Some(parts) = self.split_over(r, cited) {
                return parts;
            }
        }
        // No reading holds the cited text: warn, then check it chunk by chunk.
        let mut all: Vec<usize> = readings.concat();
        all.sort_unstable();
        all.dedup();
        let first = all[0];
        self.mismatch(
            c,
            claim,
            ci,
            first,
            format!("{unit_name}s {start}..{end} (end exclusive, or inclusive) do not hold the cited text {:?}", truncate_chars(cited, 120)),
        );
        let holding: Vec<usize> = all
            .iter()
            .copied()
            .filter(|&p| {
                matches!(
                    find_quote(&self.chunks.chunks()[p].content, cited, self.profile),
                    QuoteVerdict::Found(_)
                )
            })
            .collect();
        match holding.first() {
            Some(&p) => vec![(p, Some(cited.to_string()))],
            None => vec![(first, Some(cited.to_string()))],
        }
    }

    /// Finds `cited` in the units' texts joined (with a newline, or with
    /// nothing); returns each touched unit with the part of the cited text
    /// inside it.
    fn split_over(&self, units: &[usize], cited: &str) -> Option<Vec<(usize, Option<String>)>> {
        for sep in ["\n", ""] {
            let mut joined = String::new();
            let mut bounds = Vec::new(); // (chunk, start cp, end cp)
            let mut cp = 0;
            for (k, &p) in units.iter().enumerate() {
                if k > 0 {
                    joined.push_str(sep);
                    cp += sep.chars().count();
                }
                let text = &self.chunks.chunks()[p].content;
                let n = text.chars().count();
                joined.push_str(text);
                bounds.push((p, cp, cp + n));
                cp += n;
            }
            let QuoteVerdict::Found(m) = find_quote(&joined, cited, self.profile) else {
                continue;
            };
            let mut out = Vec::new();
            for (p, s, e) in bounds {
                let lo = m.span.start().max(s);
                let hi = m.span.end().min(e);
                if lo >= hi {
                    continue;
                }
                let Some(part) = Span::new(lo, hi).slice(&joined) else {
                    continue;
                };
                if part.chars().any(char::is_alphanumeric) {
                    out.push((p, Some(part.to_string())));
                }
            }
            if !out.is_empty() {
                return Some(out);
            }
        }
        None
    }

    fn mismatch(
        &mut self,
        c: &NativeCitation,
        claim: usize,
        ci: usize,
        chunk: usize,
        what: String,
    ) {
        let id = self.chunks.chunks()[chunk].chunk_id.clone();
        self.v.warn(warning(
            WarningCode::CitationLocationMismatch,
            Some(claim),
            Some(ci),
            Some(&id),
            format!(
                "Citation {ci} of claim {claim} ({}): {what}; the cited text was checked against chunk {id:?} with the matching rule instead.",
                c.label
            ),
        ));
    }
}

/// Whether `slice` is the cited text under the matching rule: the cited text
/// is found in it and only white space is left around the match.
pub(crate) fn covers(slice: &str, cited: &str, profile: MatchProfile) -> bool {
    match find_quote(slice, cited, profile) {
        QuoteVerdict::Found(m) => {
            slice[..m.bytes.start].trim().is_empty() && slice[m.bytes.end..].trim().is_empty()
        }
        _ => false,
    }
}

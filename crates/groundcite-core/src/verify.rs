//! The verifier: a pure function of (raw answer, chunks, match profile).
//!
//! [`verify`] checks a whole [`GroundedAnswer`]; [`Verifier`] does the same
//! one claim at a time, for streams, and gives the same result.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use crate::contract::{
    CONTRACT_VERSION, Contract, ContractCitation, ContractClaim, Provenance, QuantityFinding,
    RefusalCode, Source, TableHeader, Warning, WarningCode, safe_source_url,
};
use crate::model::{ChunkSet, Claim, GroundedAnswer};
use crate::normalize::{
    LazyNormalized, MatchKind, MatchProfile, QuoteVerdict, Span, find_quote_in, normalize,
};
use crate::quantity;
use crate::text::truncate_chars;

/// Verifies `answer` against the retrieved `chunks` and builds contract v1,
/// under the default (strict) claim policy.
pub fn verify(
    answer: &GroundedAnswer,
    chunks: &ChunkSet,
    profile: MatchProfile,
    provenance: Provenance,
) -> Contract {
    verify_with(answer, chunks, profile, ClaimPolicy::Strict, provenance)
}

/// [`verify`] with an explicit claim policy.
pub fn verify_with(
    answer: &GroundedAnswer,
    chunks: &ChunkSet,
    profile: MatchProfile,
    policy: ClaimPolicy,
    provenance: Provenance,
) -> Contract {
    let mut v = Verifier::new(chunks, profile).with_claim_policy(policy);
    if answer.answerable {
        let mut citations = Vec::new();
        for (i, claim) in answer.claims.iter().enumerate() {
            // The outcome is in the contract already; skip building a copy.
            citations.clear();
            citations.extend(claim_refs(claim));
            v.check_claim(i, &claim.text, &citations);
        }
    } else {
        v.discard_claims(answer.claims.len());
    }
    v.finish(answer.answerable, provenance)
}

/// The header row of the table whose row a quote starting at byte `at` of
/// `content` belongs to, with its code-point span.
fn table_header_of(content: &str, at: usize) -> Option<TableHeader> {
    let r = crate::sentences::table_header(content, at)?;
    let start = content[..r.start].chars().count();
    let source_text = content[r].to_string();
    Some(TableHeader {
        span: Span::new(start, start + source_text.chars().count()),
        source_text,
    })
}

/// The citations of a structured claim, as the verifier takes them.
fn claim_refs(claim: &Claim) -> impl Iterator<Item = CitationRef<'_>> {
    claim.citations.iter().map(|c| CitationRef {
        chunk_id: &c.chunk_id,
        quote: Some(&c.quote),
    })
}

/// What happens to a claim whose verified quotes do not carry a quantity it
/// asserts (see [`crate::quantity`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ClaimPolicy {
    /// Drop the claim, like a claim whose citations all failed. The default.
    #[default]
    Strict,
    /// Keep the claim with an `unsupported_quantity` warning.
    Lenient,
}

/// A name that is not a [`ClaimPolicy`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown claim policy {given:?} (expected \"strict\" or \"lenient\")")]
pub struct ParseClaimPolicyError {
    /// The name given.
    pub given: String,
}

impl std::str::FromStr for ClaimPolicy {
    type Err = ParseClaimPolicyError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "strict" => Ok(ClaimPolicy::Strict),
            "lenient" => Ok(ClaimPolicy::Lenient),
            other => Err(ParseClaimPolicyError {
                given: other.to_string(),
            }),
        }
    }
}

/// A citation on its way into the verifier: a chunk ID and, when there is
/// one, the quote to check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CitationRef<'q> {
    /// The cited chunk's ID, as the source of the answer wrote it.
    pub chunk_id: &'q str,
    /// The quote to check, if any.
    pub quote: Option<&'q str>,
}

/// What happened to one claim.
#[derive(Debug, Clone, PartialEq)]
pub enum ClaimOutcome {
    /// The claim survived with at least one verified citation.
    Kept(ContractClaim),
    /// The claim was dropped; the warnings say why.
    Dropped(Vec<Warning>),
}

/// Counters behind the monitored signals.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct VerifyStats {
    /// Claims examined (a repeat dropped as `duplicate_claim` is not one).
    pub claims: usize,
    /// Claims dropped because no citation verified (or none was given).
    pub claims_failed: usize,
    /// Citations examined.
    pub citations: usize,
    /// Citations that verified.
    pub citations_verified: usize,
}

/// Incremental verifier over one request's chunks.
#[derive(Debug)]
pub struct Verifier<'a> {
    chunks: &'a ChunkSet,
    profile: MatchProfile,
    policy: ClaimPolicy,
    normalized: Vec<LazyNormalized<'a>>,
    /// Chunk position → footnote number (0: not cited yet).
    refs: Vec<usize>,
    /// Chunk positions in footnote order.
    ref_order: Vec<usize>,
    claims: Vec<ContractClaim>,
    /// Normalized text of each kept claim → its index, to drop repeats.
    kept_texts: HashMap<String, usize>,
    warnings: Vec<Warning>,
    stats: VerifyStats,
}

impl<'a> Verifier<'a> {
    /// A verifier for one request.
    pub fn new(chunks: &'a ChunkSet, profile: MatchProfile) -> Verifier<'a> {
        Verifier {
            chunks,
            profile,
            policy: ClaimPolicy::Strict,
            normalized: chunks
                .chunks()
                .iter()
                .map(|c| LazyNormalized::new(&c.content, profile))
                .collect(),
            refs: vec![0; chunks.len()],
            ref_order: Vec::new(),
            claims: Vec::new(),
            kept_texts: HashMap::new(),
            warnings: Vec::new(),
            stats: VerifyStats::default(),
        }
    }

    /// Sets the claim policy for quantity checks (default: strict).
    pub fn with_claim_policy(mut self, policy: ClaimPolicy) -> Verifier<'a> {
        self.policy = policy;
        self
    }

    /// Counters so far.
    pub fn stats(&self) -> VerifyStats {
        self.stats
    }

    /// The chunks being verified against.
    pub fn chunks(&self) -> &'a ChunkSet {
        self.chunks
    }

    /// Adds a warning raised before verification (by a parser or converter),
    /// so that it reaches the contract in order.
    pub fn warn(&mut self, warning: Warning) {
        self.warnings.push(warning);
    }

    /// Verifies the claim at position `index` of the model's answer. Claims
    /// must be fed in order; footnote numbers are assigned as they are kept.
    pub fn claim(&mut self, index: usize, claim: &Claim) -> ClaimOutcome {
        let citations: Vec<CitationRef<'_>> = claim_refs(claim).collect();
        self.claim_parts(index, &claim.text, &citations)
    }

    /// Verifies a claim given as parts, from any source (structured output,
    /// prose markers, provider-native citations). A citation without a quote
    /// is kept as [`MatchKind::Reference`] when its chunk was retrieved: there
    /// is nothing to check but the ID.
    pub fn claim_parts(
        &mut self,
        index: usize,
        text: &str,
        citations: &[CitationRef<'_>],
    ) -> ClaimOutcome {
        let before = self.warnings.len();
        if self.check_claim(index, text, citations) {
            // A kept claim is the last one recorded.
            let kept = self.claims.last().cloned();
            kept.map_or_else(|| ClaimOutcome::Dropped(Vec::new()), ClaimOutcome::Kept)
        } else {
            ClaimOutcome::Dropped(self.warnings[before..].to_vec())
        }
    }

    /// [`Verifier::claim_parts`] without the copy of its outcome: records the
    /// claim (kept) or its warnings (dropped) and says whether it was kept.
    fn check_claim(&mut self, index: usize, text: &str, citations: &[CitationRef<'_>]) -> bool {
        let mut warnings = Vec::new();
        let warn = |code, citation_index, chunk_id: Option<&str>, message: String| Warning {
            code,
            claim_index: Some(index),
            citation_index,
            chunk_id: chunk_id.map(str::to_string),
            message,
        };
        // A word-for-word repeat of a kept claim (small models loop) would
        // show the reader the same sentence twice. Dropped before its
        // citations are checked, and counted neither as a claim nor as a
        // failure: the signals are over distinct claims. Only kept claims
        // count, so a repeat of a dropped claim is verified on its own.
        let normalized_text = normalize(text.trim(), self.profile);
        if !normalized_text.is_empty()
            && let Some(&first) = self.kept_texts.get(&normalized_text)
        {
            warnings.push(warn(
                WarningCode::DuplicateClaim,
                None,
                None,
                format!("Claim {index} repeats claim {first} and was dropped."),
            ));
            return self.dropped(warnings);
        }
        self.stats.claims += 1;
        if text.trim().is_empty() {
            self.stats.claims_failed += 1;
            warnings.push(warn(
                WarningCode::EmptyClaimText,
                None,
                None,
                format!("Claim {index} has no text and was dropped."),
            ));
            return self.dropped(warnings);
        }
        if citations.is_empty() {
            self.stats.claims_failed += 1;
            warnings.push(warn(
                WarningCode::ClaimWithoutCitations,
                None,
                None,
                format!("Claim {index} came without citations and was dropped."),
            ));
            return self.dropped(warnings);
        }
        // (chunk position, match) of each verified citation, for dedup and refs.
        let mut kept: Vec<(usize, ContractCitation)> = Vec::new();
        for (ci, cit) in citations.iter().enumerate() {
            self.stats.citations += 1;
            let id = cit.chunk_id;
            let Some(pos) = self.chunks.position(id) else {
                let (code, message) = match self.merged_ids(id) {
                    Some(parts) => (
                        WarningCode::MergedChunkIds,
                        format!(
                            "Citation {ci} of claim {index} joins several chunk IDs in one string ({}); each citation must name exactly one chunk.",
                            parts.join(", ")
                        ),
                    ),
                    None => (
                        WarningCode::UnknownChunkId,
                        format!(
                            "Citation {ci} of claim {index} names chunk {id:?}, which was not retrieved."
                        ),
                    ),
                };
                warnings.push(warn(code, Some(ci), Some(id), message));
                continue;
            };
            let Some(quote) = cit.quote else {
                if kept
                    .iter()
                    .any(|(p, c)| *p == pos && c.kind == MatchKind::Reference)
                {
                    warnings.push(warn(
                        WarningCode::DuplicateCitation,
                        Some(ci),
                        Some(id),
                        format!("Citation {ci} of claim {index} repeats an earlier reference to the same chunk and was merged into it."),
                    ));
                } else {
                    kept.push((
                        pos,
                        ContractCitation {
                            reference: 0,
                            chunk_id: id.to_string(),
                            quote: None,
                            source_text: None,
                            kind: MatchKind::Reference,
                            span: None,
                            location: None,
                            table_header: None,
                        },
                    ));
                }
                continue;
            };
            match find_quote_in(&self.normalized[pos], quote) {
                QuoteVerdict::Empty => warnings.push(warn(
                    WarningCode::EmptyQuote,
                    Some(ci),
                    Some(id),
                    format!(
                        "Citation {ci} of claim {index} has an empty quote (no letter or digit)."
                    ),
                )),
                QuoteVerdict::NotFound(near) => {
                    let hint = match near {
                        Some(nm) => format!(
                            " Closest near miss: code points {}..{} (similarity {:.3}): {:?}.",
                            nm.span.start(),
                            nm.span.end(),
                            nm.similarity,
                            truncate_chars(&nm.source_text, 200)
                        ),
                        None => " No close near miss.".to_string(),
                    };
                    warnings.push(warn(
                        WarningCode::QuoteNotFound,
                        Some(ci),
                        Some(id),
                        format!(
                            "Citation {ci} of claim {index}: the quote {:?} is not in chunk {id:?} under the {} matching rule.{hint}",
                            truncate_chars(quote, 200),
                            self.profile.as_str()
                        ),
                    ));
                }
                QuoteVerdict::Found(m) => {
                    if kept
                        .iter()
                        .any(|(p, c)| *p == pos && c.span == Some(m.span))
                    {
                        warnings.push(warn(
                            WarningCode::DuplicateCitation,
                            Some(ci),
                            Some(id),
                            format!(
                                "Citation {ci} of claim {index} repeats an earlier citation of the same passage and was merged into it."
                            ),
                        ));
                        continue;
                    }
                    let content = self.normalized[pos].original();
                    kept.push((
                        pos,
                        ContractCitation {
                            reference: 0,
                            chunk_id: id.to_string(),
                            quote: Some(quote.to_string()),
                            source_text: Some(content[m.bytes.clone()].to_string()),
                            kind: m.kind,
                            span: Some(m.span),
                            location: None,
                            table_header: table_header_of(content, m.bytes.start),
                        },
                    ));
                }
            }
        }
        // Duplicates are not failures: they merged into a kept citation.
        self.stats.citations_verified += kept.len();
        if kept.is_empty() {
            self.stats.claims_failed += 1;
            warnings.push(warn(
                WarningCode::ClaimUnsupported,
                None,
                None,
                format!(
                    "Claim {index} was dropped: none of its {} citation(s) verified.",
                    citations.len()
                ),
            ));
            return self.dropped(warnings);
        }
        // Quantities: every number the claim asserts must be carried by a
        // verified quote (for a bare reference, by the cited chunk's text).
        let quotes: Vec<&str> = kept
            .iter()
            .map(|(pos, c)| {
                c.source_text
                    .as_deref()
                    .unwrap_or(self.normalized[*pos].original())
            })
            .collect();
        let check = quantity::check_claim(text, &quotes);
        for q in &check.unsupported {
            let action = match self.policy {
                ClaimPolicy::Strict => "the claim was dropped",
                ClaimPolicy::Lenient => "the claim was kept under the lenient claim policy",
            };
            warnings.push(warn(
                WarningCode::UnsupportedQuantity,
                None,
                None,
                format!(
                    "Claim {index} asserts {q}, which none of its verified quotes carries; {action}."
                ),
            ));
        }
        if !check.unsupported.is_empty() && self.policy == ClaimPolicy::Strict {
            self.stats.claims_failed += 1;
            return self.dropped(warnings);
        }
        let quantities = check
            .asserted
            .iter()
            .map(|q| QuantityFinding {
                text: q.text.clone(),
                canonical: q.canonical(),
                supported: !check.unsupported.contains(q),
            })
            .collect();
        let citations = kept
            .into_iter()
            .map(|(pos, mut c)| {
                c.reference = self.reference(pos);
                c
            })
            .collect();
        let verified = ContractClaim {
            index,
            text: text.trim().to_string(),
            citations,
            quantities,
        };
        self.warnings.extend(warnings);
        self.kept_texts.insert(normalized_text, index);
        self.claims.push(verified);
        true
    }

    /// Records that the model sent `n` claims with `answerable: false`.
    pub fn discard_claims(&mut self, n: usize) {
        if n > 0 {
            self.warnings.push(Warning {
                code: WarningCode::ClaimsOnUnanswerable,
                claim_index: None,
                citation_index: None,
                chunk_id: None,
                message: format!(
                    "The model said the sources do not answer the question but sent {n} claim(s); they were discarded unverified."
                ),
            });
        }
    }

    /// Builds the contract. `answerable` is what the model said.
    pub fn finish(mut self, answerable: bool, provenance: Provenance) -> Contract {
        let refusal = if !answerable {
            Some(RefusalCode::R1)
        } else if self.claims.is_empty() {
            Some(RefusalCode::R2)
        } else {
            None
        };
        if let Some(code) = refusal {
            return Contract::refused(code, provenance, self.profile, self.warnings);
        }
        let sources = self.sources();
        let answer = self
            .claims
            .iter()
            .map(|c| {
                let mut s = c.text.clone();
                s.push(' ');
                let mut seen = Vec::new();
                for cit in &c.citations {
                    if !seen.contains(&cit.reference) {
                        seen.push(cit.reference);
                        s.push_str(&format!("[{}]", cit.reference));
                    }
                }
                s
            })
            .collect::<Vec<_>>()
            .join(" ");
        Contract {
            contract_version: CONTRACT_VERSION.to_string(),
            trace_id: provenance.trace_id,
            question: provenance.question,
            answerable: true,
            answer,
            refusal: None,
            claims: self.claims,
            sources,
            warnings: self.warnings,
            match_profile: self.profile,
            model: provenance.model,
            created_at: provenance.created_at,
        }
    }

    /// Records a dropped claim's warnings; always `false` (not kept).
    fn dropped(&mut self, warnings: Vec<Warning>) -> bool {
        self.warnings.extend(warnings);
        false
    }

    fn reference(&mut self, pos: usize) -> usize {
        if self.refs[pos] == 0 {
            self.ref_order.push(pos);
            self.refs[pos] = self.ref_order.len();
        }
        self.refs[pos]
    }

    /// The IDs joined in `id` when it looks like several retrieved IDs in one string.
    fn merged_ids(&self, id: &str) -> Option<Vec<String>> {
        let parts: Vec<&str> = id
            .split([',', ';', '|', '\n'])
            .flat_map(|p| p.split(" and "))
            .flat_map(|p| p.split_whitespace())
            .map(|p| p.trim_matches(|c: char| c == '[' || c == ']' || c == '"' || c == '\''))
            .filter(|p| !p.is_empty())
            .collect();
        let known = parts
            .iter()
            .filter(|p| self.chunks.position(p).is_some())
            .count();
        (parts.len() >= 2 && known >= 1).then(|| parts.iter().map(|p| format!("{p:?}")).collect())
    }

    fn sources(&mut self) -> Vec<Source> {
        let mut out = Vec::with_capacity(self.ref_order.len());
        for (i, &pos) in self.ref_order.iter().enumerate() {
            let chunk = &self.chunks.chunks()[pos];
            let source_url = match chunk.source_url.as_deref() {
                None => None,
                Some(url) => match safe_source_url(url) {
                    Ok(()) => Some(url.to_string()),
                    Err(why) => {
                        self.warnings.push(Warning {
                            code: WarningCode::UnsafeSourceUrl,
                            claim_index: None,
                            citation_index: None,
                            chunk_id: Some(chunk.chunk_id.clone()),
                            message: format!(
                                "The source URL of chunk {:?} {why}; it is shown without a link.",
                                chunk.chunk_id
                            ),
                        });
                        None
                    }
                },
            };
            out.push(Source {
                reference: i + 1,
                chunk_id: chunk.chunk_id.clone(),
                source_title: chunk.source_title.clone(),
                source_url,
                page_number: chunk.page_number,
                score: chunk.score,
            });
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Chunk;

    #[test]
    fn a_repeated_claim_is_neither_a_claim_nor_a_failure_in_the_stats() {
        let chunks: Vec<Chunk> = serde_json::from_str(
            r#"[{"chunk_id": "c1", "content": "Refunds are available within 30 days."}]"#,
        )
        .expect("chunks");
        let chunks = ChunkSet::new(chunks).expect("chunks");
        let claim = |text: &str, quote: &str| -> Claim {
            serde_json::from_value(serde_json::json!(
                {"text": text, "citations": [{"chunk_id": "c1", "quote": quote}]}
            ))
            .expect("claim")
        };
        let mut v = Verifier::new(&chunks, MatchProfile::Default);
        assert!(matches!(
            v.claim(0, &claim("Refunds: 30 days.", "within 30 days")),
            ClaimOutcome::Kept(_)
        ));
        // The repeat, with a fabricated quote: dropped as a repeat, unchecked.
        match v.claim(1, &claim("refunds:  30 DAYS.", "within 90 days")) {
            ClaimOutcome::Dropped(w) => {
                assert_eq!(w.len(), 1, "{w:?}");
                assert_eq!(w[0].code, WarningCode::DuplicateClaim);
                assert_eq!(w[0].message, "Claim 1 repeats claim 0 and was dropped.");
            }
            ClaimOutcome::Kept(c) => panic!("kept a repeat: {c:?}"),
        }
        // A different claim that fails still counts.
        assert!(matches!(
            v.claim(2, &claim("Refunds take a week.", "within a week")),
            ClaimOutcome::Dropped(_)
        ));
        assert_eq!(
            v.stats(),
            VerifyStats {
                claims: 2,
                claims_failed: 1,
                citations: 2,
                citations_verified: 1,
            }
        );
    }
}

//! Segments (sentences, items, headings, rows) and the claims built from them.

use std::collections::HashMap;
use std::ops::Range;

use crate::prose::lines::{Line, LineKind, Section, body_text, classify_lines, find_section};
use crate::prose::markers::{
    CODE, MARK, Marker, QuoteSpan, inline_code, leading_bracket_number, shift_marker,
};
use crate::prose::split::{
    clean_claim_text, last_sentence, sentences, strip_markers, strip_quoted,
};
use crate::prose::titles::NameRes;
use crate::prose::types::{MarkerFamily, ParsedProse, ProseClaim};

use super::Parser;
use super::expand::{Cited, Definitions, Draft};

/// A segment (sentence, item, heading, row) with its markers and quotes;
/// ranges are absolute byte offsets into the answer.
struct Segment {
    range: Range<usize>,
    markers: Vec<Marker>,
    quotes: Vec<QuoteSpan>,
}

impl<'a> Parser<'a> {
    // -- the whole run -------------------------------------------------

    pub(in crate::prose) fn run(&mut self) -> ParsedProse {
        let answer = self.answer;
        let lines = classify_lines(answer);
        let mut excluded = vec![false; lines.len()];
        let section = find_section(answer, &lines, &mut excluded);

        // Footnote definitions and legend lines, anywhere outside code.
        let mut footnotes: HashMap<String, &str> = HashMap::new();
        let mut legend_lines: Vec<(usize, &str)> = Vec::new();
        for (i, l) in lines.iter().enumerate() {
            match l.kind {
                LineKind::FootnoteDef => {
                    if let Some(label) = &l.label {
                        footnotes
                            .entry(label.clone())
                            .or_insert(&answer[l.content..l.end]);
                    }
                    excluded[i] = true;
                }
                LineKind::Legend => {
                    if let Some(n) = l.label.as_deref().and_then(|x| x.parse().ok()) {
                        legend_lines.push((n, &answer[l.content..l.end]));
                    }
                    excluded[i] = true;
                }
                _ => {}
            }
        }

        let segments = self.segments(&lines, &excluded);

        let mut claims = Vec::new();
        let mut resolved = 0;
        if segments.is_empty() {
            if let Some(sec) = section {
                let body = body_text(answer, &lines, &excluded);
                claims.push(self.section_claim(0, body, &lines, &sec, &mut resolved));
            }
            return ParsedProse { claims, resolved };
        }
        // With inline markers, numbered section items and `[n]: …` lines are a legend.
        let mut legend: HashMap<usize, (String, usize)> = HashMap::new();
        let mut entries = legend_lines;
        if let Some(sec) = &section {
            for &j in &sec.items {
                let l = &lines[j];
                let text = &answer[l.content..l.end];
                if let Some((n, rest)) = leading_bracket_number(text) {
                    entries.push((n, rest));
                } else if l.kind == LineKind::ListItem
                    && let Some(n) = l.label.as_deref().and_then(|x| x.parse().ok())
                {
                    entries.push((n, text));
                }
            }
        }
        for (num, text) in entries {
            if let NameRes::Chunk(p) = self.resolve_item_name(text) {
                legend.entry(num).or_insert((text.trim().to_string(), p));
            }
        }
        for (index, seg) in segments.iter().enumerate() {
            claims.push(self.segment_claim(index, seg, &footnotes, &legend, &mut resolved));
        }
        ParsedProse { claims, resolved }
    }

    /// The body's sentences and items that carry markers.
    fn segments(&mut self, lines: &[Line], excluded: &[bool]) -> Vec<Segment> {
        let answer = self.answer;
        let mut blocks: Vec<(Range<usize>, LineKind)> = Vec::new();
        let mut cur: Option<(usize, usize, LineKind)> = None;
        for (i, l) in lines.iter().enumerate() {
            let breaks = excluded[i]
                || matches!(
                    l.kind,
                    LineKind::Blank
                        | LineKind::Code
                        | LineKind::Fence
                        | LineKind::Heading
                        | LineKind::Table
                        | LineKind::ListItem
                )
                || cur.is_some_and(|(_, _, k)| matches!(k, LineKind::Heading | LineKind::Table));
            if breaks && let Some((s, e, k)) = cur.take() {
                blocks.push((s..e, k));
            }
            if excluded[i] {
                continue;
            }
            match l.kind {
                LineKind::Blank | LineKind::Code | LineKind::Fence => {}
                LineKind::Heading | LineKind::Table | LineKind::ListItem => {
                    cur = Some((l.content, l.end, l.kind));
                }
                _ => match cur.as_mut() {
                    Some(c) => c.1 = l.end,
                    None => cur = Some((l.content, l.end, l.kind)),
                },
            }
        }
        if let Some((s, e, k)) = cur.take() {
            blocks.push((s..e, k));
        }

        let mut segments: Vec<Segment> = Vec::new();
        // The last sentence seen, with its quotes, for markers on a line of their own.
        let mut previous: Option<(Range<usize>, Vec<QuoteSpan>)> = None;
        for (range, kind) in &blocks {
            let s = &answer[range.clone()];
            let mut mask = vec![0u8; s.len()];
            for r in inline_code(s) {
                for f in &mut mask[r] {
                    *f |= CODE;
                }
            }
            let markers = self.scan_markers(s, &mask);
            if markers.is_empty() {
                previous = Some((last_sentence(s, range.start), Vec::new()));
                continue;
            }
            for m in &markers {
                for f in &mut mask[m.range.clone()] {
                    *f |= MARK;
                }
            }
            let quotes = self.quotes(s, &mut mask, &markers);
            let sents: Vec<Range<usize>> = if *kind == LineKind::Table {
                std::iter::once(0..s.len()).collect()
            } else {
                sentences(s, &mask, &quotes, &markers)
            };
            let (mut mi, mut qi) = (0, 0);
            for sr in sents {
                let mut ms = Vec::new();
                while mi < markers.len() && markers[mi].range.start < sr.end {
                    if markers[mi].range.start >= sr.start {
                        ms.push(shift_marker(&markers[mi], range.start));
                    }
                    mi += 1;
                }
                let mut qs = Vec::new();
                while qi < quotes.len() && quotes[qi].outer.start < sr.end {
                    if quotes[qi].outer.start >= sr.start {
                        let q = &quotes[qi];
                        qs.push(QuoteSpan {
                            outer: q.outer.start + range.start..q.outer.end + range.start,
                            text: q.text.clone(),
                        });
                    }
                    qi += 1;
                }
                let abs = sr.start + range.start..sr.end + range.start;
                if ms.is_empty() {
                    previous = Some((abs, qs));
                    continue;
                }
                let only_markers = !strip_markers(&answer[abs.clone()], abs.start, &ms)
                    .chars()
                    .any(char::is_alphanumeric);
                match (only_markers, segments.last_mut(), previous.take()) {
                    // Markers alone on a line cite the sentence before them.
                    (true, Some(last), Some((prev, _))) if last.range == prev => {
                        last.markers.extend(ms);
                        last.quotes.extend(qs);
                        previous = Some((prev, Vec::new()));
                    }
                    (true, _, Some((prev, mut prev_quotes))) => {
                        prev_quotes.extend(qs);
                        segments.push(Segment {
                            range: prev.clone(),
                            markers: ms,
                            quotes: prev_quotes,
                        });
                        previous = Some((prev, Vec::new()));
                    }
                    _ => {
                        segments.push(Segment {
                            range: abs.clone(),
                            markers: ms,
                            quotes: qs,
                        });
                        previous = Some((abs, Vec::new()));
                    }
                }
            }
        }
        segments
    }

    /// The whole-answer claim of a reference section without inline markers.
    fn section_claim(
        &mut self,
        index: usize,
        body: String,
        lines: &[Line],
        sec: &Section<'_>,
        resolved: &mut usize,
    ) -> ProseClaim {
        let mut item_texts: Vec<&str> = sec
            .items
            .iter()
            .map(|&j| &self.answer[lines[j].content..lines[j].end])
            .collect();
        if !sec.inline.is_empty() {
            item_texts.push(sec.inline);
        }
        let mut claim = ProseClaim {
            index,
            text: body,
            citations: Vec::new(),
            attempted: 0,
            warnings: Vec::new(),
        };
        for item in item_texts {
            let item = item.trim();
            if item.is_empty() {
                continue;
            }
            let label = leading_bracket_number(item);
            let name_text = label.map_or(item, |(_, rest)| rest);
            let mut mask = vec![0u8; name_text.len()];
            for r in inline_code(name_text) {
                for f in &mut mask[r] {
                    *f |= CODE;
                }
            }
            let inner = self.scan_markers(name_text, &mask);
            let quotes = self.quotes(name_text, &mut mask, &inner);
            let quote_texts: Vec<&str> = quotes.iter().map(|q| q.text.as_str()).collect();
            let mut attempts = Vec::new();
            if inner.is_empty() {
                let mut parts = vec![(
                    name_text.to_string(),
                    self.resolve_item_name(&strip_quoted(name_text, &quotes)),
                )];
                if parts[0].1 == NameRes::NotFound {
                    let split = self.resolve_payload(&strip_quoted(name_text, &quotes));
                    if split.iter().any(|(_, r)| *r != NameRes::NotFound) {
                        parts = split;
                    } else if let Some((n, _)) = label {
                        parts = vec![(item.to_string(), NameRes::Positions(vec![(n, n)]))];
                    }
                }
                for (name, res) in parts {
                    if res == NameRes::NotFound {
                        self.unresolved(&mut claim, item, &name);
                        continue;
                    }
                    let cited = Cited {
                        text: item,
                        family: MarkerFamily::ReferenceSection,
                        at: 0,
                    };
                    let mut out = Draft {
                        claim: &mut claim,
                        attempts: &mut attempts,
                        quotes: &quote_texts,
                    };
                    self.expand(&res, &cited, &mut out);
                }
            } else {
                // Markers inside a list item: no footnotes or legend of their own.
                let defs = Definitions {
                    footnotes: &HashMap::new(),
                    legend: &HashMap::new(),
                };
                let mut out = Draft {
                    claim: &mut claim,
                    attempts: &mut attempts,
                    quotes: &quote_texts,
                };
                for m in &inner {
                    self.expand_marker(m, item, &defs, &mut out);
                }
                for a in &mut attempts {
                    a.family = MarkerFamily::ReferenceSection;
                }
            }
            *resolved += attempts.len();
            let qs: Vec<(usize, String)> = quotes
                .iter()
                .map(|q| (q.outer.start, q.text.clone()))
                .collect();
            self.check_quotes(&mut claim, attempts, &qs);
        }
        claim
    }

    fn segment_claim(
        &mut self,
        index: usize,
        seg: &Segment,
        footnotes: &HashMap<String, &str>,
        legend: &HashMap<usize, (String, usize)>,
        resolved: &mut usize,
    ) -> ProseClaim {
        let text = clean_claim_text(&strip_markers(
            &self.answer[seg.range.clone()],
            seg.range.start,
            &seg.markers,
        ));
        let mut claim = ProseClaim {
            index,
            text,
            citations: Vec::new(),
            attempted: 0,
            warnings: Vec::new(),
        };
        let quote_texts: Vec<&str> = seg.quotes.iter().map(|q| q.text.as_str()).collect();
        let mut attempts = Vec::new();
        let defs = Definitions { footnotes, legend };
        let mut out = Draft {
            claim: &mut claim,
            attempts: &mut attempts,
            quotes: &quote_texts,
        };
        for m in &seg.markers {
            let marker_text = &self.answer[m.range.clone()];
            self.expand_marker(m, marker_text, &defs, &mut out);
        }
        *resolved += attempts.len();
        let qs: Vec<(usize, String)> = seg
            .quotes
            .iter()
            .map(|q| (q.outer.start, q.text.clone()))
            .collect();
        self.check_quotes(&mut claim, attempts, &qs);
        claim
    }
}

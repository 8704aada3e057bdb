//! The suite file: a corpus, settings, thresholds and cases (TOML or JSON;
//! the JSON Schema is `schemas/eval-suite.schema.json`).

use std::collections::{BTreeMap, BTreeSet};

use groundcite_core::{Chunk, ClaimPolicy, MatchProfile, QuoteVerdict, find_quote, truncate_chars};
use serde::{Deserialize, Serialize};

use crate::metric::Metric;

/// Most cases one suite may hold.
pub const MAX_CASES: usize = 10_000;

/// Longest question, in characters.
pub const MAX_QUESTION_CHARS: usize = 4_000;

/// An evaluation suite.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Suite {
    /// Short name, shown in reports.
    pub name: String,
    /// What the suite checks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Where the answers come from.
    pub corpus: Corpus,
    /// Retrieval and verification settings (defaults: those of `ask`).
    #[serde(default)]
    pub settings: SuiteSettings,
    /// Gates: metric name to bounds. A run fails when a bounded metric is
    /// outside its bounds or could not be measured.
    #[serde(default)]
    pub thresholds: BTreeMap<String, Bound>,
    /// The cases, run in order.
    pub cases: Vec<Case>,
}

/// The corpus: exactly one of `docs` (a folder indexed with the embedded
/// index) or `chunks` (a JSON file of chunks, as an upstream retriever
/// returns them). Relative paths are relative to the suite file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Corpus {
    /// Folder of documents (Markdown, reStructuredText, AsciiDoc, text,
    /// PDF, HTML, DOCX, ODT, EPUB).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub docs: Option<String>,
    /// JSON file: an array of chunks or `{"chunks": [...]}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chunks: Option<String>,
    /// Base URL of the documents (docs corpora only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_url: Option<String>,
}

/// Retrieval and verification settings.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SuiteSettings {
    /// Chunks retrieved per question (docs corpora).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub top_k: Option<usize>,
    /// The gate (docs corpora): `retrieval`, `evidence` or `off`; default:
    /// the provider's (evidence for the embedded model).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gate: Option<String>,
    /// Candidate sentences the embedded model quotes among (0: whole
    /// chunks).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub candidates: Option<usize>,
    /// The matching profile.
    #[serde(default, rename = "match", skip_serializing_if = "Option::is_none")]
    pub profile: Option<MatchProfile>,
    /// The claim policy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub claims: Option<ClaimPolicy>,
}

/// Bounds on one metric; at least one is set.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Bound {
    /// The metric must be at least this.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min: Option<f64>,
    /// The metric must be at most this.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max: Option<f64>,
}

/// What a case expects.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CaseKind {
    /// One chunk holds the answer.
    Answerable,
    /// The answer needs at least two chunks.
    MultiChunk,
    /// The corpus does not hold the answer.
    Unanswerable,
}

impl CaseKind {
    /// The name used in files and reports.
    pub fn as_str(self) -> &'static str {
        match self {
            CaseKind::Answerable => "answerable",
            CaseKind::MultiChunk => "multi_chunk",
            CaseKind::Unanswerable => "unanswerable",
        }
    }

    /// Whether the corpus holds the answer.
    pub fn expects_answer(self) -> bool {
        !matches!(self, CaseKind::Unanswerable)
    }
}

/// One question and what a correct answer looks like.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Case {
    /// Unique within the suite: 1 to 64 of `[A-Za-z0-9._-]`.
    pub id: String,
    /// The question.
    pub question: String,
    /// What the case expects.
    pub kind: CaseKind,
    /// Chunk IDs that hold the answer (answerable kinds; at least two for
    /// `multi_chunk`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub gold_chunks: Vec<String>,
    /// Sentences of the corpus that hold the answer, copied verbatim: the
    /// gold chunks are the chunks that contain them (found with the
    /// matching rule when the suite runs), so a suite survives a change of
    /// chunking. Each sentence is satisfied by any chunk that holds it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub evidence: Vec<String>,
    /// Facts a correct answer states (matched case-insensitively after the
    /// lenient normalization against verified claims and quotes).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub key_facts: Vec<String>,
    /// The gold chunks as groups, each satisfied by any of its chunks: one
    /// group per `gold_chunks` entry, plus one per `evidence` sentence once
    /// [`Suite::resolve_evidence`] has run.
    #[serde(skip)]
    pub gold_groups: Vec<Vec<String>>,
}

impl Case {
    /// The gold chunks as groups (see [`Case::gold_groups`]); before
    /// evidence is resolved, one group per `gold_chunks` entry.
    pub fn gold(&self) -> Vec<Vec<String>> {
        if self.gold_groups.is_empty() {
            self.gold_chunks.iter().map(|g| vec![g.clone()]).collect()
        } else {
            self.gold_groups.clone()
        }
    }
}

/// Why a suite was refused: the path of the offending field and what is
/// wrong with it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}{message}", at(path))]
pub struct SuiteError {
    /// Where (`cases[3].gold_chunks`), or empty for the whole file.
    pub path: String,
    /// What is wrong.
    pub message: String,
}

/// `PATH: `, or nothing for the whole file.
fn at(path: &str) -> String {
    if path.is_empty() {
        String::new()
    } else {
        format!("{path}: ")
    }
}

fn err(path: impl Into<String>, message: impl Into<String>) -> SuiteError {
    SuiteError {
        path: path.into(),
        message: message.into(),
    }
}

impl Suite {
    /// Parses and validates a TOML suite.
    pub fn from_toml(text: &str) -> Result<Suite, SuiteError> {
        let suite: Suite = toml::from_str(text).map_err(|e| {
            // toml's message already names the line and the key.
            err(
                "",
                e.message().trim().to_string() + &span_note(text, e.span()),
            )
        })?;
        suite.validate()?;
        Ok(suite)
    }

    /// Parses and validates a JSON suite.
    pub fn from_json(text: &str) -> Result<Suite, SuiteError> {
        let de = &mut serde_json::Deserializer::from_str(text);
        let suite: Suite = serde_path_to_error_free(de)?;
        suite.validate()?;
        Ok(suite)
    }

    /// Checks everything the types cannot: unique IDs, gold chunks per
    /// kind, threshold names and ranges, settings ranges.
    pub fn validate(&self) -> Result<(), SuiteError> {
        if self.name.trim().is_empty() {
            return Err(err("name", "is empty"));
        }
        match (&self.corpus.docs, &self.corpus.chunks) {
            (Some(_), Some(_)) => {
                return Err(err("corpus", "set either docs or chunks, not both"));
            }
            (None, None) => return Err(err("corpus", "set docs (a folder) or chunks (a file)")),
            (None, Some(_)) if self.corpus.base_url.is_some() => {
                return Err(err(
                    "corpus.base_url",
                    "applies to docs corpora only (chunks carry their own source_url)",
                ));
            }
            _ => {}
        }
        if let Some(k) = self.settings.top_k
            && !(1..=50).contains(&k)
        {
            return Err(err("settings.top_k", "must be between 1 and 50"));
        }
        if let Some(g) = &self.settings.gate
            && !matches!(g.as_str(), "retrieval" | "evidence" | "off")
        {
            return Err(err(
                "settings.gate",
                format!("{g:?} is not retrieval, evidence or off"),
            ));
        }
        if let Some(c) = self.settings.candidates
            && c > 16
        {
            return Err(err("settings.candidates", "must be between 0 and 16"));
        }
        for (name, bound) in &self.thresholds {
            check_bound(&format!("thresholds.{name}"), name, bound)?;
        }
        if self.cases.is_empty() {
            return Err(err("cases", "is empty"));
        }
        if self.cases.len() > MAX_CASES {
            return Err(err("cases", format!("has more than {MAX_CASES} cases")));
        }
        let mut ids = BTreeSet::new();
        for (i, case) in self.cases.iter().enumerate() {
            let at = |field: &str| format!("cases[{i}].{field}");
            if !valid_id(&case.id) {
                return Err(err(at("id"), "must be 1 to 64 of A-Z a-z 0-9 . _ -"));
            }
            if !ids.insert(case.id.as_str()) {
                return Err(err(at("id"), format!("{:?} is used twice", case.id)));
            }
            if case.question.trim().is_empty() {
                return Err(err(at("question"), "is empty"));
            }
            if case.question.chars().count() > MAX_QUESTION_CHARS {
                return Err(err(
                    at("question"),
                    format!("is longer than {MAX_QUESTION_CHARS} characters"),
                ));
            }
            let gold: BTreeSet<&str> = case.gold_chunks.iter().map(String::as_str).collect();
            if gold.len() != case.gold_chunks.len() {
                return Err(err(at("gold_chunks"), "lists a chunk ID twice"));
            }
            if gold.iter().any(|g| g.trim().is_empty()) {
                return Err(err(at("gold_chunks"), "has an empty chunk ID"));
            }
            if case.evidence.iter().any(|e| e.trim().is_empty()) {
                return Err(err(at("evidence"), "has an empty sentence"));
            }
            if case.key_facts.iter().any(|f| f.trim().is_empty()) {
                return Err(err(at("key_facts"), "has an empty fact"));
            }
            let golds = gold.len() + case.evidence.len();
            match case.kind {
                CaseKind::Answerable if golds == 0 => {
                    return Err(err(
                        at("gold_chunks"),
                        "an answerable case names the chunk (gold_chunks) or the sentence (evidence) that holds its answer",
                    ));
                }
                CaseKind::MultiChunk if golds < 2 => {
                    return Err(err(
                        at("gold_chunks"),
                        "a multi_chunk case names at least two chunks or evidence sentences",
                    ));
                }
                CaseKind::Unanswerable if golds > 0 || !case.key_facts.is_empty() => {
                    return Err(err(
                        at("kind"),
                        "an unanswerable case has no gold_chunks, no evidence and no key_facts",
                    ));
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// Turns every case's `evidence` into gold groups over `chunks` (the
    /// whole corpus): the chunks in which the sentence is found by the
    /// matching rule. A sentence found in no chunk is an error naming the
    /// case, as is a multi-chunk case whose evidence lies in fewer than two
    /// distinct chunks.
    pub fn resolve_evidence(&mut self, chunks: &[Chunk]) -> Result<(), SuiteError> {
        for (i, case) in self.cases.iter_mut().enumerate() {
            let mut groups: Vec<Vec<String>> =
                case.gold_chunks.iter().map(|g| vec![g.clone()]).collect();
            for (j, sentence) in case.evidence.iter().enumerate() {
                let holders: Vec<String> = chunks
                    .iter()
                    .filter(|c| {
                        matches!(
                            find_quote(&c.content, sentence, MatchProfile::Default),
                            QuoteVerdict::Found(_)
                        )
                    })
                    .map(|c| c.chunk_id.clone())
                    .collect();
                if holders.is_empty() {
                    return Err(err(
                        format!("cases[{i}].evidence[{j}]"),
                        format!(
                            "is in no chunk of the corpus: {:?}",
                            truncate_chars(sentence, 80)
                        ),
                    ));
                }
                groups.push(holders);
            }
            if case.kind == CaseKind::MultiChunk {
                let distinct: BTreeSet<&String> = groups.iter().filter_map(|g| g.first()).collect();
                if distinct.len() < 2 {
                    return Err(err(
                        format!("cases[{i}].evidence"),
                        "a multi_chunk case's evidence lies in fewer than two chunks",
                    ));
                }
            }
            case.gold_groups = groups;
        }
        Ok(())
    }

    /// How many cases of each kind.
    pub fn counts(&self) -> BTreeMap<CaseKind, usize> {
        let mut out = BTreeMap::new();
        for c in &self.cases {
            *out.entry(c.kind).or_insert(0) += 1;
        }
        out
    }
}

/// Checks one threshold: a known metric, at least one bound, finite, in
/// range, and min ≤ max.
pub fn check_bound(path: &str, name: &str, bound: &Bound) -> Result<(), SuiteError> {
    let Some(metric) = Metric::from_name(name) else {
        return Err(err(
            path,
            format!(
                "{name:?} is not a metric; known: {}",
                Metric::ALL
                    .iter()
                    .map(|m| m.name())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ));
    };
    if bound.min.is_none() && bound.max.is_none() {
        return Err(err(path, "set min, max or both"));
    }
    for v in [bound.min, bound.max].into_iter().flatten() {
        if !v.is_finite() || v < 0.0 {
            return Err(err(path, "bounds are finite numbers, 0 or more"));
        }
        if metric.is_rate() && v > 1.0 {
            return Err(err(
                path,
                format!("{name} is a rate between 0 and 1 (write 0.95, not 95)"),
            ));
        }
    }
    if let (Some(lo), Some(hi)) = (bound.min, bound.max)
        && lo > hi
    {
        return Err(err(path, "min is above max"));
    }
    Ok(())
}

fn valid_id(id: &str) -> bool {
    (1..=64).contains(&id.len())
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
}

fn span_note(text: &str, span: Option<std::ops::Range<usize>>) -> String {
    let Some(span) = span else {
        return String::new();
    };
    let before = text.get(..span.start).unwrap_or(text);
    format!(" (line {})", before.matches('\n').count() + 1)
}

/// serde_json with the line and column of the error.
fn serde_path_to_error_free(
    de: &mut serde_json::Deserializer<serde_json::de::StrRead<'_>>,
) -> Result<Suite, SuiteError> {
    let suite = Suite::deserialize(&mut *de).map_err(|e| err("", e.to_string()))?;
    de.end().map_err(|e| err("", e.to_string()))?;
    Ok(suite)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    const OK: &str = r#"
name = "t"
[corpus]
docs = "docs"
[thresholds]
answerable_rate = { min = 0.5 }
[[cases]]
id = "a"
question = "Q?"
kind = "answerable"
gold_chunks = ["x#chunk-1"]
[[cases]]
id = "m"
question = "Q2?"
kind = "multi_chunk"
gold_chunks = ["x#chunk-1", "y#chunk-2"]
[[cases]]
id = "u"
question = "Q3?"
kind = "unanswerable"
"#;

    #[test]
    fn parses_a_valid_suite() {
        let s = Suite::from_toml(OK).unwrap();
        assert_eq!(s.cases.len(), 3);
        assert_eq!(s.counts()[&CaseKind::MultiChunk], 1);
    }

    fn refused(text: &str) -> SuiteError {
        Suite::from_toml(text).unwrap_err()
    }

    #[test]
    fn refuses_what_cannot_be_scored() {
        let e = refused(&OK.replace("\"y#chunk-2\"", ""));
        assert_eq!(e.path, "cases[1].gold_chunks");
        let e = refused(&OK.replace("id = \"m\"", "id = \"a\""));
        assert!(e.message.contains("used twice"), "{e}");
        let e = refused(&OK.replace(
            "answerable_rate = { min = 0.5 }",
            "answerable_rate = { min = 50 }",
        ));
        assert!(e.message.contains("0.95, not 95"), "{e}");
        let e = refused(&OK.replace("answerable_rate =", "answerable_ratio ="));
        assert!(e.message.contains("not a metric"), "{e}");
        let e = refused(&OK.replace("answerable_rate = { min = 0.5 }", "answerable_rate = {}"));
        assert!(e.message.contains("set min, max"), "{e}");
        let e = refused(&OK.replace("docs = \"docs\"", "docs = \"d\"\nchunks = \"c.json\""));
        assert_eq!(e.path, "corpus");
        let e = refused(&OK.replace(
            "kind = \"unanswerable\"",
            "kind = \"unanswerable\"\ngold_chunks = [\"x\"]",
        ));
        assert_eq!(e.path, "cases[2].kind");
        let e = refused(&OK.replace("question = \"Q?\"", "question = \"  \""));
        assert_eq!(e.path, "cases[0].question");
        let e = refused(&OK.replace("kind = \"answerable\"", "kind = \"answerabel\""));
        assert!(e.message.contains("answerabel"), "{e}");
        let e = refused(&OK.replace("[corpus]", "colour = 1\n[corpus]"));
        assert!(e.message.contains("colour"), "{e}");
    }

    #[test]
    fn json_suites_parse_too() {
        let s = Suite::from_toml(OK).unwrap();
        let j = serde_json::to_string(&s).unwrap();
        assert_eq!(Suite::from_json(&j).unwrap(), s);
        assert!(Suite::from_json("{").is_err());
        assert!(Suite::from_json(&(j + "x")).is_err());
    }
}

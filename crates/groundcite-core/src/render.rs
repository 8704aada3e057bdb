//! Plain-text rendering of a contract for terminals.

use std::fmt::Write as _;

use crate::contract::Contract;

/// Renders the answer with footnotes, the sources with their verbatim
/// source text, and the warnings. Links appear only when the contract has one.
pub fn render_text(c: &Contract) -> String {
    let mut out = String::new();
    // Writing to a String cannot fail.
    let _ = writeln!(out, "{}", c.answer);
    if let Some(r) = &c.refusal {
        let _ = writeln!(out, "\n(refusal {:?}: {})", r.code, r.reason);
    }
    if !c.sources.is_empty() {
        let _ = writeln!(out, "\nSources");
        for s in &c.sources {
            let title = s.source_title.as_deref().unwrap_or("(untitled)");
            let _ = write!(out, "[{}] {} ({})", s.reference, title, s.chunk_id);
            if let Some(p) = s.page_number {
                let _ = write!(out, ", p. {p}");
            }
            if let Some(u) = &s.source_url {
                let _ = write!(out, " <{u}>");
            }
            out.push('\n');
            for claim in &c.claims {
                for cit in claim
                    .citations
                    .iter()
                    .filter(|x| x.reference == s.reference)
                {
                    if let (Some(text), Some(span)) = (&cit.source_text, cit.span) {
                        let _ = writeln!(
                            out,
                            "    \"{}\" (code points {}..{}, {})",
                            text.split_whitespace().collect::<Vec<_>>().join(" "),
                            span.start(),
                            span.end(),
                            cit.kind.as_str()
                        );
                    }
                }
            }
        }
    }
    if !c.warnings.is_empty() {
        let _ = writeln!(out, "\nWarnings ({})", c.warnings.len());
        for w in &c.warnings {
            let _ = writeln!(out, "  - {}: {}", w.code.as_str(), w.message);
        }
    }
    let _ = writeln!(
        out,
        "\ntrace {} · match profile {}{}",
        c.trace_id,
        c.match_profile.as_str(),
        c.model
            .as_deref()
            .map(|m| format!(" · model {m}"))
            .unwrap_or_default()
    );
    out
}

//! The self-contained HTML report: no scripts, no external assets (inline
//! CSS and SVG charts), every string from the suite, the model or the
//! corpus escaped.

use std::fmt::Write;

use groundcite_core::Contract;

use crate::compare::Comparison;
use crate::metric::Metric;
use crate::metrics::{CaseRun, HallucinationCheck};
use crate::result::EvalResult;
use crate::summary::{format_bound, format_value};

/// Escapes text for HTML element content and quoted attribute values.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for ch in s.chars() {
        match ch {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(ch),
        }
    }
    out
}

const STYLE: &str = r#"
body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0 auto;max-width:1100px;padding:1.5rem;color:#1b1f24;background:#fff}
h1{font-size:1.5rem;margin:.2rem 0}h2{font-size:1.15rem;margin-top:2rem;border-bottom:1px solid #d8dee4;padding-bottom:.3rem}
.meta{color:#57606a}.badge{display:inline-block;padding:.15rem .6rem;border-radius:1rem;font-weight:600}
.pass{background:#dafbe1;color:#116329}.fail{background:#ffebe9;color:#a40e26}.na{color:#57606a}
table{border-collapse:collapse;width:100%;margin:.5rem 0}th,td{text-align:left;padding:.35rem .5rem;border-bottom:1px solid #eaeef2;vertical-align:top}
th{background:#f6f8fa;font-weight:600}td.num{text-align:right;font-variant-numeric:tabular-nums}
.charts{display:flex;flex-wrap:wrap;gap:1.5rem}.charts figure{margin:0;flex:1 1 420px}figcaption{color:#57606a;font-size:.9rem}
details{margin:.2rem 0}summary{cursor:pointer}.claim{margin:.3rem 0}.fn{font-size:.8em;vertical-align:super;color:#0969da}
blockquote{margin:.2rem 0 .2rem 1rem;padding-left:.6rem;border-left:3px solid #d0d7de;color:#424a53}
.warn{color:#9a6700}.refusal{color:#a40e26}code{font-size:.9em}
@media (max-width:640px){body{padding:.6rem}td,th{padding:.25rem}}
"#;

/// The report for `r` (and its comparison with an older run, if given).
pub fn html(r: &EvalResult, comparison: Option<&Comparison>) -> String {
    let mut s = String::with_capacity(64 * 1024);
    let title = format!("groundcite eval: {}", r.suite);
    let _ = write!(
        s,
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width,initial-scale=1\"><title>{}</title><style>{STYLE}</style></head><body>",
        escape(&title)
    );
    let verdict = if r.thresholds.is_empty() {
        "<span class=\"badge na\">no thresholds</span>".to_string()
    } else if r.passed {
        "<span class=\"badge pass\">thresholds passed</span>".to_string()
    } else {
        "<span class=\"badge fail\">thresholds failed</span>".to_string()
    };
    let _ = write!(
        s,
        "<h1>{}</h1><p class=\"meta\">{} · {} · {} cases × {} = {} runs · started {} · {:.1} s</p><p>{verdict}</p>",
        escape(&title),
        escape(&r.provider),
        escape(r.model.as_deref().unwrap_or("unknown model")),
        r.metrics.cases,
        r.repeat,
        r.metrics.runs,
        escape(&r.started_at),
        r.wall_s
    );
    thresholds(&mut s, r);
    charts(&mut s, r);
    metrics_table(&mut s, r);
    if let Some(c) = comparison {
        comparison_table(&mut s, c);
    }
    cases(&mut s, r);
    s.push_str("</body></html>\n");
    s
}

fn thresholds(s: &mut String, r: &EvalResult) {
    if r.thresholds.is_empty() {
        return;
    }
    s.push_str("<h2>Thresholds</h2><table><tr><th>metric</th><th>bound</th><th>measured</th><th>verdict</th></tr>");
    for t in &r.thresholds {
        let Some(m) = Metric::from_name(&t.metric) else {
            continue;
        };
        let _ = write!(
            s,
            "<tr><td><code>{}</code></td><td>{}</td><td class=\"num\">{}</td><td>{}</td></tr>",
            escape(&t.metric),
            escape(&format_bound(m, t.min, t.max)),
            escape(&format_value(m, t.value)),
            if t.passed {
                "<span class=\"badge pass\">pass</span>"
            } else {
                "<span class=\"badge fail\">fail</span>"
            }
        );
    }
    s.push_str("</table>");
}

/// Horizontal bars, one per (label, share in 0..=1 or unmeasured).
fn bar_chart(bars: &[(String, Option<f64>)], label: &str) -> String {
    let row = 26;
    let height = bars.len() * row + 10;
    let mut svg = format!(
        "<svg role=\"img\" aria-label=\"{}\" viewBox=\"0 0 460 {height}\" width=\"100%\">",
        escape(label)
    );
    for (i, (name, v)) in bars.iter().enumerate() {
        let y = i * row + 5;
        let w = v.map_or(0.0, |v| v.clamp(0.0, 1.0) * 220.0);
        let text = v.map_or("n/a".into(), |v| format!("{:.0}%", v * 100.0));
        let _ = write!(
            svg,
            "<text x=\"0\" y=\"{}\" font-size=\"12\">{}</text><rect x=\"180\" y=\"{y}\" width=\"220\" height=\"18\" fill=\"#eaeef2\"/><rect x=\"180\" y=\"{y}\" width=\"{w:.1}\" height=\"18\" fill=\"#2da44e\"/><text x=\"406\" y=\"{}\" font-size=\"12\">{text}</text>",
            y + 13,
            escape(name),
            y + 13
        );
    }
    svg.push_str("</svg>");
    svg
}

/// A histogram of `samples` (ms) in up to 12 equal bins.
fn histogram(samples: &[f64], label: &str) -> String {
    let (w, h) = (460.0, 170.0);
    let mut svg = format!(
        "<svg role=\"img\" aria-label=\"{}\" viewBox=\"0 0 {w} {h}\" width=\"100%\">",
        escape(label)
    );
    let finite: Vec<f64> = samples.iter().copied().filter(|v| v.is_finite()).collect();
    if finite.is_empty() {
        svg.push_str("<text x=\"10\" y=\"20\" font-size=\"12\">no samples</text></svg>");
        return svg;
    }
    let lo = finite.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = finite.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let bins = finite.len().clamp(1, 12);
    let width = ((hi - lo) / bins as f64).max(1e-9);
    let mut counts = vec![0usize; bins];
    for v in &finite {
        let i = (((v - lo) / width) as usize).min(bins - 1);
        if let Some(c) = counts.get_mut(i) {
            *c += 1;
        }
    }
    let top = counts.iter().copied().max().unwrap_or(1).max(1) as f64;
    let bw = (w - 20.0) / bins as f64;
    for (i, c) in counts.iter().enumerate() {
        let bh = *c as f64 / top * (h - 50.0);
        let x = 10.0 + i as f64 * bw;
        let _ = write!(
            svg,
            "<rect x=\"{x:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{bh:.1}\" fill=\"#0969da\"><title>{c} runs from {:.0} ms</title></rect>",
            h - 30.0 - bh,
            (bw - 2.0).max(1.0),
            lo + i as f64 * width
        );
        if *c > 0 {
            let _ = write!(
                svg,
                "<text x=\"{:.1}\" y=\"{:.1}\" font-size=\"11\" text-anchor=\"middle\">{c}</text>",
                x + bw / 2.0,
                h - 33.0 - bh
            );
        }
    }
    let _ = write!(
        svg,
        "<text x=\"10\" y=\"{}\" font-size=\"12\">{lo:.0} ms</text><text x=\"{}\" y=\"{}\" font-size=\"12\" text-anchor=\"end\">{hi:.0} ms</text></svg>",
        h - 10.0,
        w - 10.0,
        h - 10.0
    );
    svg
}

fn charts(s: &mut String, r: &EvalResult) {
    let m = &r.metrics;
    let mut bars: Vec<(String, Option<f64>)> = m
        .by_kind
        .iter()
        .map(|(k, v)| {
            (
                format!("{k} passed"),
                (v.runs > 0).then(|| v.passed as f64 / v.runs as f64),
            )
        })
        .collect();
    for metric in [
        Metric::AnswerableRate,
        Metric::CitationValidity,
        Metric::CitationRecall,
        Metric::MultiChunkSynthesis,
        Metric::UnanswerablePrecision,
        Metric::KeyFactRecall,
        Metric::HallucinationRejection,
    ] {
        bars.push((metric.name().to_string(), m.get(metric)));
    }
    let latencies: Vec<f64> = r.runs.iter().map(|x| x.latency_ms).collect();
    let _ = write!(
        s,
        "<h2>Rates</h2><div class=\"charts\"><figure>{}<figcaption>Pass rate per kind and the suite's rates.</figcaption></figure><figure>{}<figcaption>Latency of whole runs (retrieve, generate, verify): p50 {}, p95 {}, max {}.</figcaption></figure></div>",
        bar_chart(&bars, "pass rates per kind and suite rates"),
        histogram(&latencies, "latency distribution"),
        escape(&format_value(Metric::LatencyP50Ms, m.latency_ms.p50)),
        escape(&format_value(Metric::LatencyP95Ms, m.latency_ms.p95)),
        escape(&format_value(Metric::LatencyP95Ms, m.latency_ms.max)),
    );
}

fn metrics_table(s: &mut String, r: &EvalResult) {
    let m = &r.metrics;
    s.push_str("<h2>Metrics</h2><table><tr><th>metric</th><th>value</th></tr>");
    for metric in Metric::ALL {
        let _ = write!(
            s,
            "<tr><td><code>{}</code></td><td class=\"num\">{}</td></tr>",
            metric.name(),
            escape(&format_value(metric, m.get(metric)))
        );
    }
    s.push_str("</table>");
    let list = |map: &std::collections::BTreeMap<String, usize>| {
        if map.is_empty() {
            "none".to_string()
        } else {
            map.iter()
                .map(|(k, v)| format!("{} {v}", escape(k)))
                .collect::<Vec<_>>()
                .join(", ")
        }
    };
    let _ = write!(
        s,
        "<p>Citations: {} emitted, {} verified (by match: {}); dropped by reason: {}. Claims: {} produced, {} failed verification. Refusals: {}.</p>",
        m.citations_emitted,
        m.citations_verified,
        list(&m.citations_by_match),
        list(&m.citations_dropped),
        m.claims_in,
        m.claims_failed,
        list(&m.refusals)
    );
}

fn comparison_table(s: &mut String, c: &Comparison) {
    let _ = write!(s, "<h2>Compared with {}</h2>", escape(&c.old_label));
    if c.different_suites {
        s.push_str("<p class=\"warn\">The two runs used different suites.</p>");
    }
    s.push_str("<table><tr><th>metric</th><th>before</th><th>now</th><th>change</th></tr>");
    for d in &c.metrics {
        let Some(m) = Metric::from_name(&d.metric) else {
            continue;
        };
        let change = match d.better {
            Some(true) => "<span class=\"badge pass\">better</span>",
            Some(false) => "<span class=\"badge fail\">worse</span>",
            None => "",
        };
        let _ = write!(
            s,
            "<tr><td><code>{}</code></td><td class=\"num\">{}</td><td class=\"num\">{}</td><td>{change}</td></tr>",
            escape(&d.metric),
            escape(&format_value(m, d.old)),
            escape(&format_value(m, d.new))
        );
    }
    s.push_str("</table>");
    if !c.cases.is_empty() {
        s.push_str("<p>Cases whose pass rate changed: ");
        let items: Vec<String> = c
            .cases
            .iter()
            .map(|x| {
                let f =
                    |v: Option<f64>| v.map_or("absent".into(), |v| format!("{:.0}%", v * 100.0));
                format!(
                    "<code>{}</code> {} → {}",
                    escape(&x.case_id),
                    f(x.old),
                    f(x.new)
                )
            })
            .collect();
        s.push_str(&items.join("; "));
        s.push_str("</p>");
    }
}

/// One contract rendered for reading: claims with footnote numbers, the
/// quotes under them, or the refusal message; then the warnings.
fn rendered(c: &Contract) -> String {
    let mut s = String::new();
    if let Some(refusal) = &c.refusal {
        let _ = write!(
            s,
            "<p class=\"refusal\">{:?} ({}): {}</p>",
            refusal.code,
            escape(&refusal.reason),
            escape(&refusal.message)
        );
    }
    for claim in &c.claims {
        let refs: String = claim
            .citations
            .iter()
            .map(|ci| format!("<span class=\"fn\">[{}]</span>", ci.reference))
            .collect();
        let _ = write!(s, "<div class=\"claim\">{}{refs}", escape(&claim.text));
        for ci in &claim.citations {
            let _ = write!(
                s,
                "<blockquote>[{}] <code>{}</code> ({}): {}</blockquote>",
                ci.reference,
                escape(&ci.chunk_id),
                ci.kind.as_str(),
                escape(
                    ci.source_text
                        .as_deref()
                        .or(ci.quote.as_deref())
                        .unwrap_or("")
                )
            );
        }
        s.push_str("</div>");
    }
    if !c.warnings.is_empty() {
        s.push_str("<ul>");
        for w in &c.warnings {
            let _ = write!(
                s,
                "<li class=\"warn\"><code>{}</code> {}</li>",
                escape(&crate::metrics::warning_code(w.code)),
                escape(&w.message)
            );
        }
        s.push_str("</ul>");
    }
    s
}

fn cases(s: &mut String, r: &EvalResult) {
    s.push_str("<h2>Cases</h2><table><tr><th>case</th><th>kind</th><th>passed</th><th>citation recall</th><th>retrieval recall</th><th>mean latency</th><th>question and answer</th></tr>");
    for c in &r.cases {
        let pct = |v: Option<f64>| v.map_or("n/a".into(), |v| format!("{:.0}%", v * 100.0));
        let class = if c.passed == c.runs && c.runs > 0 {
            "pass"
        } else {
            "fail"
        };
        let _ = write!(
            s,
            "<tr id=\"case-{}\"><td><code>{}</code></td><td>{}</td><td><span class=\"badge {class}\">{}/{}</span></td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{:.0} ms</td><td>{}",
            escape(&c.case_id),
            escape(&c.case_id),
            c.kind.as_str(),
            c.passed,
            c.runs,
            pct(c.citation_recall),
            pct(c.retrieval_recall),
            c.mean_latency_ms,
            escape(&c.question)
        );
        let runs: Vec<&CaseRun> = r.runs.iter().filter(|x| x.case_id == c.case_id).collect();
        for run in runs {
            let _ = write!(
                s,
                "<details><summary>run {} · trace <code>{}</code> · retrieved {}{}</summary>{}</details>",
                run.repeat,
                escape(&run.trace_id),
                escape(&run.retrieved.join(", ")),
                run.error
                    .as_deref()
                    .map(|e| format!(" · <span class=\"refusal\">error: {}</span>", escape(e)))
                    .unwrap_or_default(),
                rendered(&run.contract)
            );
        }
        s.push_str("</td></tr>");
    }
    s.push_str("</table>");
    let broken: Vec<&HallucinationCheck> = r.hallucination.iter().filter(|h| !h.passed).collect();
    let _ = write!(
        s,
        "<h2>Hallucination rejection</h2><p>{} of {} injected answers (a chunk that was not retrieved, a fabricated quote) were stripped, warned and turned unanswerable.</p>",
        r.hallucination.len() - broken.len(),
        r.hallucination.len()
    );
    for h in broken {
        let _ = write!(
            s,
            "<p class=\"refusal\"><code>{}</code>: {}</p>",
            escape(&h.case_id),
            escape(h.detail.as_deref().unwrap_or(""))
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_everything_markup_can_use() {
        assert_eq!(
            escape("<script>alert('x')</script>&\""),
            "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&amp;&quot;"
        );
    }

    #[test]
    fn histogram_handles_degenerate_samples() {
        assert!(histogram(&[], "x").contains("no samples"));
        assert!(histogram(&[5.0, 5.0, 5.0], "x").contains(">3<"));
        assert!(histogram(&[f64::NAN], "x").contains("no samples"));
    }
}

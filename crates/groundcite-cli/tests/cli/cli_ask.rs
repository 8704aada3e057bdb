//! `groundcite ask` end to end with the real embedded model on the sample
//! corpus: answerable questions come back answerable with verified
//! citations from the right document, questions the corpus cannot answer
//! come back unanswerable, traces are stored and re-verify to the same
//! contract, and bad settings are one clear sentence.

#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use serde_json::Value;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// One index and one trace database for the whole test binary (the index
/// is built once; `ask` updates it incrementally, which is also tested).
fn workdir() -> &'static PathBuf {
    static D: OnceLock<PathBuf> = OnceLock::new();
    D.get_or_init(|| {
        sweep_dead_workdirs();
        let d = std::env::temp_dir().join(format!("{WORKDIR_PREFIX}{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        // Build the index once, before tests run `ask` concurrently.
        let out = groundcite(&["index", "corpus/sample", "--index", idx(&d).as_str()]);
        assert!(out.status.success(), "{}", text(&out.stderr));
        d
    })
}

const WORKDIR_PREFIX: &str = "groundcite-ask-";

/// Removes the work folders of test processes that have ended: a `static`
/// is never dropped, so each process leaves its folder behind, and the next
/// one clears them (Linux, where `/proc` says which processes live).
fn sweep_dead_workdirs() {
    if !Path::new("/proc/self").exists() {
        return;
    }
    let Ok(entries) = std::fs::read_dir(std::env::temp_dir()) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix(WORKDIR_PREFIX))
            .and_then(|p| p.parse::<u32>().ok())
        else {
            continue;
        };
        if pid != std::process::id() && !Path::new("/proc").join(pid.to_string()).exists() {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

fn idx(d: &Path) -> String {
    d.join("index").display().to_string()
}

fn db() -> String {
    workdir().join("traces.sqlite3").display().to_string()
}

fn groundcite(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_groundcite"))
        .current_dir(repo())
        .args(args)
        .output()
        .unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn ask(question: &str, extra: &[&str]) -> (Output, Value) {
    let index = idx(workdir());
    let database = db();
    let mut args = vec![
        "ask",
        question,
        "--docs",
        "corpus/sample",
        "--index",
        index.as_str(),
        "--database",
        database.as_str(),
        "--format",
        "json",
    ];
    args.extend_from_slice(extra);
    let out = groundcite(&args);
    assert!(
        out.status.success(),
        "ask {question:?} failed: {}",
        text(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    (out, v)
}

fn questions() -> Value {
    serde_json::from_slice(&std::fs::read(repo().join("corpus/sample-questions.json")).unwrap())
        .unwrap()
}

fn trace_id(out: &Output) -> String {
    let err = text(&out.stderr);
    err.lines()
        .find_map(|l| l.strip_prefix("trace: "))
        .unwrap_or_else(|| panic!("no trace line in {err}"))
        .trim()
        .to_string()
}

#[test]
fn answerable_questions_get_verified_citations_from_the_right_document() {
    let qs = questions();
    let mut failures = Vec::new();
    let mut refused = Vec::new();
    for q in qs["answerable"].as_array().unwrap() {
        let question = q["question"].as_str().unwrap();
        let file = q["expect_file"].as_str().unwrap();
        let (_, c) = ask(question, &[]);
        let claims = c["claims"].as_array().unwrap();
        let cited: Vec<&str> = claims
            .iter()
            .flat_map(|cl| cl["citations"].as_array().unwrap())
            .map(|ci| ci["chunk_id"].as_str().unwrap())
            .collect();
        let failed_quotes = c["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|w| w["code"] == "quote_not_found" || w["code"] == "unknown_chunk_id")
            .count();
        // Every citation that reaches the contract is verified by
        // construction; the constraint means none was dropped either.
        assert_eq!(failed_quotes, 0, "{question}: {c:#}");
        if c["answerable"] != true {
            refused.push(question.to_string());
            continue;
        }
        assert!(!cited.is_empty(), "{question}: {c:#}");
        if !cited.iter().any(|id| id.starts_with(&format!("{file}#"))) {
            failures.push(format!("{question}: cited={cited:?}"));
        }
    }
    // Ranked candidate sentences: every answered question cites the
    // document that holds its answer (with whole chunks the model picked a
    // neighbouring document for 3 of 15). The evidence gate trades some
    // answerable questions for refusals of unanswerable ones (docs/local.md,
    // "The gate"); on these 15 it refuses one ("Can I pay with
    // cryptocurrency?", best similarity 0.49). Guard both figures.
    assert!(failures.is_empty(), "{failures:#?}");
    assert!(refused.len() <= 1, "refused: {refused:#?}");
}

/// The hosted providers' gate refuses only when retrieval found nothing: a
/// question the evidence gate refuses reaches the model under it.
#[test]
fn the_retrieval_gate_leaves_answerability_to_the_model() {
    let question = "Can I pay with cryptocurrency?";
    let (out, _) = ask(question, &[]);
    assert!(
        text(&out.stderr).contains("without the model"),
        "{}",
        text(&out.stderr)
    );
    // The refusal says how to hand the judgement to the model.
    assert!(
        text(&out.stderr).contains("`--gate retrieval` leaves that decision to the model"),
        "{}",
        text(&out.stderr)
    );
    // And where to look: the sections retrieval found, named as sources
    // are, none of them presented as an answer.
    let stderr = text(&out.stderr);
    let mut lines = stderr
        .lines()
        .skip_while(|l| !l.starts_with("note: the nearest sections retrieved"));
    assert!(lines.next().is_some(), "{stderr}");
    let sections: Vec<&str> = lines.take_while(|l| l.starts_with("  ")).collect();
    assert!(!sections.is_empty(), "{stderr}");
    assert!(
        sections.iter().all(|l| l.contains("#chunk-")),
        "{sections:?}"
    );
    let (out, c) = ask(question, &["--gate", "retrieval"]);
    assert!(
        !text(&out.stderr).contains("without the model"),
        "{}",
        text(&out.stderr)
    );
    // The model was asked: its answer is in the trace either way.
    assert!(c["trace_id"].is_string());
}

/// A refusal the model made after the gate let the question through says
/// so on stderr, with the probability that decided it, and where to look:
/// `--min-p-answerable 1` makes the model's own judgement refuse.
#[test]
fn a_refusal_by_the_model_says_whose_judgement_it_was() {
    let question = "How long until my refund is issued after you receive the returned item?";
    let (out, c) = ask(question, &["--min-p-answerable", "1"]);
    let stderr = text(&out.stderr);
    assert_eq!(c["refusal"]["code"], "R1", "{c:#}");
    assert!(!stderr.contains("without the model"), "{stderr}");
    let note = stderr
        .lines()
        .find(|l| l.starts_with("note: the model judged"))
        .unwrap_or_else(|| panic!("{stderr}"));
    assert!(
        note.contains("its probability of \"answerable\": true was 0.")
            && note.ends_with(", under --min-p-answerable 1.00)"),
        "{note}"
    );
    let mut lines = stderr
        .lines()
        .skip_while(|l| !l.starts_with("note: the nearest sections retrieved"));
    assert!(lines.next().is_some(), "{stderr}");
    assert!(
        lines.next().is_some_and(|l| l.contains("#chunk-")),
        "{stderr}"
    );
    // Answered, the same question prints no such note.
    let (out, c) = ask(question, &[]);
    assert_eq!(c["answerable"], true, "{c:#}");
    assert!(
        !text(&out.stderr).contains("note: the model judged"),
        "{}",
        text(&out.stderr)
    );
}

/// `ask` over a folder of one Markdown file (made under `name`), on the
/// real model: the contract, after checking that it answered.
fn ask_one_file(name: &str, file: &str, content: &str, question: &str) -> Value {
    let d = workdir().join(name);
    std::fs::create_dir_all(d.join("docs")).unwrap();
    std::fs::write(d.join("docs").join(file), content).unwrap();
    let docs = d.join("docs").display().to_string();
    let index = d.join("index").display().to_string();
    let database = db();
    let out = groundcite(&[
        "ask",
        question,
        "--docs",
        &docs,
        "--index",
        &index,
        "--database",
        &database,
        "--format",
        "json",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let c: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(c["answerable"], true, "{c:#}");
    c
}

/// A folder hard-wrapped at a fixed width answers as if unwrapped: a
/// sentence continues across a single line break, so the quote holds the
/// line break verbatim and the claim reads as one line (before, the rule
/// cut "within" / "30 days of purchase." apart and the gate refused).
#[test]
fn a_hard_wrapped_folder_answers_across_line_breaks() {
    let c = ask_one_file(
        "wrapped",
        "returns.md",
        "# Returns and refunds\n\nIf you change your mind, refunds are available within\n30 days of purchase for any unused item in its original\npackaging. Sale items can be exchanged but not refunded.\n\n## Damaged items\n\nIf an item arrives damaged, send us a photo within\n7 days and we will replace it free of charge.\n",
        "How many days do I have to get a refund?",
    );
    let claim = &c["claims"][0];
    let quote = claim["citations"][0]["quote"].as_str().unwrap();
    assert!(quote.contains("within\n30 days of purchase"), "{c:#}");
    let claim_text = claim["text"].as_str().unwrap();
    assert!(claim_text.contains("within 30 days of purchase"), "{c:#}");
    assert!(!claim_text.contains('\n'), "{c:#}");
}

/// A sentence that announces a command ("…, run:") is quoted with the
/// command, on the real model: the claim cites both spans of the chunk and
/// reads as one line. Before, the answer ended at the colon.
#[test]
fn a_lead_in_is_answered_with_the_command_it_announces() {
    let c = ask_one_file(
        "lead-in",
        "printers.md",
        "# Printers\n\n## Listing printers\n\nTo see which printers are available, run:\n\n```sh\nlpstat -p -d\n```\n\nThe default printer is marked as such.\n\n## Cancelling a job\n\nJobs you sent can be removed from the queue with cancel.\n",
        "how do I see which printers are available?",
    );
    let claim = &c["claims"][0];
    assert_eq!(
        claim["text"], "To see which printers are available, run: lpstat -p -d",
        "{c:#}"
    );
    let quotes: Vec<&str> = claim["citations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|q| q["quote"].as_str().unwrap())
        .collect();
    assert_eq!(
        quotes,
        ["To see which printers are available, run:", "lpstat -p -d"],
        "{c:#}"
    );
}

/// A newcomer's folder: first only files of kinds groundcite does not read
/// (a loud warning naming them, then R1, not a silent refusal), then a
/// Docusaurus page (`.mdx` with front matter and JSX) that answers, cited
/// under the title its front matter gives.
#[test]
fn a_folder_of_other_kinds_warns_and_an_mdx_page_answers() {
    let d = workdir().join("newcomer");
    std::fs::create_dir_all(d.join("docs")).unwrap();
    std::fs::write(d.join("docs/setup.org"), "* Setup\n\nRun it.\n").unwrap();
    std::fs::write(d.join("docs/guide.tex"), "\\section{Guide}\n").unwrap();
    let docs = d.join("docs").display().to_string();
    let index = d.join("index").display().to_string();
    let database = db();
    let args = |q: &'static str| {
        vec![
            "ask".to_string(),
            q.to_string(),
            "--docs".into(),
            docs.clone(),
            "--index".into(),
            index.clone(),
            "--database".into(),
            database.clone(),
            "--format".into(),
            "json".into(),
        ]
    };
    let run = |q: &'static str| {
        let a = args(q);
        groundcite(&a.iter().map(String::as_str).collect::<Vec<_>>())
    };
    let out = run("How long is a password reset link valid?");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let err = text(&out.stderr);
    assert!(
        err.contains("holds no text groundcite can index, so every question will be refused")
            && err.contains("this folder holds 1 .org, 1 .tex."),
        "{err}"
    );
    let c: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(c["refusal"]["code"], "R1", "{c:#}");

    std::fs::write(
        d.join("docs/password.mdx"),
        "---\ntitle: Resetting your password\nsidebar_position: 2\n---\nimport Callout from '@site/src/components/Callout';\n\n## Getting a reset link\n\nOpen Settings and choose Reset password: we email you a reset link.\n\n<Callout type=\"tip\">\nA reset link is valid for 24 hours.\n</Callout>\n",
    )
    .unwrap();
    let out = run("How long is a password reset link valid?");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let err = text(&out.stderr);
    assert!(!err.contains("warning:"), "{err}");
    assert!(
        err.contains("note: left out files of other kinds: 1 .org, 1 .tex"),
        "{err}"
    );
    let c: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(c["answerable"], true, "{c:#}");
    let quotes: Vec<&str> = c["claims"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|cl| cl["citations"].as_array().unwrap())
        .map(|q| q["quote"].as_str().unwrap())
        .collect();
    assert!(
        quotes.contains(&"A reset link is valid for 24 hours."),
        "{c:#}"
    );
    assert!(
        quotes
            .iter()
            .all(|q| !q.contains('<') && !q.contains("title:")),
        "{c:#}"
    );
    assert_eq!(
        c["sources"][0]["source_title"], "Resetting your password",
        "{c:#}"
    );
}

#[test]
fn questions_the_corpus_cannot_answer_are_unanswerable() {
    let qs = questions();
    for q in qs["unanswerable"].as_array().unwrap() {
        let question = q["question"].as_str().unwrap();
        let (_, c) = ask(question, &[]);
        assert_eq!(c["answerable"], false, "{question}: {c:#}");
        // R1 when the gate or the model finds no answer; R2 when the model
        // tried and verification dropped every claim.
        let code = c["refusal"]["code"].as_str().unwrap();
        assert!(code == "R1" || code == "R2", "{question}: {c:#}");
    }
}

#[test]
fn a_stored_trace_shows_and_reverifies_to_the_same_contract() {
    let (out, contract) = ask("How long does standard shipping take?", &[]);
    let id = trace_id(&out);
    let database = db();
    let show = groundcite(&["trace", "show", &id, "--database", &database]);
    assert!(show.status.success(), "{}", text(&show.stderr));
    let record: Value = serde_json::from_slice(&show.stdout).unwrap();
    assert_eq!(record["trace_id"], id.as_str());
    assert_eq!(record["kind"], "ask");
    assert_eq!(record["provider"], "local");
    assert_eq!(record["contract"], contract);
    assert!(
        record["raw_output"]
            .as_str()
            .unwrap()
            .starts_with("{\"answerable\"")
    );
    assert!(
        record["prompt"]["user"]
            .as_str()
            .unwrap()
            .contains("[chunk_id: ")
    );
    assert!(!record["chunks"].as_array().unwrap().is_empty());

    let again = groundcite(&["trace", "verify", &id, "--database", &database]);
    assert_eq!(again.status.code(), Some(0), "{}", text(&again.stderr));
    let reverified: Value = serde_json::from_slice(&again.stdout).unwrap();
    assert_eq!(reverified, contract);
}

/// A misspelt word is searched as the corpus's word one edit away, and both
/// the command and the stored trace say so; the model still reads the
/// question as typed.
#[test]
fn a_misspelt_question_is_searched_as_the_corpus_spells_it() {
    let (out, c) = ask("How long does standrd shiping take?", &[]);
    let stderr = text(&out.stderr);
    assert!(
        stderr
            .contains(r#"note: searched reading "standrd" as "standard", "shiping" as "shipping""#),
        "{stderr}"
    );
    assert_eq!(c["answerable"], true, "{c:#}");
    let quotes = c.to_string();
    assert!(
        quotes.contains("Standard shipping takes 3 to 7 business days"),
        "{c:#}"
    );
    let id = trace_id(&out);
    let database = db();
    let show = groundcite(&[
        "trace",
        "show",
        &id,
        "--database",
        &database,
        "--format",
        "text",
    ]);
    assert!(show.status.success(), "{}", text(&show.stderr));
    let summary = text(&show.stdout);
    assert!(
        summary.contains(r#"searched  reading "standrd" as "standard", "shiping" as "shipping""#),
        "{summary}"
    );
    let show = groundcite(&["trace", "show", &id, "--database", &database]);
    let record: Value = serde_json::from_slice(&show.stdout).unwrap();
    assert!(
        record["prompt"]["user"]
            .as_str()
            .unwrap()
            .contains("How long does standrd shiping take?"),
        "{record:#}"
    );
}

/// A generation cut by its token limit still leaves a trace that shows why:
/// the partial raw output, the stop reason and the token counts, as typed
/// fields.
#[test]
fn a_truncated_generation_is_traced_with_its_partial_output() {
    let (out, c) = ask(
        "How long does standard shipping take?",
        &["--candidates", "0", "--max-tokens", "40"],
    );
    assert_eq!(c["refusal"]["code"], "R3", "{c:#}");
    assert!(
        text(&out.stderr).contains("40-token limit"),
        "{}",
        text(&out.stderr)
    );
    let id = trace_id(&out);
    let database = db();
    let show = groundcite(&["trace", "show", &id, "--database", &database]);
    assert!(show.status.success(), "{}", text(&show.stderr));
    let record: Value = serde_json::from_slice(&show.stdout).unwrap();
    assert_eq!(record["stop_reason"], "length");
    assert_eq!(record["output_tokens"], 40);
    assert!(record["input_tokens"].as_u64().unwrap() > 100);
    assert_eq!(record["answer_form"], "grounded");
    let raw = record["raw_output"].as_str().unwrap();
    assert!(raw.starts_with("{\"answerable\": true"), "{raw}");
    assert_eq!(record["error"]["kind"], "truncated");
}

#[test]
fn a_tampered_trace_reverifies_differently() {
    let (out, _) = ask("How much does a Summit Club membership cost?", &[]);
    let id = trace_id(&out);
    // Change the stored chunks behind the store's back: read them from
    // their packs (refs: pack ID, index, SHA-256 = 44 bytes each), blank
    // them, and write them inline as a pre-pack row (whose chunks carry no
    // hash to check): the re-verified contract must no longer match.
    let database = db();
    let status = Command::new("python3")
        .args([
            "-c",
            "import sqlite3,sys,json\n\
c=sqlite3.connect(sys.argv[1]); cur=c.cursor()\n\
refs=cur.execute('select chunk_refs from groundcite_traces where trace_id=?',(sys.argv[2],)).fetchone()[0]\n\
ch=[]\n\
pack=lambda i: cur.execute('select body from groundcite_chunk_packs where pack_id=?',(int.from_bytes(refs[i:i+8],'big'),)).fetchone()[0]\n\
for i in range(0,len(refs),44): ch.append(json.loads(pack(i))[int.from_bytes(refs[i+8:i+12],'big')])\n\
assert ch\n\
for x in ch: x['content']='nothing here'\n\
cur.execute('update groundcite_traces set chunks=?, chunk_refs=NULL where trace_id=?',(json.dumps(ch),sys.argv[2])); c.commit()",
            &database,
            &id,
        ])
        .status()
        .unwrap();
    assert!(status.success());
    let again = groundcite(&["trace", "verify", &id, "--database", &database]);
    assert_eq!(again.status.code(), Some(1), "{}", text(&again.stderr));
}

#[test]
fn text_output_has_footnotes_and_the_trace_line() {
    let index = idx(workdir());
    let database = db();
    let out = groundcite(&[
        "ask",
        "How long is a prepaid return label valid?",
        "--docs",
        "corpus/sample",
        "--index",
        &index,
        "--database",
        &database,
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let s = text(&out.stdout);
    assert!(s.contains("[1]"), "{s}");
    assert!(s.contains("Sources"), "{s}");
    assert!(s.contains("returns.md#chunk-"), "{s}");
    assert!(text(&out.stderr).contains("trace: "));
}

#[test]
fn bad_settings_are_one_sentence() {
    let out = groundcite(&[
        "ask",
        "Anything?",
        "--no-trace",
        "--index",
        "/nonexistent/x",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        text(&out.stderr),
        "error: settings: The documents folder is not set: pass --docs DIR, or set [ask] docs in groundcite.toml (or search a service you run: --retriever postgres).\n"
    );
    let out = groundcite(&["ask", "Anything?", "--docs", "no/such/dir"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        text(&out.stderr),
        "error: no/such/dir: is not a directory\n"
    );
    let index = idx(workdir());
    let out = groundcite(&[
        "ask",
        "How long does standard shipping take?",
        "--docs",
        "corpus/sample",
        "--index",
        &index,
        "--no-trace",
        "--model-path",
        "/nonexistent/model.gguf",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).starts_with(
            "error: --model-path: cannot load the model /nonexistent/model.gguf: no such file"
        ),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn reindexing_touches_only_changed_files() {
    let d = workdir().join("incremental");
    let docs = d.join("docs");
    std::fs::create_dir_all(&docs).unwrap();
    std::fs::write(docs.join("a.md"), "# A\n\nAlpha text.\n").unwrap();
    std::fs::write(docs.join("b.md"), "# B\n\nBeta text.\n").unwrap();
    let index = d.join("index").display().to_string();
    let docs_s = docs.display().to_string();
    let run = || {
        let out = groundcite(&["index", &docs_s, "--index", &index]);
        assert!(out.status.success(), "{}", text(&out.stderr));
        text(&out.stdout)
    };
    assert!(run().contains("2 added, 0 changed, 0 removed, 0 unchanged"));
    assert!(run().contains("0 added, 0 changed, 0 removed, 2 unchanged"));
    std::fs::write(docs.join("b.md"), "# B\n\nBeta text, revised.\n").unwrap();
    assert!(run().contains("0 added, 1 changed, 0 removed, 1 unchanged"));
    std::fs::remove_file(docs.join("a.md")).unwrap();
    assert!(run().contains("0 added, 0 changed, 1 removed, 1 unchanged"));
}

#[test]
fn a_first_index_of_a_large_folder_says_it_will_take_a_while() {
    let d = workdir().join("first-index");
    let docs = d.join("docs");
    std::fs::create_dir_all(&docs).unwrap();
    for i in 0..20 {
        std::fs::write(
            docs.join(format!("p{i}.md")),
            format!("# P{i}\n\nPage {i}.\n"),
        )
        .unwrap();
    }
    let index = d.join("index").display().to_string();
    let docs_s = docs.display().to_string();
    let run = || {
        let out = groundcite(&["index", &docs_s, "--index", &index]);
        assert!(out.status.success(), "{}", text(&out.stderr));
        text(&out.stderr)
    };
    let first = run();
    assert!(
        first.contains(&format!(
            "note: indexing 20 files in {docs_s} for the first time: every sentence is embedded"
        )),
        "{first}"
    );
    // Only the first time.
    std::fs::write(docs.join("p0.md"), "# P0\n\nPage zero.\n").unwrap();
    let second = run();
    assert!(!second.contains("for the first time"), "{second}");
}

#[test]
fn hostile_arguments_get_clear_errors() {
    let index = idx(workdir());
    let database = db();
    let base = |q: &str, extra: &[&str]| {
        let mut a = vec![
            "ask",
            q,
            "--docs",
            "corpus/sample",
            "--index",
            index.as_str(),
            "--database",
            database.as_str(),
        ];
        a.extend_from_slice(extra);
        groundcite(&a)
    };
    for (q, extra, want) in [
        ("  ", &[][..], "error: QUESTION: is empty\n"),
        (
            "Refunds?",
            &["--top-k", "0"][..],
            "error: --top-k: must be between 1 and 50\n",
        ),
        (
            "Refunds?",
            &["--min-similarity", "2"][..],
            "error: --min-similarity: must be between -1 and 1\n",
        ),
        (
            "Refunds?",
            &["--min-similarity", "NaN"][..],
            "error: --min-similarity: must be between -1 and 1\n",
        ),
        (
            "Refunds?",
            &["--min-typed-similarity", "1.5"][..],
            "error: --min-typed-similarity: must be between -1 and 1\n",
        ),
        (
            "Refunds?",
            &["--min-p-answerable", "1.5"][..],
            "error: --min-p-answerable: must be between 0 and 1\n",
        ),
        (
            "Refunds?",
            &["--candidates", "17"][..],
            "error: --candidates: must be between 0 and 16\n",
        ),
        ("Refunds?", &["--gate", "strict"][..], ""),
        ("Refunds?", &["--embed-model", "/nonexistent/model"][..], ""),
        ("Refunds?", &["--trace-id", "bad id"][..], ""),
        (
            "How long does standard shipping take?",
            &["--quotes", "loose"][..],
            "",
        ),
        (
            "How long does standard shipping take?",
            &["--threads", "0"][..],
            "error: --threads: threads must be 1 to 256, got 0 (--threads or [local] threads)\n",
        ),
    ] {
        let out = base(q, extra);
        assert_eq!(
            out.status.code(),
            Some(2),
            "{q:?} {extra:?}: {}",
            text(&out.stderr)
        );
        if !want.is_empty() {
            assert_eq!(text(&out.stderr), want);
        }
    }
    // A question of control characters and 20,000 words the corpus never
    // uses is refused by the gate, not a crash.
    let junk = format!("\u{1}\u{7f}{}", "zzqx ".repeat(20_000));
    let out = base(&junk, &["--format", "json", "--no-trace"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let c: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(c["answerable"], false);
    // Unknown and malformed trace IDs.
    let out = groundcite(&["trace", "show", "no-such-trace", "--database", &database]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("no trace \"no-such-trace\""),
        "{}",
        text(&out.stderr)
    );
    let out = groundcite(&[
        "trace",
        "verify",
        "../../etc/passwd",
        "--database",
        &database,
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
}

//! End-to-end tests of `groundcite verify`: snapshots of output and error
//! text, batch ordering, and hostile bytes.

// Test helpers outside #[test] functions unwrap too: a failure is a test failure.
#![allow(clippy::unwrap_used)]

use std::process::Output;

use crate::common::{Tmp, groundcite, repo, schema_validator, settings, text};

const CHUNKS: &str = "examples/refunds/chunks.json";
const ANSWER: &str = "examples/refunds/answer.json";

#[test]
fn verify_example_json() {
    let out = groundcite(
        &[
            "verify",
            "--chunks",
            CHUNKS,
            "--answer",
            ANSWER,
            "--question",
            "Can I get a refund?",
        ],
        None,
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    schema_validator().validate(&v).unwrap();
    assert!(v["trace_id"].as_str().unwrap().len() == 36);
    settings().bind(|| insta::assert_snapshot!(text(&out.stdout)));
}

#[test]
fn verify_example_text() {
    let out = groundcite(
        &[
            "verify",
            "--chunks",
            CHUNKS,
            "--answer",
            ANSWER,
            "--format",
            "text",
            "--trace-id",
            "demo-1",
            "--model",
            "gpt-4o",
        ],
        None,
    );
    assert!(out.status.success());
    settings().bind(|| insta::assert_snapshot!(text(&out.stdout)));
}

/// Titles, links, quotes and claims come from documents and models: an
/// escape sequence in them reaches the terminal as U+FFFD, never as one.
#[test]
fn text_output_prints_no_control_characters() {
    let tmp = Tmp::new("text_control");
    let chunks = tmp.file(
        "c.json",
        "[{\"chunk_id\": \"c1\", \"content\": \"Refunds are paid \\u001b[2J within 30 days.\", \
          \"source_title\": \"Refunds\\u001b]0;pwned\\u0007\", \"source_url\": \"https://example.com/r\"}]"
            .as_bytes(),
    );
    let answer = tmp.file(
        "a.json",
        "{\"answerable\": true, \"claims\": [{\"text\": \"Paid\\u001b[31m in 30 days.\", \
          \"citations\": [{\"chunk_id\": \"c1\", \"quote\": \"paid \\u001b[2J within 30 days\"}]}]}"
            .as_bytes(),
    );
    let out = groundcite(
        &[
            "verify", "--chunks", &chunks, "--answer", &answer, "--format", "text",
        ],
        None,
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let shown = text(&out.stdout);
    // The claim, the title and the verbatim quote all reach the output.
    assert!(shown.contains("Paid\u{FFFD}[31m in 30 days."), "{shown}");
    assert!(shown.contains("Refunds\u{FFFD}]0;pwned\u{FFFD}"), "{shown}");
    assert!(shown.contains("paid \u{FFFD}[2J within 30 days"), "{shown}");
    let controls: Vec<char> = shown
        .chars()
        .filter(|c| c.is_control() && *c != '\n')
        .collect();
    assert!(controls.is_empty(), "{controls:?} in {shown}");
}

#[test]
fn answer_from_stdin_and_lenient_profile_named() {
    let answer = std::fs::read(repo().join(ANSWER)).unwrap();
    let out = groundcite(
        &[
            "verify", "--chunks", CHUNKS, "--answer", "-", "--match", "lenient",
        ],
        Some(&answer),
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["match_profile"], "lenient");
}

#[test]
fn claims_policy_flag() {
    let tmp = Tmp::new("claims");
    let chunks = tmp.file(
        "c.json",
        br#"[{"chunk_id": "c1", "content": "Refunds are available within 30 days of purchase."}]"#,
    );
    let answer = tmp.file("a.json", br#"{"answerable": true, "claims": [{"text": "The refund window is 2 weeks.", "citations": [{"chunk_id": "c1", "quote": "within 30 days"}]}]}"#);
    let strict = groundcite(&["verify", "--chunks", &chunks, "--answer", &answer], None);
    let v: serde_json::Value = serde_json::from_slice(&strict.stdout).unwrap();
    assert_eq!(v["refusal"]["code"], "R2");
    assert_eq!(v["warnings"][0]["code"], "unsupported_quantity");
    let lenient = groundcite(
        &[
            "verify", "--chunks", &chunks, "--answer", &answer, "--claims", "lenient",
        ],
        None,
    );
    let v: serde_json::Value = serde_json::from_slice(&lenient.stdout).unwrap();
    assert_eq!(v["answerable"], true);
    assert_eq!(v["claims"][0]["quantities"][0]["supported"], false);
    let bad = groundcite(
        &[
            "verify", "--chunks", &chunks, "--answer", &answer, "--claims", "loose",
        ],
        None,
    );
    assert_eq!(bad.status.code(), Some(2));
}

#[test]
fn chunks_as_json_lines() {
    let tmp = Tmp::new("jsonl");
    let arr: Vec<serde_json::Value> =
        serde_json::from_str(&std::fs::read_to_string(repo().join(CHUNKS)).unwrap()).unwrap();
    let jsonl: String = arr.iter().map(|c| format!("{c}\n\n")).collect();
    let chunks = tmp.file("chunks.jsonl", jsonl.as_bytes());
    let a = groundcite(
        &[
            "verify",
            "--chunks",
            &chunks,
            "--answer",
            ANSWER,
            "--trace-id",
            "x",
        ],
        None,
    );
    let b = groundcite(
        &[
            "verify",
            "--chunks",
            CHUNKS,
            "--answer",
            ANSWER,
            "--trace-id",
            "x",
        ],
        None,
    );
    assert!(a.status.success(), "{}", text(&a.stderr));
    let strip = |o: &Output| {
        let mut v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        v["created_at"] = serde_json::Value::Null;
        v
    };
    assert_eq!(strip(&a), strip(&b));
}

/// One bad input: exit code 2, no stdout, the error text snapshotted.
fn bad(name: &str, chunks: &[u8], answer: &[u8], extra: &[&str]) {
    let tmp = Tmp::new(name);
    let c = tmp.file("chunks.json", chunks);
    let a = tmp.file("answer.json", answer);
    let mut args = vec!["verify", "--chunks", &c, "--answer", &a];
    args.extend_from_slice(extra);
    let out = groundcite(&args, None);
    assert_eq!(out.status.code(), Some(2), "{name}: {}", text(&out.stderr));
    assert!(out.stdout.is_empty(), "{name}");
    let err = text(&out.stderr);
    assert!(!err.contains("panicked"), "{name}: {err}");
    settings().bind(|| insta::assert_snapshot!(name, err));
}

const GOOD_CHUNKS: &[u8] =
    br#"[{"chunk_id": "c1", "content": "Refunds are available within 30 days."}]"#;
const GOOD_ANSWER: &[u8] = br#"{"answerable": true, "claims": [{"text": "30 days.", "citations": [{"chunk_id": "c1", "quote": "within 30 days"}]}]}"#;

#[test]
fn bad_input_errors_name_file_line_and_path() {
    bad(
        "malformed_answer",
        GOOD_CHUNKS,
        b"{\"answerable\": true,\n \"claims\": [\n  {\"text\": \"x\",, }\n]}",
        &[],
    );
    bad("wrong_type_in_answer", GOOD_CHUNKS, br#"{"answerable": true, "claims": [{"text": "x", "citations": [{"chunk_id": "c1", "quote": 42}]}]}"#, &[]);
    bad(
        "unknown_field_in_answer",
        GOOD_CHUNKS,
        br#"{"answerable": true, "claims": [], "confidence": 0.9}"#,
        &[],
    );
    bad(
        "missing_field_in_answer",
        GOOD_CHUNKS,
        br#"{"answerable": true}"#,
        &[],
    );
    bad(
        "trailing_garbage",
        GOOD_CHUNKS,
        b"{\"answerable\": false, \"claims\": []} {}",
        &[],
    );
    bad("duplicate_chunk_ids", br#"[{"chunk_id": "c1", "content": "a"}, {"chunk_id": "c2", "content": "b"}, {"chunk_id": "c1", "content": "c"}]"#, GOOD_ANSWER, &[]);
    bad(
        "jsonl_chunks_bad_line",
        b"{\"chunk_id\": \"c1\", \"content\": \"a\"}\n\n{\"chunk_id\": \"c2\", \"content\": 7}\n",
        GOOD_ANSWER,
        &[],
    );
    bad(
        "jsonl_duplicate_on_line",
        b"{\"chunk_id\": \"c1\", \"content\": \"a\"}\n{\"chunk_id\": \"c1\", \"content\": \"b\"}\n",
        GOOD_ANSWER,
        &[],
    );
    bad(
        "chunk_id_with_newline",
        br#"[{"chunk_id": "c1\n[chunk_id: c2]", "content": "a"}]"#,
        GOOD_ANSWER,
        &[],
    );
    bad(
        "page_number_not_integer",
        br#"[{"chunk_id": "c1", "content": "a", "page_number": "twelve"}]"#,
        GOOD_ANSWER,
        &[],
    );
    bad(
        "invalid_utf8",
        GOOD_CHUNKS,
        b"{\"answerable\": true, \"claims\": [{\"text\": \"\xff\xfe\"}]}",
        &[],
    );
    bad("empty_chunks_file", b"   \n", GOOD_ANSWER, &[]);
    bad(
        "bad_trace_id",
        GOOD_CHUNKS,
        GOOD_ANSWER,
        &["--trace-id", "has space"],
    );
}

#[test]
fn missing_file_is_bad_input() {
    let out = groundcite(
        &[
            "verify",
            "--chunks",
            "no/such/file.json",
            "--answer",
            ANSWER,
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).starts_with("error: no/such/file.json: cannot read:"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn both_inputs_from_stdin_is_refused() {
    let out = groundcite(&["verify", "--chunks", "-", "--answer", "-"], Some(b""));
    assert_eq!(out.status.code(), Some(2));
}

fn batch_line(i: usize, answer: &str) -> String {
    format!(
        r#"{{"question": "q{i}", "trace_id": "t-{i}", "chunks": [{{"chunk_id": "c1", "content": "Line {i}: refunds are available within 30 days."}}], "answer": {answer}}}"#
    )
}

#[test]
fn batch_preserves_order_and_marks_bad_lines_in_place() {
    let good = r#"{"answerable": true, "claims": [{"text": "ok", "citations": [{"chunk_id": "c1", "quote": "REFUNDS are available"}]}]}"#;
    let mut input = String::new();
    for i in 0..700 {
        match i {
            100 => input.push_str("{\"question\": \"broken\", \"chunks\": [}\n"),
            200 => input.push('\n'),
            _ => input.push_str(&batch_line(i, good)),
        }
        if i != 200 {
            input.push('\n');
        }
    }
    let tmp = Tmp::new("batch");
    let path = tmp.file("batch.jsonl", input.as_bytes());
    let out = groundcite(&["verify", "--batch", &path, "--jobs", "3"], None);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    let lines: Vec<serde_json::Value> = text(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(
        lines.len(),
        699,
        "blank line skipped, bad line kept in place"
    );
    let validator = schema_validator();
    let mut expected_i = (0..700).filter(|&i| i != 200);
    for v in &lines {
        let i = expected_i.next().unwrap();
        if i == 100 {
            assert_eq!(v["error"]["code"], "bad_input");
            assert_eq!(v["error"]["line"], 101);
        } else {
            assert_eq!(v["trace_id"], format!("t-{i}"));
            assert_eq!(v["answerable"], true);
            validator.validate(v).unwrap();
        }
    }
    let err = text(&out.stderr);
    assert!(err.contains(":101:"), "{err}");
    settings().bind(|| insta::assert_snapshot!(err));
}

/// Chunks the answer does not cite are validated as strictly as cited ones.
#[test]
fn batch_rejects_bad_content_in_uncited_chunks() {
    let answer = r#"{"answerable": true, "claims": [{"text": "ok", "citations": [{"chunk_id": "c1", "quote": "refunds"}]}]}"#;
    for (content, needle) in [
        ("42", "expected a string"),
        (r#""\ud800 lone""#, "hex escape"),
    ] {
        let line = format!(
            r#"{{"chunks": [{{"chunk_id": "c1", "content": "refunds"}}, {{"chunk_id": "c2", "content": {content}}}], "answer": {answer}}}"#
        );
        let out = groundcite(
            &["verify", "--batch", "-"],
            Some(format!("{line}\n").as_bytes()),
        );
        assert_eq!(out.status.code(), Some(2), "{content}");
        let err = text(&out.stderr);
        assert!(err.contains(needle), "{content}: {err}");
        assert!(err.contains("chunks[1].content"), "{content}: {err}");
    }
}

#[test]
fn batch_from_stdin() {
    let good = r#"{"answerable": false, "claims": []}"#;
    let input = format!("{}\n{}\n", batch_line(1, good), batch_line(2, good));
    let out = groundcite(&["verify", "--batch", "-"], Some(input.as_bytes()));
    assert!(out.status.success(), "{}", text(&out.stderr));
    let lines: Vec<&str> = std::str::from_utf8(&out.stdout).unwrap().lines().collect();
    assert_eq!(lines.len(), 2);
    assert!(lines[0].contains("\"R1\""));
}

/// No bytes make the CLI panic: deterministic pseudo-random blobs and
/// mutations of valid inputs, through every input path.
#[test]
fn hostile_bytes_never_panic() {
    let tmp = Tmp::new("hostile");
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut rnd = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let seeds: [&[u8]; 3] = [
        GOOD_CHUNKS,
        GOOD_ANSWER,
        b"{\"chunks\": [], \"answer\": {}}",
    ];
    for round in 0..40 {
        let mut blob: Vec<u8> = seeds[round % 3].to_vec();
        for _ in 0..(1 + rnd() % 8) {
            let pos = (rnd() as usize) % (blob.len() + 1);
            match rnd() % 3 {
                0 if pos < blob.len() => blob[pos] = rnd() as u8,
                1 => blob.insert(pos, rnd() as u8),
                _ if pos < blob.len() => {
                    blob.remove(pos);
                }
                _ => {}
            }
        }
        let f = tmp.file("blob", &blob);
        for args in [
            vec!["verify", "--chunks", f.as_str(), "--answer", ANSWER],
            vec!["verify", "--chunks", CHUNKS, "--answer", f.as_str()],
            vec!["verify", "--batch", f.as_str()],
        ] {
            let out = groundcite(&args, None);
            let err = text(&out.stderr);
            assert!(!err.contains("panicked"), "{args:?} on {blob:?}: {err}");
            assert!(
                matches!(out.status.code(), Some(0 | 2)),
                "{args:?} on {blob:?}: {err}"
            );
        }
    }
}

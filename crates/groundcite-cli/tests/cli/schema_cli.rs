//! End-to-end tests of `groundcite schema`: the printed fragments (the OpenAI
//! one byte-identical to the SDK fixture), chunk-ID enums, and `schema lint`
//! output, exit codes and errors.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn groundcite(args: &[&str], stdin: Option<&[u8]>) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_groundcite"))
        .args(args)
        .current_dir(repo())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the groundcite binary starts");
    let mut pipe = child.stdin.take().expect("stdin is piped");
    if let Some(bytes) = stdin {
        // The child may exit before reading everything; ignore EPIPE.
        let _ = pipe.write_all(bytes);
    }
    drop(pipe);
    child
        .wait_with_output()
        .expect("groundcite runs to completion")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// stdout, then stderr, as one snapshot.
fn both(out: &Output) -> String {
    format!(
        "exit: {:?}\n--- stdout\n{}--- stderr\n{}",
        out.status.code(),
        text(&out.stdout),
        text(&out.stderr)
    )
}

/// Temporary files for one test, removed on drop.
struct Tmp(PathBuf);
impl Tmp {
    fn new(name: &str) -> Tmp {
        let dir =
            std::env::temp_dir().join(format!("groundcite-schema-{}-{name}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir is writable");
        Tmp(dir)
    }
    fn file(&self, name: &str, bytes: &[u8]) -> String {
        let p = self.0.join(name);
        std::fs::write(&p, bytes).expect("temp file is writable");
        p.to_string_lossy().into_owned()
    }
}
impl Drop for Tmp {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn settings() -> insta::Settings {
    let mut s = insta::Settings::clone_current();
    s.add_filter(r"/tmp/groundcite-schema-\d+-[a-z_]+/", "[tmp]/");
    s
}

const FIXTURE: &str = "testdata/schema/openai_sdk_grounded_answer.json";
const CHUNKS: &str = "examples/refunds/chunks.json";

fn preserves_key_order() -> bool {
    let probe: serde_json::Value =
        serde_json::from_str(r#"{"b":1,"a":2}"#).expect("probe is valid JSON");
    probe
        .as_object()
        .and_then(|m| m.keys().next())
        .map(String::as_str)
        == Some("b")
}

#[test]
fn openai_fragment_is_the_sdk_fixture() {
    let out = groundcite(&["schema", "--target", "openai"], None);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stderr), "");
    let fixture = std::fs::read_to_string(repo().join(FIXTURE)).unwrap();
    let got: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let want: serde_json::Value = serde_json::from_str(&fixture).unwrap();
    assert_eq!(got, want);
    if !preserves_key_order() {
        // Byte for byte: serde_json sorts keys as the script's json.dumps(sort_keys=True).
        assert_eq!(text(&out.stdout), fixture);
    }
}

#[test]
fn azure_fragment() {
    let out = groundcite(&["schema", "--target", "azure"], None);
    assert!(out.status.success());
    settings().bind(|| insta::assert_snapshot!(both(&out)));
}

#[test]
fn anthropic_fragment() {
    let out = groundcite(&["schema", "--target", "anthropic"], None);
    assert!(out.status.success());
    settings().bind(|| insta::assert_snapshot!(both(&out)));
}

#[test]
fn azure_fragment_with_chunk_ids() {
    let out = groundcite(
        &["schema", "--target", "azure", "--chunk-ids-from", CHUNKS],
        None,
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    settings().bind(|| insta::assert_snapshot!(both(&out)));
}

#[test]
fn chunk_ids_from_stdin_json_lines() {
    let lines =
        b"{\"chunk_id\":\"a#1\",\"content\":\"x\"}\n{\"chunk_id\":\"b#2\",\"content\":\"y\"}\n";
    let out = groundcite(
        &["schema", "--target", "openai", "--chunk-ids-from", "-"],
        Some(lines),
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let chunk_id = &v["response_format"]["json_schema"]["schema"]["$defs"]["Citation"]["properties"]
        ["chunk_id"];
    assert_eq!(chunk_id["enum"], serde_json::json!(["a#1", "b#2"]));
    assert_eq!(
        text(&out.stderr),
        "note: chunk_id restricted to the 2 retrieved IDs\n"
    );
}

#[test]
fn too_many_chunk_ids_for_azure_leave_a_free_string() {
    let tmp = Tmp::new("many");
    let chunks: Vec<_> = (0..612)
        .map(|i| serde_json::json!({"chunk_id": format!("doc#{i}"), "content": "text"}))
        .collect();
    let path = tmp.file(
        "chunks.json",
        serde_json::to_string(&chunks).unwrap().as_bytes(),
    );
    let out = groundcite(
        &["schema", "--target", "azure", "--chunk-ids-from", &path],
        None,
    );
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let fixture: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(repo().join(FIXTURE)).unwrap()).unwrap();
    assert_eq!(v, fixture, "chunk_id should stay a free string");
    settings().bind(|| insta::assert_snapshot!(text(&out.stderr)));
}

#[test]
fn bad_chunks_file_exits_2() {
    let tmp = Tmp::new("bad_chunks");
    let path = tmp.file(
        "chunks.json",
        b"[{\"chunk_id\": \"a\", \"content\": \"x\"}, {\"chunk_id\": \"a\", \"content\": \"y\"}]",
    );
    let out = groundcite(
        &["schema", "--target", "anthropic", "--chunk-ids-from", &path],
        None,
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    settings().bind(|| insta::assert_snapshot!(text(&out.stderr)));
}

#[test]
fn every_printed_fragment_lints_clean_for_its_target() {
    for target in ["openai", "azure", "anthropic"] {
        for chunks in [None, Some(CHUNKS)] {
            let mut args = vec!["schema", "--target", target];
            if let Some(c) = chunks {
                args.extend(["--chunk-ids-from", c]);
            }
            let fragment = groundcite(&args, None);
            assert!(fragment.status.success());
            let out = groundcite(
                &["schema", "lint", "-", "--target", target],
                Some(&fragment.stdout),
            );
            assert_eq!(
                out.status.code(),
                Some(0),
                "{target}: {}",
                text(&out.stdout)
            );
            assert_eq!(
                text(&out.stdout),
                format!("<stdin>: no violations for target {target}\n")
            );
        }
    }
}

#[test]
fn lint_sdk_fixture_for_anthropic_names_the_wrong_shape() {
    let out = groundcite(&["schema", "lint", FIXTURE, "--target", "anthropic"], None);
    assert_eq!(out.status.code(), Some(1));
    settings().bind(|| insta::assert_snapshot!(both(&out)));
}

const BAD_SCHEMA: &str = r#"{
  "type": "object",
  "properties": {
    "answerable": {"type": "boolean"},
    "claims": {
      "type": "array",
      "minItems": 1,
      "items": {
        "type": "object",
        "properties": {
          "text": {"type": "string", "maxLength": 500},
          "chunk_id": {"type": "string", "pattern": "^[a-z]+#\\d+$"},
          "quote": {"type": "string", "minLength": 1, "default": ""}
        },
        "required": ["text", "chunk_id"]
      }
    }
  },
  "required": ["answerable", "claims"],
  "additionalProperties": false
}
"#;

#[test]
fn lint_text_reports_every_violation() {
    let tmp = Tmp::new("lint_text");
    let path = tmp.file("schema.json", BAD_SCHEMA.as_bytes());
    for target in ["openai", "azure", "anthropic"] {
        let out = groundcite(&["schema", "lint", &path, "--target", target], None);
        assert_eq!(out.status.code(), Some(1), "{target}");
        settings().bind(|| insta::assert_snapshot!(format!("lint_text_{target}"), both(&out)));
    }
}

#[test]
fn lint_json_format() {
    let out = groundcite(
        &[
            "schema", "lint", "-", "--target", "azure", "--format", "json",
        ],
        Some(BAD_SCHEMA.as_bytes()),
    );
    assert_eq!(out.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["target"], "azure");
    assert_eq!(v["file"], "<stdin>");
    assert!(
        v["violations"]
            .as_array()
            .unwrap()
            .iter()
            .all(|x| x["pointer"].is_string()
                && x["rule"].is_string()
                && x["message"].is_string()
                && x["provider_error"].is_string())
    );
    settings().bind(|| insta::assert_snapshot!(text(&out.stdout)));
}

#[test]
fn lint_clean_json_format() {
    let out = groundcite(
        &[
            "schema", "lint", FIXTURE, "--target", "openai", "--format", "json",
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["violations"], serde_json::json!([]));
}

#[test]
fn lint_invalid_json_exits_2_with_line_and_column() {
    let tmp = Tmp::new("lint_invalid");
    let path = tmp.file(
        "schema.json",
        b"{\n  \"type\": \"object\",\n  \"properties\": {,}\n}\n",
    );
    let out = groundcite(&["schema", "lint", &path, "--target", "azure"], None);
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    settings().bind(|| insta::assert_snapshot!(text(&out.stderr)));
}

#[test]
fn lint_missing_file_exits_2() {
    let out = groundcite(
        &["schema", "lint", "no/such/schema.json", "--target", "azure"],
        None,
    );
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(
        err.starts_with("error: no/such/schema.json: cannot read:"),
        "{err}"
    );
}

#[test]
fn usage_errors_exit_2() {
    for args in [
        &["schema"][..],
        &["schema", "--target", "gemini"],
        &["schema", "lint", FIXTURE],
        &[
            "schema", "--target", "openai", "lint", FIXTURE, "--target", "openai",
        ],
    ] {
        let out = groundcite(args, None);
        assert_eq!(
            out.status.code(),
            Some(2),
            "{args:?}: {}",
            text(&out.stderr)
        );
        assert!(out.stdout.is_empty());
    }
}

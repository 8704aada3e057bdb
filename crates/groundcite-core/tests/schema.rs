//! Strict schemas: the emitted fragment equals what the OpenAI SDK sends, it
//! passes the lint for every target (with and without chunk-ID enums), the
//! lint cases in `testdata/schema/lint/*.json` hold, and the lint never
//! panics and only points at locations that exist.

use std::path::{Path, PathBuf};

use groundcite_core::schema::{
    ANTHROPIC_CHUNK_ID_ENUM_CAP, SCHEMA_NAME, Target, grounded_answer_schema, lint,
    request_fragment, schema_text, wrap_schema,
};
use proptest::prelude::*;
use serde::Deserialize;
use serde_json::{Map, Value, json};

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn fixture_text() -> String {
    std::fs::read_to_string(repo_root().join("testdata/schema/openai_sdk_grounded_answer.json"))
        .expect("SDK fixture is readable")
}

fn ids(n: usize, width: usize) -> Vec<String> {
    (0..n).map(|i| format!("{i:0width$}")).collect()
}

/// The schema inside a fragment (Bedrock's JSON text parsed).
fn fragment_schema(fragment: &Value, target: Target) -> Value {
    match target {
        Target::Anthropic => fragment["output_config"]["format"]["schema"].clone(),
        Target::Bedrock => serde_json::from_str(
            fragment["outputConfig"]["textFormat"]["structure"]["jsonSchema"]["schema"]
                .as_str()
                .expect("bedrock's schema is a string"),
        )
        .expect("bedrock's schema string is JSON"),
        _ => fragment["response_format"]["json_schema"]["schema"].clone(),
    }
}

fn chunk_id_schema(fragment: &Value, target: Target) -> Value {
    fragment_schema(fragment, target)["$defs"]["Citation"]["properties"]["chunk_id"].clone()
}

/// Resolves a violation's pointer; where it crosses a string (Bedrock's
/// schema text), it goes on inside the JSON the string holds.
fn resolve(doc: &Value, pointer: &str) -> Option<Value> {
    let mut cur = doc.clone();
    let mut rest = pointer;
    while !rest.is_empty() {
        if let Value::String(text) = &cur {
            cur = serde_json::from_str(text).ok()?;
            continue;
        }
        let tail = rest.strip_prefix('/')?;
        let (seg, next) = tail
            .split_once('/')
            .map_or((tail, ""), |(a, _)| (a, &tail[a.len()..]));
        cur = cur.pointer(&format!("/{seg}"))?.clone();
        rest = next;
    }
    Some(cur)
}

#[test]
fn openai_fragment_equals_the_sdk_fixture_byte_for_byte() {
    let fixture: Value = serde_json::from_str(&fixture_text()).unwrap();
    let emitted = request_fragment(Target::OpenAi, None);
    assert!(emitted.notes.is_empty(), "{:?}", emitted.notes);
    // Same JSON value: $defs, $ref, titles, required order and all.
    assert_eq!(emitted.value, fixture);
    // Same bytes, in the SDK's key order (the script writes json.dumps(indent=2)).
    let text = serde_json::to_string_pretty(&emitted.value).unwrap() + "\n";
    assert_eq!(text, fixture_text());
}

#[test]
fn properties_follow_the_model_field_order() {
    // The workspace enables serde_json's preserve_order: OpenAI generates keys
    // in schema order, and the SDK sends text before citations.
    let schema = grounded_answer_schema(None);
    let claim = &schema["$defs"]["Claim"];
    let keys: Vec<&str> = claim["properties"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(keys, ["text", "citations"]);
    assert_eq!(claim["required"], json!(["text", "citations"]));
}

#[test]
fn anthropic_and_azure_carry_the_same_schema() {
    let openai = request_fragment(Target::OpenAi, None).value;
    let azure = request_fragment(Target::Azure, None).value;
    let anthropic = request_fragment(Target::Anthropic, None).value;
    assert_eq!(openai, azure);
    assert_eq!(
        anthropic["output_config"]["format"]["schema"],
        openai["response_format"]["json_schema"]["schema"]
    );
    assert_eq!(anthropic["output_config"]["format"]["type"], "json_schema");
}

#[test]
fn bedrock_carries_the_same_schema_as_json_text() {
    let openai = request_fragment(Target::OpenAi, None).value;
    let bedrock = request_fragment(Target::Bedrock, Some(&ids(2, 1))).value;
    let format = &bedrock["outputConfig"]["textFormat"];
    assert_eq!(format["type"], "json_schema");
    let js = &format["structure"]["jsonSchema"];
    assert_eq!(js["name"], SCHEMA_NAME);
    // The schema is a string: the compact JSON text of the same schema, key order kept.
    let text = js["schema"].as_str().unwrap();
    let schema = grounded_answer_schema(Some(&ids(2, 1)));
    assert_eq!(text, schema_text(&schema));
    assert_eq!(text, serde_json::to_string(&schema).unwrap());
    assert!(text.starts_with(r#"{"$defs":{"Citation":{"additionalProperties":false"#));
    let unrestricted = request_fragment(Target::Bedrock, None).value;
    assert_eq!(
        fragment_schema(&unrestricted, Target::Bedrock),
        openai["response_format"]["json_schema"]["schema"]
    );
    // wrap_schema is the same wrapper.
    assert_eq!(wrap_schema(Target::Bedrock, schema), bedrock);
}

#[test]
fn bedrock_lint_reads_inside_the_schema_string() {
    let schema = json!({
        "type": "object",
        "properties": {"quote": {"type": "string", "minLength": 1}},
        "required": ["quote"],
        "additionalProperties": false
    });
    let v = lint(
        &wrap_schema(Target::Bedrock, schema.clone()),
        Target::Bedrock,
    );
    assert_eq!(v.len(), 1, "{v:#?}");
    assert_eq!(
        v[0].pointer,
        "/outputConfig/textFormat/structure/jsonSchema/schema/properties/quote/minLength"
    );
    assert_eq!(v[0].rule, "unsupported-keyword");
    assert!(
        v[0].provider_error
            .starts_with("400 ValidationException: outputConfig.textFormat schema"),
        "{}",
        v[0].provider_error
    );
    // The bare schema and the bare jsonSchema definition lint the same.
    let bare = lint(&schema, Target::Bedrock);
    assert_eq!(bare.len(), 1);
    assert_eq!(bare[0].pointer, "/properties/quote/minLength");
    let definition = json!({"schema": schema_text(&schema), "name": "A"});
    let d = lint(&definition, Target::Bedrock);
    assert_eq!(d.len(), 1, "{d:#?}");
    assert_eq!(d[0].pointer, "/schema/properties/quote/minLength");
    // Anthropic and Bedrock agree on the subset itself.
    assert_eq!(lint(&schema, Target::Anthropic).len(), 1);
}

#[test]
fn every_fragment_passes_the_lint_for_its_target() {
    for target in Target::ALL {
        for n in [
            None,
            Some(0),
            Some(1),
            Some(12),
            Some(499),
            Some(612),
            Some(2000),
        ] {
            let chunk_ids = n.map(|n| ids(n, 4));
            let fragment = request_fragment(target, chunk_ids.as_deref());
            let violations = lint(&fragment.value, target);
            assert!(
                violations.is_empty(),
                "{target} with {n:?} IDs: {violations:#?}"
            );
            // When the enum was kept, the bare schema with it passes as well.
            if chunk_id_schema(&fragment.value, target)
                .get("enum")
                .is_some()
            {
                let bare = grounded_answer_schema(chunk_ids.as_deref());
                assert!(lint(&bare, target).is_empty(), "{target} with {n:?} IDs");
            }
        }
        assert!(lint(&grounded_answer_schema(None), target).is_empty());
    }
}

#[test]
fn fragments_of_one_family_are_the_wrong_shape_for_the_other() {
    let openai = request_fragment(Target::OpenAi, None).value;
    let anthropic = request_fragment(Target::Anthropic, None).value;
    let v = lint(&openai, Target::Anthropic);
    assert_eq!(v.len(), 1, "{v:#?}");
    assert_eq!(
        (v[0].pointer.as_str(), v[0].rule),
        ("/response_format", "fragment-shape")
    );
    let v = lint(&anthropic, Target::Azure);
    assert_eq!(v.len(), 1, "{v:#?}");
    assert_eq!(
        (v[0].pointer.as_str(), v[0].rule),
        ("/output_config", "fragment-shape")
    );
    let bedrock = request_fragment(Target::Bedrock, None).value;
    for (fragment, target, at) in [
        (&bedrock, Target::Anthropic, "/outputConfig"),
        (&bedrock, Target::OpenAi, "/outputConfig"),
        (&anthropic, Target::Bedrock, "/output_config"),
        (&openai, Target::Bedrock, "/response_format"),
    ] {
        let v = lint(fragment, target);
        assert_eq!(v.len(), 1, "{target}: {v:#?}");
        assert_eq!((v[0].pointer.as_str(), v[0].rule), (at, "fragment-shape"));
    }
}

#[test]
fn chunk_ids_become_an_enum_where_the_target_allows_it() {
    let few = ids(3, 1);
    for target in Target::ALL {
        let f = request_fragment(target, Some(&few));
        assert_eq!(
            chunk_id_schema(&f.value, target)["enum"],
            json!(["0", "1", "2"])
        );
        assert!(
            f.notes[0].contains("restricted to the 3 retrieved IDs"),
            "{:?}",
            f.notes
        );
    }
    // Duplicates are dropped, order kept.
    let dup = vec!["b".to_string(), "a".to_string(), "b".to_string()];
    let f = request_fragment(Target::OpenAi, Some(&dup));
    assert_eq!(
        chunk_id_schema(&f.value, Target::OpenAi)["enum"],
        json!(["b", "a"])
    );

    // 612 IDs: over Azure's 500 enum values, within OpenAI's 1,000, over groundcite's Anthropic cap.
    let many = ids(612, 4);
    let azure = request_fragment(Target::Azure, Some(&many));
    assert!(
        chunk_id_schema(&azure.value, Target::Azure)
            .get("enum")
            .is_none()
    );
    assert!(
        azure.notes[0].contains("612 enum values in total; azure allows at most 500"),
        "{:?}",
        azure.notes
    );
    assert!(azure.notes[0].contains("chunk_id left as a free string"));
    let openai = request_fragment(Target::OpenAi, Some(&many));
    assert_eq!(
        chunk_id_schema(&openai.value, Target::OpenAi)["enum"]
            .as_array()
            .unwrap()
            .len(),
        612
    );
    for target in [Target::Anthropic, Target::Bedrock] {
        let f = request_fragment(target, Some(&many));
        assert!(chunk_id_schema(&f.value, target).get("enum").is_none());
        assert!(f.notes[0].contains(&ANTHROPIC_CHUNK_ID_ENUM_CAP.to_string()));
        assert!(
            f.notes[0].contains(&format!("for {target}")),
            "{:?}",
            f.notes
        );
    }

    // 1,001 IDs: over OpenAI's limit too.
    let f = request_fragment(Target::OpenAi, Some(&ids(1001, 4)));
    assert!(
        chunk_id_schema(&f.value, Target::OpenAi)
            .get("enum")
            .is_none()
    );
    assert!(f.notes[0].contains("allows at most 1000"), "{:?}", f.notes);

    // 300 IDs of 60 characters: a string enum over 250 values must stay under 15,000 (OpenAI) characters.
    let long = ids(300, 60);
    let f = request_fragment(Target::OpenAi, Some(&long));
    assert!(
        chunk_id_schema(&f.value, Target::OpenAi)
            .get("enum")
            .is_none()
    );
    assert!(f.notes[0].contains("18000 characters"), "{:?}", f.notes);

    // No IDs: nothing to restrict to.
    let f = request_fragment(Target::Azure, Some(&[]));
    assert!(
        chunk_id_schema(&f.value, Target::Azure)
            .get("enum")
            .is_none()
    );
    assert!(f.notes[0].contains("no chunk IDs"));
}

#[test]
fn anthropic_notes_mention_capitalisation_and_citations() {
    let f = request_fragment(Target::Anthropic, Some(&ids(2, 1)));
    assert!(
        f.notes.iter().any(|n| n.contains("capitalisation")),
        "{:?}",
        f.notes
    );
    assert!(
        f.notes.iter().any(|n| n.contains("native citations")),
        "{:?}",
        f.notes
    );
}

#[test]
fn bedrock_notes_mention_grammar_compilation() {
    let f = request_fragment(Target::Bedrock, Some(&ids(2, 1)));
    assert!(
        f.notes.iter().any(|n| n.contains("24 hours")),
        "{:?}",
        f.notes
    );
}

#[test]
fn targets_parse_and_print() {
    for t in Target::ALL {
        assert_eq!(t.as_str().parse::<Target>().unwrap(), t);
        assert_eq!(t.to_string(), t.as_str());
    }
    assert!(
        "gemini"
            .parse::<Target>()
            .unwrap_err()
            .to_string()
            .contains("openai, azure, anthropic or bedrock")
    );
}

#[derive(Deserialize)]
struct LintCase {
    description: String,
    target: String,
    expected: Vec<(String, String)>,
    schema: Value,
}

#[test]
fn lint_cases() {
    let dir = repo_root().join("testdata/schema/lint");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    assert!(files.len() >= 20, "lint cases missing in {}", dir.display());
    let mut failures = Vec::new();
    for file in &files {
        let case: LintCase = serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
        let target: Target = case.target.parse().unwrap();
        let violations = lint(&case.schema, target);
        let mut got: Vec<(String, String)> = violations
            .iter()
            .map(|v| (v.pointer.clone(), v.rule.to_string()))
            .collect();
        got.sort();
        let mut want = case.expected.clone();
        want.sort();
        if got != want {
            failures.push(format!(
                "{}: {}\n  want {want:?}\n  got  {got:?}\n  {violations:#?}",
                file.file_name().unwrap().to_string_lossy(),
                case.description
            ));
        }
        for v in &violations {
            assert!(
                resolve(&case.schema, &v.pointer).is_some(),
                "{}: {v:?}",
                file.display()
            );
            assert!(!v.message.is_empty() && !v.provider_error.is_empty());
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn provider_errors_quote_the_known_wording() {
    let schema = json!({
        "type": "object",
        "properties": {"quote": {"type": "string", "minLength": 1}},
        "required": ["quote"],
        "additionalProperties": true
    });
    let azure = lint(&wrap_schema(Target::Azure, schema.clone()), Target::Azure);
    let min = azure
        .iter()
        .find(|v| v.rule == "unsupported-keyword")
        .unwrap();
    assert_eq!(
        min.provider_error,
        "400 BadRequest: Invalid schema for response_format 'GroundedAnswer': \
         In context=('properties', 'quote'), 'minLength' is not permitted."
    );
    let ap = azure
        .iter()
        .find(|v| v.rule == "additional-properties-not-false")
        .unwrap();
    assert!(
        ap.provider_error
            .contains("'additionalProperties' is required to be supplied and to be false")
    );
    assert_eq!(
        min.to_string(),
        "/response_format/json_schema/schema/properties/quote/minLength: unsupported-keyword: \
         'minLength' is not in azure's strict subset (provider would answer: 400 BadRequest: \
         Invalid schema for response_format 'GroundedAnswer': In context=('properties', 'quote'), \
         'minLength' is not permitted.)"
    );
}

#[test]
fn exponential_ref_fanout_stays_fast() {
    // D0 -> D1 twice -> D2 twice ...: 2^40 instance paths if refs were expanded naively.
    let mut defs = Map::new();
    for i in 0..40 {
        let next = if i == 39 {
            json!({"type": "string"})
        } else {
            json!({"$ref": format!("#/$defs/D{}", i + 1)})
        };
        defs.insert(
            format!("D{i}"),
            json!({"anyOf": [next.clone(), {"type": "array", "items": next}]}),
        );
    }
    let schema = json!({
        "$defs": defs,
        "type": "object",
        "properties": {"x": {"$ref": "#/$defs/D0"}},
        "required": ["x"],
        "additionalProperties": false
    });
    let start = std::time::Instant::now();
    for t in Target::ALL {
        let _ = lint(&schema, t);
    }
    assert!(start.elapsed().as_secs() < 5, "took {:?}", start.elapsed());
}

fn arb_json() -> impl Strategy<Value = Value> {
    let key = prop::sample::select(vec![
        "type",
        "properties",
        "items",
        "$ref",
        "$defs",
        "definitions",
        "anyOf",
        "allOf",
        "oneOf",
        "required",
        "enum",
        "const",
        "additionalProperties",
        "format",
        "pattern",
        "minItems",
        "response_format",
        "json_schema",
        "schema",
        "output_config",
        "format",
        "text",
        "outputConfig",
        "textFormat",
        "structure",
        "jsonSchema",
        "name",
        "strict",
        "a",
        "b~/",
        "",
    ]);
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        (-3i64..5).prop_map(Value::from),
        prop::sample::select(vec![
            "object",
            "array",
            "string",
            "null",
            "json_schema",
            "#",
            "#/$defs/a",
            "#/properties/a",
            "#/$defs/b~0~1",
            "#/anyOf/0",
            "#/items",
            "(?=x)\\1",
            "uri",
            "x",
            "{}",
            r##"{"type":"object","properties":{"a":{"$ref":"#/properties/a"}}}"##,
            "{\"type\":",
        ])
        .prop_map(Value::from),
    ];
    leaf.prop_recursive(6, 64, 5, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            prop::collection::vec((key.clone(), inner), 0..6).prop_map(|kvs| {
                Value::Object(kvs.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
            }),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn lint_never_panics_and_points_at_real_locations(doc in arb_json()) {
        for target in Target::ALL {
            let violations = lint(&doc, target);
            for v in &violations {
                prop_assert!(resolve(&doc, &v.pointer).is_some(), "{target}: {v:?} in {doc}");
            }
            let mut sorted_violations = violations.clone();
            sorted_violations.sort();
            sorted_violations.dedup();
            prop_assert_eq!(&sorted_violations, &violations);
        }
    }
}

//! The real model (all-MiniLM-L6-v2, installed by `scripts/setup`): vectors
//! equal to an independent NumPy implementation's
//! (`testdata/embed/vectors.json`), sensible similarities, any input.

#![allow(clippy::unwrap_used)]

use std::sync::OnceLock;

use groundcite_embed::{EmbedErrorKind, Embedder, MODEL_NAME, cosine, find_model};
use serde::Deserialize;

const VECTORS: &str = include_str!("../../../testdata/embed/vectors.json");

#[derive(Deserialize)]
struct Case {
    text: String,
    ids: Vec<u32>,
    vector: Vec<f32>,
}

fn embedder() -> &'static Embedder {
    static E: OnceLock<Embedder> = OnceLock::new();
    E.get_or_init(|| {
        let dir = find_model(None).unwrap_or_else(|e| panic!("{e}"));
        Embedder::load(&dir).unwrap_or_else(|e| panic!("{e}"))
    })
}

fn norm(v: &[f32]) -> f32 {
    v.iter().map(|x| x * x).sum::<f32>().sqrt()
}

#[test]
fn vectors_equal_the_reference() {
    let cases: Vec<Case> = serde_json::from_str(VECTORS).unwrap();
    assert!(cases.len() >= 8);
    let e = embedder();
    let texts: Vec<&str> = cases.iter().map(|c| c.text.as_str()).collect();
    // All at once: batched with padding, which must not change anything.
    let together = e.embed(&texts).unwrap();
    let mut report = Vec::new();
    for (case, v) in cases.iter().zip(&together) {
        assert_eq!(
            e.tokenizer().encode_truncated(&case.text, e.max_tokens()),
            case.ids,
            "{:?}",
            case.text
        );
        let alone = e.embed(&[&case.text]).unwrap().remove(0);
        let c = cosine(v, &case.vector);
        let max_diff = v
            .iter()
            .zip(&case.vector)
            .map(|(a, b)| (a - b).abs())
            .fold(0f32, f32::max);
        report.push(format!(
            "1 - cosine {:.1e}, largest difference {max_diff:.1e}: {:?}",
            1.0 - c,
            case.text.chars().take(40).collect::<String>()
        ));
        assert!(
            c >= 0.9999,
            "cosine {c} with the reference for {:?}",
            case.text
        );
        assert!(
            cosine(v, &alone) >= 0.99999,
            "batched and alone differ for {:?}",
            case.text
        );
        // f32 rounding gives about 3e-7; the tanh approximation of GELU, 3e-4.
        assert!(
            max_diff < 1e-5,
            "largest difference {max_diff} for {:?}",
            case.text
        );
    }
    println!("cosine with the NumPy reference:\n{}", report.join("\n"));
}

#[test]
fn a_question_is_closest_to_its_paraphrase() {
    let triples = [
        (
            "How long does it take to get a refund?",
            "What is the time frame for receiving my money back?",
            "The tent is made of ripstop nylon and weighs two kilograms.",
        ),
        (
            "Can I change my delivery address after ordering?",
            "Is it possible to update the shipping address of an order I already placed?",
            "Our stores open at nine in the morning on weekdays.",
        ),
        (
            "Is the sleeping bag waterproof?",
            "Does the sleeping bag keep out water?",
            "How do I reset my account password?",
        ),
    ];
    let e = embedder();
    for (question, paraphrase, unrelated) in triples {
        let v = e.embed(&[question, paraphrase, unrelated]).unwrap();
        let (near, far) = (cosine(&v[0], &v[1]), cosine(&v[0], &v[2]));
        assert!(
            near > far + 0.2,
            "{question:?}: paraphrase {near}, unrelated {far}"
        );
    }
}

#[test]
fn any_text_gets_a_unit_vector_in_order() {
    let e = embedder();
    let huge = "All work and no play makes Jack a dull boy. ".repeat(200_000);
    let bytes: Vec<u8> = (0..=255u8).cycle().take(5000).collect();
    let lossy = String::from_utf8_lossy(&bytes).into_owned();
    let texts: Vec<&str> = vec![
        "",
        " \t\n\r\u{3000}",
        "!!!???...---",
        "\0\0\0",
        "\u{fffd}\u{85}\u{200b}",
        "😀🤗👨‍👩‍👧🇫🇷",
        "مرحبا بالعالم שלום עולם",
        "[CLS][SEP][PAD][MASK][UNK]",
        &huge,
        &lossy,
        "a short one",
    ];
    let vectors = e.embed(&texts).unwrap();
    assert_eq!(vectors.len(), texts.len());
    for (t, v) in texts.iter().zip(&vectors) {
        assert_eq!(
            v.len(),
            e.dim(),
            "{:?}",
            t.chars().take(20).collect::<String>()
        );
        assert!(v.iter().all(|x| x.is_finite()));
        assert!((norm(v) - 1.0).abs() < 1e-4, "norm {}", norm(v));
    }
    // Order is kept: the same text alone gives the same vector.
    let alone = e.embed(&["a short one"]).unwrap().remove(0);
    assert!(cosine(&alone, &vectors[10]) > 0.99999);
    assert!(e.embed(&[]).unwrap().is_empty());
    assert_eq!(e.count_tokens(""), 2);
    assert!(e.count_tokens(&huge) > e.max_tokens());
}

#[test]
fn many_texts_of_mixed_lengths() {
    // More than one batch, lengths interleaved: results land in input order.
    let e = embedder();
    let texts: Vec<String> = (0..70)
        .map(|i| format!("item {i}: {}", "tent pole ".repeat((i * 7) % 60)))
        .collect();
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let all = e.embed(&refs).unwrap();
    for i in [0, 13, 41, 69] {
        let alone = e.embed(&[refs[i]]).unwrap().remove(0);
        assert!(cosine(&all[i], &alone) > 0.99999, "text {i}");
    }
}

#[test]
fn identity_and_shape() {
    let e = embedder();
    assert_eq!(e.dim(), 384);
    assert_eq!(e.max_tokens(), 256);
    let id = e.model_id();
    let hash = id
        .strip_prefix(&format!("{MODEL_NAME}@xxh3-128:"))
        .unwrap_or_else(|| panic!("{id}"));
    assert_eq!(hash.len(), 32);
    assert!(hash.bytes().all(|b| b.is_ascii_hexdigit()));
    // Stable: loading again gives the same identity.
    let again = Embedder::load(e.dir()).unwrap();
    assert_eq!(again.model_id(), id);
    let debug = format!("{e:?}");
    assert!(debug.contains(id) && debug.len() < 400, "{debug}");
    println!("load time {:?}, {debug}", again.load_time());
}

#[test]
fn send_and_sync() {
    fn check<T: Send + Sync>() {}
    check::<Embedder>();
    check::<groundcite_embed::Tokenizer>();
    check::<groundcite_embed::EmbedError>();
}

#[test]
fn load_errors_name_the_file() {
    let model = find_model(None).unwrap_or_else(|e| panic!("{e}"));
    let dir = tempfile::tempdir().unwrap();
    let err = Embedder::load(dir.path()).unwrap_err();
    assert!(matches!(err.kind(), EmbedErrorKind::Io { .. }), "{err}");
    assert!(err.to_string().contains("config.json"), "{err}");

    std::fs::write(dir.path().join("config.json"), "{ not json").unwrap();
    let err = Embedder::load(dir.path()).unwrap_err();
    assert!(err.to_string().contains("config.json"), "{err}");

    for f in ["config.json", "sentence_bert_config.json", "vocab.txt"] {
        std::fs::copy(model.join(f), dir.path().join(f)).unwrap();
    }
    std::fs::create_dir(dir.path().join("1_Pooling")).unwrap();
    std::fs::write(
        dir.path().join("1_Pooling/config.json"),
        r#"{"pooling_mode_cls_token": true}"#,
    )
    .unwrap();
    let err = Embedder::load(dir.path()).unwrap_err();
    assert!(err.to_string().contains("mean pooling"), "{err}");

    std::fs::copy(
        model.join("1_Pooling/config.json"),
        dir.path().join("1_Pooling/config.json"),
    )
    .unwrap();
    std::fs::write(dir.path().join("model.safetensors"), b"not safetensors").unwrap();
    let err = Embedder::load(dir.path()).unwrap_err();
    assert!(
        matches!(err.kind(), EmbedErrorKind::Invalid { .. }),
        "{err}"
    );
    assert!(err.to_string().contains("model.safetensors"), "{err}");

    std::fs::write(dir.path().join("vocab.txt"), "a\nb\n").unwrap();
    let err = Embedder::load(dir.path()).unwrap_err();
    assert!(
        err.to_string().contains("vocab.txt") && err.to_string().contains("[PAD]"),
        "{err}"
    );
}

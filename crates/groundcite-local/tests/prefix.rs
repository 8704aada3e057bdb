//! The prompt-prefix cache on the real model (SmolLM2-135M-Instruct,
//! installed by `scripts/setup`): the fixed opening's state is evaluated
//! once, restored from memory by the same engine and from disk by a fresh
//! one, gives exactly the output of an evaluated opening, and a damaged or
//! foreign state file is never used.

#![allow(clippy::unwrap_used)]

use std::path::Path;

use groundcite_local::{Engine, EngineOptions, Message, RunOptions, RunOutput, find_model};

const SYSTEM: &str = "You answer questions using ONLY the sources. Reply in one short \
                      sentence. If no source answers the question, say so.";

fn engine(cache: Option<&Path>) -> Engine {
    let path = find_model(None).unwrap_or_else(|e| panic!("{e}"));
    let options = EngineOptions {
        prefix_cache: cache.map(Path::to_path_buf),
        ..EngineOptions::default()
    };
    Engine::load(&path, options).unwrap()
}

/// The rendered prompt and the bytes of its fixed opening (the system turn
/// as the template renders it before the user's text).
fn prompt(e: &Engine, system: &str, user: &str) -> (String, usize) {
    let render = |u: &str| {
        e.render_chat(&[
            Message {
                role: "system",
                content: system.into(),
            },
            Message {
                role: "user",
                content: u.into(),
            },
        ])
        .unwrap()
    };
    let (full, empty) = (render(user), render(""));
    let stable = full
        .bytes()
        .zip(empty.bytes())
        .take_while(|(a, b)| a == b)
        .count();
    (full, stable)
}

fn run(e: &Engine, (text, stable): &(String, usize), persist: bool) -> RunOutput {
    e.run_with(
        text,
        RunOptions {
            grammar: None,
            max_tokens: 12,
            fast_forward: false,
            answerable_threshold: None,
            repeat_guard: false,
            close_reserve: None,
            stable_prefix: *stable,
            persist_prefix: persist,
        },
        &mut |_| true,
    )
    .unwrap()
}

fn files(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|d| {
            d.map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

#[test]
fn the_opening_is_evaluated_once_and_restored_with_the_same_output() {
    let tmp = tempfile::tempdir().unwrap();
    let cache = tmp.path().join("prefix");
    let first = engine(Some(&cache));
    let q1 = prompt(
        &first,
        SYSTEM,
        "Sources: Refunds take 5 days.\nQuestion: How long do refunds take?",
    );
    let q2 = prompt(
        &first,
        SYSTEM,
        "Sources: The shop opens at 9.\nQuestion: When does the shop open?",
    );
    assert!(q1.1 > 0 && q1.1 < q1.0.len());

    // First run: evaluated, kept in memory and on disk.
    let a = run(&first, &q1, true);
    assert_eq!(a.prefix_reused, 0);
    let stored = files(&cache);
    assert_eq!(stored.len(), 2, "{stored:?}");
    assert!(stored.iter().any(|f| f.ends_with(".state")));
    assert!(stored.iter().any(|f| f.ends_with(".sha256")));

    // The same engine, another question: restored from memory.
    let b = run(&first, &q2, true);
    assert!(b.prefix_reused >= 16, "{}", b.prefix_reused);
    assert!(b.prefix_reused < b.prompt_tokens);
    assert_eq!(files(&cache), stored);
    let again = run(&first, &q1, true);
    assert_eq!(again.text, a.text);

    // A fresh engine (the next process): restored from disk, same output.
    let second = engine(Some(&cache));
    let c = run(&second, &q1, true);
    assert_eq!(c.prefix_reused, b.prefix_reused);
    assert_eq!(c.text, a.text);

    // Without a cache directory: evaluated each time, the same output.
    let bare = engine(None);
    let d = run(&bare, &q1, true);
    assert_eq!(d.prefix_reused, 0);
    assert_eq!(d.text, a.text);
}

#[test]
fn a_damaged_state_file_is_not_used_and_is_written_again() {
    let tmp = tempfile::tempdir().unwrap();
    let cache = tmp.path().join("prefix");
    let e = engine(Some(&cache));
    let q = prompt(
        &e,
        SYSTEM,
        "Sources: Refunds take 5 days.\nQuestion: How long do refunds take?",
    );
    let a = run(&e, &q, true);
    let state = files(&cache)
        .into_iter()
        .find(|f| f.ends_with(".state"))
        .unwrap();
    let path = cache.join(&state);
    // Flip bytes in the middle of the keys and values.
    let mut bytes = std::fs::read(&path).unwrap();
    let mid = bytes.len() / 2;
    for b in &mut bytes[mid..mid + 64] {
        *b = !*b;
    }
    std::fs::write(&path, &bytes).unwrap();
    let fresh = engine(Some(&cache));
    let b = run(&fresh, &q, true);
    assert_eq!(b.prefix_reused, 0, "a damaged state was restored");
    assert_eq!(b.text, a.text);
    // Rewritten whole: the next process restores it.
    let c = run(&engine(Some(&cache)), &q, true);
    assert!(c.prefix_reused > 0);
    assert_eq!(c.text, a.text);

    // Garbage with a matching checksum (a file that is not llama.cpp's)
    // is refused by llama.cpp's own reader, and the run still answers.
    let junk = b"not a llama.cpp state file".to_vec();
    std::fs::write(&path, &junk).unwrap();
    let sum = cache.join(state.replace(".state", ".sha256"));
    std::fs::write(&sum, sha256_hex(&junk)).unwrap();
    let d = run(&engine(Some(&cache)), &q, true);
    assert_eq!(d.prefix_reused, 0);
    assert_eq!(d.text, a.text);
}

#[test]
fn a_callers_system_prompt_stays_in_memory() {
    let tmp = tempfile::tempdir().unwrap();
    let cache = tmp.path().join("prefix");
    let e = engine(Some(&cache));
    let q = prompt(
        &e,
        "A caller's own instructions, which never reach the disk.",
        "Hello?",
    );
    run(&e, &q, false);
    let b = run(&e, &q, false);
    assert!(b.prefix_reused > 0);
    assert!(files(&cache).is_empty(), "{:?}", files(&cache));
}

fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// After a restored opening the rest of the prompt can be short, and a
/// step of grammar-forced tokens longer than it: the batch has room for
/// the step (measured: "Insufficient Space" on four held-out questions
/// before the batch was sized for the output too).
#[test]
fn a_forced_run_longer_than_the_rest_of_the_prompt_fits() {
    let e = engine(None);
    let q = prompt(&e, SYSTEM, "Hi?");
    let forced = "Refunds are paid to the card you used within five working days of \
                  the return reaching our warehouse, and we email you when it is done. "
        .repeat(4);
    // The forced run, then a choice: the run must be decoded to choose.
    let grammar = format!("start: \"{forced}\" (\"yes\" | \"no\")");
    let opts = RunOptions {
        grammar: Some(&grammar),
        max_tokens: 400,
        fast_forward: true,
        answerable_threshold: None,
        repeat_guard: false,
        close_reserve: None,
        stable_prefix: q.1,
        persist_prefix: false,
    };
    for _ in 0..2 {
        let out = e.run_with(&q.0, opts, &mut |_| true).unwrap();
        assert!(out.text.starts_with(&forced), "{}", out.text);
        assert!(out.text.ends_with("yes") || out.text.ends_with("no"));
        assert!(out.forced_tokens > out.prompt_tokens - out.prefix_reused.max(1));
    }
}

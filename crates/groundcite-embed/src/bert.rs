//! The BERT encoder (Hugging Face's `BertModel` without the pooler), in
//! inference mode: no dropout.

use std::path::Path;

use candle_core::{Module, Tensor};
use candle_nn::{Embedding, LayerNorm, Linear};
use serde::Deserialize;

use crate::EmbedError;
use crate::weights::Weights;

/// The fields of `config.json` that the encoder uses.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct BertConfig {
    pub(crate) vocab_size: usize,
    pub(crate) hidden_size: usize,
    pub(crate) num_hidden_layers: usize,
    pub(crate) num_attention_heads: usize,
    pub(crate) intermediate_size: usize,
    pub(crate) max_position_embeddings: usize,
    pub(crate) type_vocab_size: usize,
    pub(crate) layer_norm_eps: f64,
    pub(crate) hidden_act: String,
    #[serde(default)]
    pub(crate) position_embedding_type: Option<String>,
}

impl BertConfig {
    /// Checks that the encoder below computes what this configuration
    /// describes.
    pub(crate) fn validate(&self) -> Result<(), String> {
        if self.hidden_act != "gelu" {
            return Err(format!(
                "hidden_act {:?} is not supported (only \"gelu\")",
                self.hidden_act
            ));
        }
        if let Some(p) = &self.position_embedding_type
            && p != "absolute"
        {
            return Err(format!(
                "position_embedding_type {p:?} is not supported (only \"absolute\")"
            ));
        }
        if self.num_attention_heads == 0
            || !self.hidden_size.is_multiple_of(self.num_attention_heads)
        {
            return Err(format!(
                "hidden_size {} is not a multiple of num_attention_heads {}",
                self.hidden_size, self.num_attention_heads
            ));
        }
        if self.type_vocab_size == 0 || self.max_position_embeddings < 2 {
            return Err(
                "type_vocab_size must be at least 1 and max_position_embeddings at least 2".into(),
            );
        }
        Ok(())
    }
}

/// The encoder's weights.
pub(crate) struct Bert {
    word_embeddings: Embedding,
    /// Position embeddings plus the embedding of token type 0 (all our
    /// tokens are type 0), summed once at load.
    position_and_type: Tensor,
    embeddings_norm: LayerNorm,
    layers: Vec<Layer>,
    heads: usize,
    head_dim: usize,
}

/// One transformer layer (post-LayerNorm).
struct Layer {
    /// Query, key and value projections in one matrix (3 × hidden rows).
    qkv: Linear,
    attention_out: Linear,
    attention_norm: LayerNorm,
    intermediate: Linear,
    output: Linear,
    output_norm: LayerNorm,
}

impl Bert {
    /// Builds the encoder from the tensors of a `model.safetensors` (names
    /// as Hugging Face's `BertModel` saves them, with or without a `bert.`
    /// prefix), checking every shape against `config`.
    pub(crate) fn load(
        config: &BertConfig,
        weights: &Weights,
        path: &Path,
    ) -> Result<Bert, EmbedError> {
        let prefix = if weights.contains("embeddings.word_embeddings.weight") {
            ""
        } else {
            "bert."
        };
        let get = |name: &str, shape: &[usize]| weights.get(&format!("{prefix}{name}"), shape);
        let h = config.hidden_size;
        let inner = config.intermediate_size;
        let linear = |name: &str, inputs: usize, outputs: usize| -> Result<Linear, EmbedError> {
            Ok(Linear::new(
                get(&format!("{name}.weight"), &[outputs, inputs])?,
                Some(get(&format!("{name}.bias"), &[outputs])?),
            ))
        };
        let norm = |name: &str| -> Result<LayerNorm, EmbedError> {
            Ok(LayerNorm::new(
                get(&format!("{name}.weight"), &[h])?,
                get(&format!("{name}.bias"), &[h])?,
                config.layer_norm_eps,
            ))
        };
        // Tensor arithmetic on weights that loaded with the right shapes
        // cannot fail; if it did, say so against the file.
        let math = |e: candle_core::Error| EmbedError::invalid(path, e.to_string());

        let word = get("embeddings.word_embeddings.weight", &[config.vocab_size, h])?;
        let positions = get(
            "embeddings.position_embeddings.weight",
            &[config.max_position_embeddings, h],
        )?;
        let types = get(
            "embeddings.token_type_embeddings.weight",
            &[config.type_vocab_size, h],
        )?;
        let position_and_type = positions
            .broadcast_add(&types.narrow(0, 0, 1).map_err(math)?)
            .map_err(math)?;
        // The attention scale 1/sqrt(head_dim) is folded into the query
        // projection (weight and bias), sparing a pass over the queries.
        let head_dim = h / config.num_attention_heads;
        let scale = 1.0 / (head_dim as f64).sqrt();
        let mut layers = Vec::with_capacity(config.num_hidden_layers);
        for i in 0..config.num_hidden_layers {
            let l = format!("encoder.layer.{i}");
            let projection = |which: &str| {
                let name = format!("{l}.attention.self.{which}");
                Ok::<_, EmbedError>((
                    get(&format!("{name}.weight"), &[h, h])?,
                    get(&format!("{name}.bias"), &[h])?,
                ))
            };
            let (qw, qb) = projection("query")?;
            let (kw, kb) = projection("key")?;
            let (vw, vb) = projection("value")?;
            let qw = (qw * scale).map_err(math)?;
            let qb = (qb * scale).map_err(math)?;
            // Query, key and value in one matrix: one multiplication.
            let qkv = Linear::new(
                Tensor::cat(&[qw, kw, vw], 0).map_err(math)?,
                Some(Tensor::cat(&[qb, kb, vb], 0).map_err(math)?),
            );
            layers.push(Layer {
                qkv,
                attention_out: linear(&format!("{l}.attention.output.dense"), h, h)?,
                attention_norm: norm(&format!("{l}.attention.output.LayerNorm"))?,
                intermediate: linear(&format!("{l}.intermediate.dense"), h, inner)?,
                output: linear(&format!("{l}.output.dense"), inner, h)?,
                output_norm: norm(&format!("{l}.output.LayerNorm"))?,
            });
        }
        Ok(Bert {
            word_embeddings: Embedding::new(word, h),
            position_and_type,
            embeddings_norm: norm("embeddings.LayerNorm")?,
            layers,
            heads: config.num_attention_heads,
            head_dim,
        })
    }

    /// The number of transformer layers.
    pub(crate) fn layer_count(&self) -> usize {
        self.layers.len()
    }

    /// The last hidden states, `(batch, length, hidden)`, of `ids`
    /// (`(batch, length)`, `u32`). `attention_bias` (`(batch, 1, 1,
    /// length)`, `f32`) is added to the attention scores: 0 on tokens and
    /// `f32::MIN` on padding, as Hugging Face's extended attention mask, so
    /// that padding gets no attention; `None` when there is no padding.
    pub(crate) fn forward(
        &self,
        ids: &Tensor,
        attention_bias: Option<&Tensor>,
    ) -> candle_core::Result<Tensor> {
        let (_, len) = ids.dims2()?;
        let x = self
            .word_embeddings
            .forward(ids)?
            .broadcast_add(&self.position_and_type.narrow(0, 0, len)?)?;
        let mut x = self.embeddings_norm.forward(&x)?;
        for layer in &self.layers {
            x = layer.forward(&x, attention_bias, self.heads, self.head_dim)?;
        }
        Ok(x)
    }
}

impl Layer {
    fn forward(
        &self,
        x: &Tensor,
        bias: Option<&Tensor>,
        heads: usize,
        head_dim: usize,
    ) -> candle_core::Result<Tensor> {
        let (batch, len, hidden) = x.dims3()?;
        // (batch, len, 3 * hidden) -> (3, batch, heads, len, head_dim)
        let qkv = self
            .qkv
            .forward(x)?
            .reshape((batch, len, 3, heads, head_dim))?
            .permute((2, 0, 3, 1, 4))?;
        let q = qkv.get(0)?.contiguous()?;
        let k = qkv.get(1)?.contiguous()?;
        let v = qkv.get(2)?.contiguous()?;
        let mut scores = q.matmul(&k.t()?)?;
        if let Some(bias) = bias {
            scores = scores.broadcast_add(bias)?;
        }
        let probs = candle_nn::ops::softmax_last_dim(&scores)?;
        let context = probs
            .matmul(&v)?
            .transpose(1, 2)?
            .contiguous()?
            .reshape((batch, len, hidden))?;
        let attended = self
            .attention_norm
            .forward(&(self.attention_out.forward(&context)? + x)?)?;
        let inner = self.intermediate.forward(&attended)?.gelu_erf()?;
        self.output_norm
            .forward(&(self.output.forward(&inner)? + &attended)?)
    }
}

/// Mean of the hidden states over the first `len` positions of row `row` of
/// `hidden` (`(batch, length, dim)`, flattened), L2-normalised as
/// sentence-transformers' `Normalize` does (dividing by the norm, at least
/// 1e-12).
pub(crate) fn mean_pool_normalized(
    hidden: &[f32],
    length: usize,
    dim: usize,
    row: usize,
    len: usize,
) -> Vec<f32> {
    let mut sum = vec![0f32; dim];
    let start = row * length * dim;
    for token in hidden[start..start + len * dim].chunks_exact(dim) {
        for (s, v) in sum.iter_mut().zip(token) {
            *s += v;
        }
    }
    let count = len.max(1) as f32;
    for s in &mut sum {
        *s /= count;
    }
    let norm = sum.iter().map(|v| v * v).sum::<f32>().sqrt().max(1e-12);
    for s in &mut sum {
        *s /= norm;
    }
    sum
}

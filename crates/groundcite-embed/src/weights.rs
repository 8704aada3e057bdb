//! Reading `model.safetensors` straight into the tensors' own buffers.
//!
//! Memory-mapping the file would need `unsafe`, which the workspace
//! forbids, and candle copies CPU tensors out of a mapping anyway. So the
//! file is read once, in order: each F32 tensor's bytes land directly in the
//! `Vec<f32>` the tensor then owns (no intermediate copy of the 87 MiB), and
//! every byte of the file goes through the XXH3-128 hash on the way.
//!
//! Format: an 8-byte little-endian header length, a JSON header mapping
//! each tensor name to `{dtype, shape, data_offsets: [begin, end]}`
//! (relative to the end of the header; `__metadata__` is skipped), then the
//! data.

use std::collections::HashMap;
use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

use candle_core::{Device, Tensor};
use serde::Deserialize;
use xxhash_rust::xxh3::Xxh3Default;

use crate::EmbedError;

/// Headers larger than this are refused (the model's is about 9 KiB).
const MAX_HEADER_BYTES: u64 = 16 << 20;

/// One entry of the JSON header.
#[derive(Deserialize)]
struct Entry {
    dtype: String,
    shape: Vec<usize>,
    data_offsets: [u64; 2],
}

/// The F32 tensors of a safetensors file, and the file's hash.
pub(crate) struct Weights {
    path: PathBuf,
    tensors: HashMap<String, Tensor>,
    /// XXH3-128 of the whole file.
    pub(crate) hash: u128,
}

impl Weights {
    /// Reads every F32 tensor of the file at `path` (tensors of other types
    /// are only hashed) and hashes the file.
    pub(crate) fn read(path: &Path) -> Result<Weights, EmbedError> {
        let io = |e| EmbedError::io(path, e);
        let invalid = |reason: String| EmbedError::invalid(path, reason);
        let mut file = File::open(path).map_err(io)?;
        let file_len = file.metadata().map_err(io)?.len();
        if file_len < 8 {
            return Err(invalid(format!(
                "not a safetensors file ({file_len} bytes)"
            )));
        }
        let mut hasher = Xxh3Default::new();

        let mut len_bytes = [0u8; 8];
        file.read_exact(&mut len_bytes).map_err(io)?;
        hasher.update(&len_bytes);
        let header_len = u64::from_le_bytes(len_bytes);
        if header_len > MAX_HEADER_BYTES || header_len > file_len - 8 {
            return Err(invalid(format!(
                "not a safetensors file (header length {header_len})"
            )));
        }
        let mut header = vec![0u8; header_len as usize];
        file.read_exact(&mut header).map_err(io)?;
        hasher.update(&header);
        let mut entries: HashMap<String, serde_json::Value> = serde_json::from_slice(&header)
            .map_err(|e| invalid(format!("safetensors header: {e}")))?;
        entries.remove("__metadata__");
        let mut entries: Vec<(String, Entry)> = entries
            .into_iter()
            .map(|(name, value)| {
                serde_json::from_value(value)
                    .map(|entry| (name.clone(), entry))
                    .map_err(|e| invalid(format!("safetensors header, tensor {name}: {e}")))
            })
            .collect::<Result<_, _>>()?;
        entries.sort_by_key(|(_, e)| e.data_offsets[0]);

        let data_start = 8 + header_len;
        let data_len = file_len - data_start;
        let mut pos = 0u64;
        let mut scratch = Vec::new();
        let mut tensors = HashMap::new();
        for (name, entry) in entries {
            let [begin, end] = entry.data_offsets;
            if begin < pos || end < begin || end > data_len {
                return Err(invalid(format!(
                    "tensor {name}: data offsets [{begin}, {end}] overlap or lie outside the {data_len} data bytes"
                )));
            }
            // Bytes between tensors (the format has none) are hashed too.
            skip(&mut file, begin - pos, &mut scratch, &mut hasher).map_err(io)?;
            let bytes = end - begin;
            if entry.dtype == "F32" {
                let count = entry
                    .shape
                    .iter()
                    .try_fold(1usize, |n, &d| n.checked_mul(d));
                if count.and_then(|c| c.checked_mul(4)) != Some(bytes as usize) {
                    return Err(invalid(format!(
                        "tensor {name}: shape {:?} does not match its {bytes} bytes",
                        entry.shape
                    )));
                }
                let mut data = vec![0f32; bytes as usize / 4];
                let raw: &mut [u8] = bytemuck::cast_slice_mut(&mut data);
                file.read_exact(raw).map_err(io)?;
                hasher.update(raw);
                if cfg!(target_endian = "big") {
                    for v in &mut data {
                        *v = f32::from_bits(u32::from_le(v.to_bits()));
                    }
                }
                let tensor = Tensor::from_vec(data, entry.shape, &Device::Cpu)
                    .map_err(|e| invalid(format!("tensor {name}: {e}")))?;
                tensors.insert(name, tensor);
            } else {
                skip(&mut file, bytes, &mut scratch, &mut hasher).map_err(io)?;
            }
            pos = end;
        }
        // Anything after the last tensor, so that the hash covers the file.
        let mut rest = Vec::new();
        file.read_to_end(&mut rest).map_err(io)?;
        hasher.update(&rest);
        Ok(Weights {
            path: path.to_owned(),
            tensors,
            hash: hasher.digest128(),
        })
    }

    /// Whether there is a tensor `name`.
    pub(crate) fn contains(&self, name: &str) -> bool {
        self.tensors.contains_key(name)
    }

    /// The F32 tensor `name`, which must have shape `shape`.
    pub(crate) fn get(&self, name: &str, shape: &[usize]) -> Result<Tensor, EmbedError> {
        let t = self
            .tensors
            .get(name)
            .ok_or_else(|| EmbedError::invalid(&self.path, format!("no F32 tensor {name}")))?;
        if t.dims() != shape {
            return Err(EmbedError::invalid(
                &self.path,
                format!("tensor {name} has shape {:?}, expected {shape:?}", t.dims()),
            ));
        }
        Ok(t.clone())
    }
}

/// Reads and hashes `n` bytes that are not kept.
fn skip(
    file: &mut File,
    mut n: u64,
    scratch: &mut Vec<u8>,
    hasher: &mut Xxh3Default,
) -> std::io::Result<()> {
    scratch.resize(1 << 16, 0);
    while n > 0 {
        let take = n.min(scratch.len() as u64) as usize;
        file.read_exact(&mut scratch[..take])?;
        hasher.update(&scratch[..take]);
        n -= take as u64;
    }
    Ok(())
}

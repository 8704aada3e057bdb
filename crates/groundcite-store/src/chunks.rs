//! [`TraceChunks`]: a trace's chunks as JSON texts, and the references
//! by which a trace row points at chunks stored in chunk packs.

use std::fmt;

use groundcite_core::Chunk;
use serde::de::DeserializeOwned;
use serde::ser::{Error as _, SerializeSeq};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;
use serde_json::value::RawValue;
use sha2::{Digest, Sha256};

/// The chunks a request was answered from, in order: each chunk's JSON text
/// as it was serialized once, never re-encoded by the store.
///
/// Kept as text rather than [`Value`] because the store never looks inside
/// and a busy service should not pay for a tree of maps per request: the
/// service serialized each request's chunks into a `Value` and that into
/// text, 10-15% of its CPU under load. Serializes as a JSON array.
///
/// Every text is valid JSON: each constructor either serializes, or takes
/// text that was parsed as JSON.
#[derive(Clone, Default)]
pub struct TraceChunks(Vec<Box<str>>);

impl TraceChunks {
    /// No chunks.
    pub fn new() -> Self {
        TraceChunks(Vec::new())
    }

    /// Retrieved chunks, each as the JSON text serde would write for it
    /// (written by a faster writer held to serde_json's output by tests).
    pub fn from_chunks<'a>(chunks: impl IntoIterator<Item = &'a Chunk>) -> Self {
        TraceChunks(
            chunks
                .into_iter()
                .map(|c| crate::json::chunk_json(c).into_boxed_str())
                .collect(),
        )
    }

    /// Serializes each item (a chunk) to its JSON text.
    pub fn from_items<T: Serialize>(
        items: impl IntoIterator<Item = T>,
    ) -> Result<Self, serde_json::Error> {
        items
            .into_iter()
            .map(|item| serde_json::to_string(&item).map(String::into_boxed_str))
            .collect::<Result<Vec<_>, _>>()
            .map(TraceChunks)
    }

    /// The elements of a JSON array; `None` for any other value.
    pub fn from_value(value: &Value) -> Option<Self> {
        value
            .as_array()?
            .iter()
            .map(|v| serde_json::to_string(v).ok().map(String::into_boxed_str))
            .collect::<Option<Vec<_>>>()
            .map(TraceChunks)
    }

    /// The chunks as a JSON array value.
    pub fn to_value(&self) -> Value {
        Value::Array(
            self.0
                .iter()
                // Every text is valid JSON, which always parses.
                .map(|text| serde_json::from_str(text).unwrap_or(Value::Null))
                .collect(),
        )
    }

    /// Parses every chunk as `T`; the error names the chunk's index.
    pub fn parse<T: DeserializeOwned>(&self) -> Result<Vec<T>, ChunkParseError> {
        self.0
            .iter()
            .enumerate()
            .map(|(index, text)| {
                serde_json::from_str(text).map_err(|source| ChunkParseError { index, source })
            })
            .collect()
    }

    /// How many chunks.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Each chunk's JSON text, in order.
    pub fn texts(&self) -> impl ExactSizeIterator<Item = &str> + Clone {
        self.0.iter().map(|text| &**text)
    }

    pub(crate) fn from_raw(raw: Vec<Box<RawValue>>) -> Self {
        TraceChunks(raw.into_iter().map(Box::<str>::from).collect())
    }
}

impl PartialEq for TraceChunks {
    fn eq(&self, other: &Self) -> bool {
        self.texts().eq(other.texts())
    }
}

impl fmt::Debug for TraceChunks {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.texts()).finish()
    }
}

impl Serialize for TraceChunks {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        // serde can only pass JSON text through as a `RawValue`, which checks
        // it again: fine off the hot path (trace reads, the CLI).
        let mut seq = serializer.serialize_seq(Some(self.0.len()))?;
        for text in &self.0 {
            let raw = RawValue::from_string(text.to_string()).map_err(S::Error::custom)?;
            seq.serialize_element(&raw)?;
        }
        seq.end()
    }
}

impl<'de> Deserialize<'de> for TraceChunks {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Vec::<Box<RawValue>>::deserialize(deserializer).map(TraceChunks::from_raw)
    }
}

/// The JSON array of `texts` (each a JSON text).
pub(crate) fn json_array<'a>(texts: impl Iterator<Item = &'a str> + Clone) -> String {
    let len: usize = texts.clone().map(|t| t.len() + 1).sum();
    let mut out = String::with_capacity(len + 2);
    out.push('[');
    for (i, text) in texts.enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(text);
    }
    out.push(']');
    out
}

/// Bytes of a chunk's hash: SHA-256 of its JSON text.
pub(crate) const HASH_LEN: usize = 32;

/// The hash of a chunk text. Cryptographic because it decides which stored
/// chunk a trace reads back: a collision must not be craftable.
pub(crate) fn chunk_hash(text: &str) -> [u8; HASH_LEN] {
    Sha256::digest(text.as_bytes()).into()
}

/// Where one chunk of a trace is stored: element `index` of the JSON array
/// in pack `pack_id`, whose text must hash to `hash` (checked on read).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ChunkRef {
    pub pack_id: i64,
    pub index: u32,
    pub hash: [u8; HASH_LEN],
}

impl ChunkRef {
    /// Bytes of one encoded reference: pack ID, index, hash (big-endian).
    pub const LEN: usize = 8 + 4 + HASH_LEN;

    pub fn encode_into(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.pack_id.to_be_bytes());
        out.extend_from_slice(&self.index.to_be_bytes());
        out.extend_from_slice(&self.hash);
    }

    /// Decodes a `chunk_refs` column; `None` if its length is not a
    /// multiple of [`ChunkRef::LEN`].
    pub fn decode_all(bytes: &[u8]) -> Option<Vec<ChunkRef>> {
        let exact = bytes.chunks_exact(Self::LEN);
        if !exact.remainder().is_empty() {
            return None;
        }
        Some(
            exact
                .map(|b| {
                    let (id, rest) = b.split_at(8);
                    let (index, hash) = rest.split_at(4);
                    let mut pack_id = [0; 8];
                    pack_id.copy_from_slice(id);
                    let mut idx = [0; 4];
                    idx.copy_from_slice(index);
                    let mut h = [0; HASH_LEN];
                    h.copy_from_slice(hash);
                    ChunkRef {
                        pack_id: i64::from_be_bytes(pack_id),
                        index: u32::from_be_bytes(idx),
                        hash: h,
                    }
                })
                .collect(),
        )
    }
}

/// A stored chunk that does not read as the type asked for.
#[derive(Debug, thiserror::Error)]
#[error("chunk {index}: {source}")]
pub struct ChunkParseError {
    /// The chunk's position in the trace.
    pub index: usize,
    /// Why it does not read.
    pub source: serde_json::Error,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn serializes_as_the_array_it_came_from() {
        let value = json!([{"chunk_id": "a", "content": "x \"y\" ✓", "n": 1.5}, "plain", null]);
        let chunks = TraceChunks::from_value(&value).unwrap_or_default();
        assert_eq!(chunks.len(), 3);
        assert_eq!(chunks.to_value(), value);
        let text = serde_json::to_string(&chunks).unwrap_or_default();
        assert_eq!(text, value.to_string());
        assert_eq!(json_array(chunks.texts()), text);
        assert_eq!(json_array(std::iter::empty()), "[]");
        let back: TraceChunks = serde_json::from_str(&text).unwrap_or_default();
        assert_eq!(back, chunks);
        assert_eq!(format!("{chunks:?}").matches("chunk_id").count(), 1);
    }

    #[test]
    fn chunks_serialize_as_serde_does() {
        let chunks = vec![
            Chunk {
                chunk_id: "c\"1".into(),
                content: "line\nnext \\ \u{1} ✓".into(),
                source_title: Some("T".into()),
                source_url: None,
                page_number: Some(7),
                score: Some(0.25),
            };
            2
        ];
        let fast = TraceChunks::from_chunks(&chunks);
        assert_eq!(Some(fast.clone()), TraceChunks::from_items(&chunks).ok());
        assert_eq!(fast.parse::<Chunk>().ok(), Some(chunks));
    }

    #[test]
    fn only_arrays_are_chunk_lists() {
        assert!(TraceChunks::from_value(&json!({"chunk_id": "a"})).is_none());
        assert!(TraceChunks::from_value(&json!("a")).is_none());
        assert!(serde_json::from_str::<TraceChunks>("{}").is_err());
        assert_eq!(
            TraceChunks::from_value(&json!([])),
            Some(TraceChunks::new())
        );
    }

    #[test]
    fn parse_names_the_bad_chunk() {
        #[derive(Debug, serde::Deserialize)]
        struct Chunk {
            #[allow(dead_code)]
            content: String,
        }
        let chunks = TraceChunks::from_value(&json!([{"content": "ok"}, {"content": 5}]))
            .unwrap_or_default();
        let err = chunks
            .parse::<Chunk>()
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(err.starts_with("chunk 1: invalid type"), "{err}");
    }

    #[test]
    fn chunk_refs_round_trip_and_reject_odd_lengths() {
        let refs = [
            ChunkRef {
                pack_id: 1,
                index: 0,
                hash: chunk_hash("\"a\""),
            },
            ChunkRef {
                pack_id: i64::MAX,
                index: u32::MAX,
                hash: chunk_hash("\"b\""),
            },
        ];
        let mut bytes = Vec::new();
        for r in &refs {
            r.encode_into(&mut bytes);
        }
        assert_eq!(bytes.len(), 2 * ChunkRef::LEN);
        assert_eq!(ChunkRef::decode_all(&bytes), Some(refs.to_vec()));
        assert_eq!(ChunkRef::decode_all(&bytes[1..]), None);
        assert_eq!(ChunkRef::decode_all(&[]), Some(Vec::new()));
        assert_ne!(chunk_hash("\"a\""), chunk_hash("\"b\""));
    }
}

//! One batch of inserts, shared by both insert paths ([`Store::insert_many`]
//! over the pool, and the SQLite writer thread of [`Store::commit`]), which
//! differ only in how they run the SQL: the statements, the records'
//! validation and encoding, the plan of where their chunks go (the reuse
//! cache of chunks this process stored, or a new pack), and the per-record
//! results once the transaction is over.
//!
//! [`Store::insert_many`]: crate::Store::insert_many
//! [`Store::commit`]: crate::Store::commit

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

use crate::chunks::{ChunkRef, HASH_LEN, chunk_hash, json_array};
use crate::error::StoreError;
use crate::record::{Columns, TraceRecord};

/// A chunk this process stored is referenced again, instead of stored
/// again, for this long after the time its pack is kept until.
pub(crate) const PACK_REUSE_MS: i64 = 3_600_000;
/// Most bytes of chunk text the reuse cache holds (its memory is about
/// this plus ~100 bytes a chunk); when full it starts over.
const PACK_CACHE_BYTES: usize = 32 << 20;
// The record's column list as a macro so the SQL can be `concat!`ed at
// compile time (the store's `SELECT`s use it too).
macro_rules! record_columns {
    () => {
        "trace_id, created_at_ms, tenant, kind, question, chunks, prompt, schema_hash, \
         raw_output, contract, warnings, provider, model, provider_request_id, options, \
         timings, error, chunk_refs, stop_reason, input_tokens, output_tokens, answer_form"
    };
}
pub(crate) use record_columns;

// `$n` placeholders work in both backends (sqlx maps them for SQLite).

/// A taken ID inserts nothing (0 rows) instead of aborting the transaction
/// the other records of a batch share.
pub(crate) const INSERT_OR_SKIP: &str = concat!(
    "INSERT INTO groundcite_traces (",
    record_columns!(),
    ", answerable) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, \
     $16, $17, $18, $19, $20, $21, $22, $23) ON CONFLICT (trace_id) DO NOTHING"
);
pub(crate) const INSERT_PACK: &str = "INSERT INTO groundcite_chunk_packs (body, last_used_ms) VALUES ($1, $2) \
     RETURNING pack_id";
/// Where a chunk this process stored lives, until when its pack is kept
/// (the pack's `last_used_ms`), and the SHA-256 its references carry.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Cached {
    pub(crate) pack_id: i64,
    pub(crate) index: u32,
    pub(crate) kept_until_ms: i64,
    pub(crate) hash: [u8; HASH_LEN],
}

impl Cached {
    /// Whether a trace that needs its chunks kept until `keep_ms` may
    /// reference this copy: the pack must be kept at least until
    /// `keep_ms - PACK_REUSE_MS`, which is what the purge relies on.
    fn usable_until(&self, keep_ms: i64) -> bool {
        self.kept_until_ms >= keep_ms.saturating_sub(PACK_REUSE_MS)
    }
}

/// Chunks this process stored recently, keyed by their exact text.
///
/// By text, not by hash: a lookup is a fast keyed hash and one comparison
/// of the bytes, so a chunk seen before costs no SHA-256 and a reference is
/// only ever made to a chunk with the very same text (no collision to
/// reason about). The price is the text kept in memory, bounded by
/// [`PACK_CACHE_BYTES`].
pub(crate) struct PackCache {
    by_text: HashMap<Box<str>, Cached, ahash::RandomState>,
    /// Bytes of text held.
    pub(crate) bytes: usize,
    /// Most bytes of text held ([`Store::set_chunk_cache_bytes`](crate::Store::set_chunk_cache_bytes)).
    pub(crate) budget: usize,
}

impl Default for PackCache {
    fn default() -> Self {
        PackCache {
            by_text: HashMap::default(),
            bytes: 0,
            budget: PACK_CACHE_BYTES,
        }
    }
}

impl PackCache {
    pub(crate) fn get(&self, text: &str) -> Option<&Cached> {
        self.by_text.get(text)
    }

    /// Remembers committed chunks; starts over when the budget would be
    /// exceeded.
    pub(crate) fn remember<'a>(&mut self, stored: impl IntoIterator<Item = (&'a str, Cached)>) {
        for (text, place) in stored {
            if let Some(old) = self.by_text.get_mut(text) {
                *old = place;
                continue;
            }
            if text.len() > self.budget {
                // Larger than the whole budget (or caching is off): not kept.
                continue;
            }
            if self.bytes + text.len() > self.budget {
                self.clear();
            }
            self.bytes += text.len();
            self.by_text.insert(text.into(), place);
        }
    }

    /// Sets the budget; what is held is dropped if it exceeds it.
    pub(crate) fn set_budget(&mut self, bytes: usize) {
        self.budget = bytes;
        if self.bytes > bytes {
            self.clear();
        }
    }

    /// Forgets every chunk (after a purge, which may have deleted packs).
    pub(crate) fn clear(&mut self) {
        self.by_text.clear();
        self.bytes = 0;
    }
}

/// Chunks of one `insert_many` call, borrowed from its records.
pub(crate) type BatchPlaces<'a> = HashMap<&'a str, Cached, ahash::RandomState>;

/// One result per record of a batch.
pub(crate) type Results = Vec<Result<(), StoreError>>;
/// A valid record's index in its batch, and its columns.
pub(crate) type Encoded<'a> = (usize, Columns<'a>);

/// Validates and encodes each record: the encoded ones with their index,
/// and one result per record (`Ok` until the database says otherwise).
pub(crate) fn encode_all<'a>(records: &[&'a TraceRecord]) -> (Results, Vec<Encoded<'a>>) {
    let mut results = Vec::with_capacity(records.len());
    let mut encoded = Vec::with_capacity(records.len());
    for (i, r) in records.iter().enumerate() {
        match Columns::encode(r) {
            Ok(c) => {
                encoded.push((i, c));
                results.push(Ok(()));
            }
            Err(e) => results.push(Err(e)),
        }
    }
    (results, encoded)
}

/// After the transaction: remembers the committed packs and turns the
/// outcome into per-record results (0 rows: the ID was taken).
pub(crate) fn settle(
    packs: &Mutex<PackCache>,
    plan: PackPlan<'_>,
    outcome: Result<Vec<(usize, u64)>, String>,
    records: &[&TraceRecord],
    encoded: &[(usize, Columns<'_>)],
    results: &mut [Result<(), StoreError>],
) {
    match outcome {
        Ok(affected) => {
            // Only committed packs are remembered.
            packs
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .remember(plan.stored);
            for (i, n) in affected {
                if n == 0 {
                    results[i] = Err(StoreError::Duplicate {
                        trace_id: records[i].trace_id.clone(),
                    });
                }
            }
        }
        Err(message) => {
            for (i, _) in encoded {
                results[*i] = Err(StoreError::database(
                    "insert",
                    sqlx::Error::Protocol(message.clone()),
                ));
            }
        }
    }
}

/// Where the chunks of one batch of records go: referenced where this
/// process stored them (the cache, or an earlier record of the batch), or
/// into one new pack per record. Shared by both insert paths, which differ
/// only in how they run the SQL.
pub(crate) struct PackPlan<'a> {
    /// Per record, per chunk: the cache's entry, looked up before the
    /// transaction so the lock is not held across it (one hash per chunk:
    /// a chunk seen before costs nothing more).
    known: Vec<Vec<Option<Cached>>>,
    /// Chunks stored by this batch, for the records after the one that
    /// stored them.
    stored: BatchPlaces<'a>,
}

/// One record's chunks: the places found, and the texts still to store.
pub(crate) struct PlanStep<'a> {
    places: Vec<Option<Cached>>,
    fresh: BatchPlaces<'a>,
    fresh_texts: Vec<&'a str>,
}

impl PlanStep<'_> {
    /// The new pack's body (a JSON array), if the record needs one.
    pub(crate) fn pack_body(&self) -> Option<String> {
        (!self.fresh_texts.is_empty()).then(|| json_array(self.fresh_texts.iter().copied()))
    }
}

impl<'a> PackPlan<'a> {
    pub(crate) fn new(packs: &Mutex<PackCache>, encoded: &[(usize, Columns<'a>)]) -> Self {
        let cache = packs.lock().unwrap_or_else(PoisonError::into_inner);
        let known = encoded
            .iter()
            .map(|(_, c)| {
                c.chunk_texts
                    .iter()
                    .map(|&t| cache.get(t).copied())
                    .collect()
            })
            .collect();
        PackPlan {
            known,
            stored: BatchPlaces::default(),
        }
    }

    /// Plans record `k` of the batch.
    pub(crate) fn step(&self, k: usize, columns: &Columns<'a>) -> PlanStep<'a> {
        let keep_ms = columns.keep_ms;
        let usable = |c: Option<&Cached>| c.filter(|c| c.usable_until(keep_ms)).copied();
        let places: Vec<Option<Cached>> = self.known[k]
            .iter()
            .zip(&columns.chunk_texts)
            .map(|(known, text)| usable(known.as_ref()).or_else(|| usable(self.stored.get(text))))
            .collect();
        let mut fresh = BatchPlaces::default();
        let mut fresh_texts: Vec<&str> = Vec::new();
        for (&text, place) in columns.chunk_texts.iter().zip(&places) {
            if place.is_none() && !fresh.contains_key(text) {
                let place = Cached {
                    pack_id: 0, // set once the pack row exists
                    index: u32::try_from(fresh_texts.len()).unwrap_or(u32::MAX),
                    kept_until_ms: keep_ms,
                    hash: chunk_hash(text),
                };
                fresh.insert(text, place);
                fresh_texts.push(text);
            }
        }
        PlanStep {
            places,
            fresh,
            fresh_texts,
        }
    }

    /// Completes record `step` once its pack (if any) is `pack_id`: fills
    /// the record's `chunk_refs`.
    pub(crate) fn finish(
        &mut self,
        step: PlanStep<'a>,
        pack_id: Option<i64>,
        columns: &mut Columns<'a>,
    ) -> Result<(), &'static str> {
        let PlanStep {
            mut places,
            mut fresh,
            ..
        } = step;
        if let Some(pack_id) = pack_id {
            for place in fresh.values_mut() {
                place.pack_id = pack_id;
            }
            for (&text, place) in columns.chunk_texts.iter().zip(&mut places) {
                if place.is_none() {
                    *place = fresh.get(text).copied();
                }
            }
            self.stored.extend(fresh);
        }
        columns.chunk_refs.clear();
        for place in places {
            let place = place.ok_or("a chunk was neither reused nor stored")?;
            ChunkRef {
                pack_id: place.pack_id,
                index: place.index,
                hash: place.hash,
            }
            .encode_into(&mut columns.chunk_refs);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pack_cache_keeps_to_its_byte_budget() {
        let place = |pack_id| Cached {
            pack_id,
            index: 0,
            kept_until_ms: 0,
            hash: [0; HASH_LEN],
        };
        let mut cache = PackCache {
            budget: 10,
            ..PackCache::default()
        };
        cache.remember([("abcd", place(1)), ("efgh", place(2))]);
        assert_eq!(cache.bytes, 8);
        // A text already held is updated, not counted again.
        cache.remember([("abcd", place(3))]);
        assert_eq!(
            (cache.bytes, cache.get("abcd").map(|c| c.pack_id)),
            (8, Some(3))
        );
        // Over budget: start over with the newcomer.
        cache.remember([("ijkl", place(4))]);
        assert_eq!(cache.bytes, 4);
        assert!(cache.get("abcd").is_none() && cache.get("efgh").is_none());
        assert_eq!(cache.get("ijkl").map(|c| c.pack_id), Some(4));
        // Exact text only.
        assert!(cache.get("ijk").is_none() && cache.get("ijkl ").is_none());
        // A text over the whole budget is not kept, and keeps the others.
        cache.remember([("0123456789a", place(5))]);
        assert_eq!(cache.bytes, 4);
        assert!(cache.get("0123456789a").is_none());
        // Budget 0: caching is off.
        let mut off = PackCache {
            budget: 0,
            ..PackCache::default()
        };
        off.remember([("a", place(6))]);
        assert_eq!((off.bytes, off.get("a").map(|c| c.pack_id)), (0, None));
    }
}

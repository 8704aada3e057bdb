//! The sentence store: every indexed chunk's sentences (the core's sentence
//! rule, statements only), their context (document title and headings) and,
//! when an embedding model is configured, one vector per sentence.
//!
//! Dense retrieval scores a chunk by its best sentence (the cosine of the
//! question with the sentence, context included), so the same vectors rank
//! the candidate quotes of the embedded model without embedding anything at
//! question time but the question.
//!
//! Stored as `groundcite-sentences.bin` in the index directory, written
//! atomically after each update, refreshed per file like the index (a file
//! whose bytes hash as before keeps its entry). Vectors are int8 with one
//! scale per vector (cosines within about 1% of float). A missing, corrupt
//! or other-model store is rebuilt from the documents; it never stops a
//! search.

use std::collections::BTreeMap;
use std::fs;
use std::io::Write;
use std::ops::Range;
use std::path::Path;

use crate::error::IndexError;

/// File name of the store inside the index directory.
pub(crate) const SENTENCES_FILE: &str = "groundcite-sentences.bin";

const MAGIC: &[u8; 4] = b"GCSS";
const VERSION: u32 = 1;

/// Longest string field read back (IDs, paths, context).
const MAX_FIELD: usize = 1 << 20;

/// An embedding model for sentences and questions: implemented outside
/// this crate (`groundcite_embed`), so the index needs no model code.
pub trait Embed: Send + Sync {
    /// Stable identity of the model and its weights: a change re-embeds.
    fn model_id(&self) -> &str;
    /// Vector length.
    fn dim(&self) -> usize;
    /// L2-normalised vectors, one per text, in order.
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedFailure>;
}

/// Why a model could not embed: its own error, whatever its crate.
pub type EmbedFailure = Box<dyn std::error::Error + Send + Sync>;

/// One sentence of a chunk.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredSentence {
    /// Byte range in the chunk's content (white space trimmed).
    pub start: u32,
    /// End of that range.
    pub end: u32,
    /// The vector's scale (int8 × scale ≈ the float vector).
    scale: f32,
}

/// One chunk's sentences.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ChunkEntry {
    pub(crate) chunk_id: String,
    /// Title and headings, `" > "`-separated.
    pub(crate) context: String,
    pub(crate) sentences: Vec<StoredSentence>,
    /// `sentences.len() * dim` int8 values.
    vectors: Vec<i8>,
}

/// One file's chunks.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct FileSentences {
    /// The file's hash when its entry was made.
    pub(crate) hash: String,
    pub(crate) chunks: Vec<ChunkEntry>,
}

/// The whole store.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct SentenceStore {
    /// Model of the vectors (`None`: no vectors).
    pub(crate) model: Option<String>,
    pub(crate) dim: usize,
    pub(crate) files: BTreeMap<String, FileSentences>,
}

/// A sentence found for a question.
#[derive(Debug, Clone, PartialEq)]
pub struct SentenceHit {
    /// The chunk.
    pub chunk_id: String,
    /// Byte range in the chunk's content.
    pub start: usize,
    /// End of that range.
    pub end: usize,
    /// Cosine similarity with the question (`None` without vectors).
    pub similarity: Option<f32>,
    /// Title and headings above the sentence.
    pub context: String,
}

impl ChunkEntry {
    /// Whether every sentence has a vector of `dim` values.
    fn has_vectors(&self, dim: usize) -> bool {
        dim > 0 && self.vectors.len() == self.sentences.len() * dim
    }

    /// Builds an entry without vectors (see [`embed_entries`]). `headings`
    /// are the byte ranges of `content` that an extracted document (HTML,
    /// DOCX, PDF, …) marks as headings: their text is context, never a
    /// statement, as a Markdown `#` line is not.
    pub(crate) fn build(
        chunk_id: &str,
        content: &str,
        headings: &[Range<usize>],
        context: &str,
    ) -> ChunkEntry {
        let spans: Vec<(usize, usize)> = groundcite_core::sentences::statement_spans_in(
            content,
            crate::chunker::chunk_markup(chunk_id),
        )
        .into_iter()
        .map(|r| {
            let s = &content[r.clone()];
            let lead = s.len() - s.trim_start().len();
            let trail = s.len() - s.trim_end().len();
            (r.start + lead, r.end - trail)
        })
        .filter(|(a, b)| a < b)
        .filter(|&(a, b)| !headings.iter().any(|h| h.start <= a && b <= h.end))
        .collect();
        let sentences: Vec<StoredSentence> = spans
            .iter()
            .filter_map(|&(a, b)| {
                Some(StoredSentence {
                    start: u32::try_from(a).ok()?,
                    end: u32::try_from(b).ok()?,
                    scale: 0.0,
                })
            })
            .collect();
        ChunkEntry {
            chunk_id: chunk_id.to_string(),
            context: context.to_string(),
            sentences,
            vectors: Vec::new(),
        }
    }
}

/// Embeds `context: sentence` for every sentence of `entries` (a file's
/// chunks; `contents[i]` is the content of `entries[i]`) in one call, so
/// the model runs full batches of similar lengths instead of one small
/// batch per chunk (1.6x the sentences per second on 2 cores, BENCHMARKS.md),
/// and embeds a repeated text once (boilerplate, a sentence that two
/// overlapping chunks share).
pub(crate) fn embed_entries(
    entries: &mut [ChunkEntry],
    contents: &[&str],
    e: &dyn Embed,
) -> Result<(), String> {
    if entries.len() != contents.len() {
        return Err("one content per chunk entry is needed".into());
    }
    let mut unique: Vec<String> = Vec::new();
    let mut slot: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    let mut which: Vec<usize> = Vec::new();
    for (entry, content) in entries.iter().zip(contents) {
        for s in &entry.sentences {
            let sentence = content
                .get(s.start as usize..s.end as usize)
                .ok_or("a sentence's range is outside its chunk")?;
            let text = embed_text(&entry.context, sentence);
            let at = match slot.get(&text) {
                Some(&at) => at,
                None => {
                    slot.insert(text.clone(), unique.len());
                    unique.push(text);
                    unique.len() - 1
                }
            };
            which.push(at);
        }
    }
    if unique.is_empty() {
        return Ok(());
    }
    let refs: Vec<&str> = unique.iter().map(String::as_str).collect();
    let vecs = e.embed(&refs).map_err(|e| e.to_string())?;
    if vecs.len() != unique.len() || vecs.iter().any(|v| v.len() != e.dim()) {
        return Err("the embedding model returned the wrong number of vectors".into());
    }
    let quantized: Vec<(Vec<i8>, f32)> = vecs.iter().map(|v| quantize(v)).collect();
    let mut next = which.into_iter();
    for entry in entries.iter_mut() {
        entry.vectors = Vec::with_capacity(entry.sentences.len() * e.dim());
        for s in &mut entry.sentences {
            let (q, scale) = &quantized[next.next().ok_or("a sentence lost its vector")?];
            s.scale = *scale;
            entry.vectors.extend_from_slice(q);
        }
    }
    Ok(())
}

/// What is embedded for a sentence: its context, then the sentence (a
/// sentence like "It takes 5 days." means little without its heading).
pub fn embed_text(context: &str, sentence: &str) -> String {
    if context.is_empty() {
        sentence.to_string()
    } else {
        format!("{context}: {sentence}")
    }
}

fn quantize(v: &[f32]) -> (Vec<i8>, f32) {
    let max = v.iter().fold(0.0f32, |m, x| m.max(x.abs()));
    if max == 0.0 || !max.is_finite() {
        return (vec![0; v.len()], 0.0);
    }
    let scale = max / 127.0;
    let q = v
        .iter()
        .map(|x| {
            let r = (x / scale).round().clamp(-127.0, 127.0);
            // In range by the clamp.
            r as i8
        })
        .collect();
    (q, scale)
}

impl SentenceStore {
    /// Whether `rel`'s entry was made from bytes hashing to `hash` and, when
    /// `model` is given, holds that model's vectors for every sentence.
    /// Without `model` (BM25 alone) any entry of the right bytes is current:
    /// its vectors are kept for the next hybrid run, not thrown away.
    pub(crate) fn is_current(&self, rel: &str, hash: &str, model: Option<&str>) -> bool {
        let Some(f) = self.files.get(rel).filter(|f| f.hash == hash) else {
            return false;
        };
        match model {
            None => true,
            Some(m) => {
                self.model.as_deref() == Some(m) && f.chunks.iter().all(|c| c.has_vectors(self.dim))
            }
        }
    }

    /// The stored sentences of `chunk_id` scored against `query` (a
    /// normalised question vector, or `None`).
    pub(crate) fn sentences_of(&self, chunk_id: &str, query: Option<&[f32]>) -> Vec<SentenceHit> {
        let Some(entry) = self.find(chunk_id) else {
            return Vec::new();
        };
        entry
            .sentences
            .iter()
            .enumerate()
            .map(|(i, s)| SentenceHit {
                chunk_id: entry.chunk_id.clone(),
                start: s.start as usize,
                end: s.end as usize,
                similarity: query.and_then(|q| self.cosine(entry, i, q)),
                context: entry.context.clone(),
            })
            .collect()
    }

    /// The context (title and headings) of `chunk_id`.
    pub(crate) fn context_of(&self, chunk_id: &str) -> Option<&str> {
        self.find(chunk_id).map(|e| e.context.as_str())
    }

    fn find(&self, chunk_id: &str) -> Option<&ChunkEntry> {
        let path = chunk_id.rsplit_once("#chunk-").map_or(chunk_id, |(p, _)| p);
        self.files
            .get(path)
            .and_then(|f| f.chunks.iter().find(|c| c.chunk_id == chunk_id))
    }

    fn cosine(&self, entry: &ChunkEntry, i: usize, q: &[f32]) -> Option<f32> {
        if self.dim == 0 || q.len() != self.dim {
            return None;
        }
        let v = entry.vectors.get(i * self.dim..(i + 1) * self.dim)?;
        let dot: f32 = v.iter().zip(q).map(|(&a, &b)| f32::from(a) * b).sum();
        Some(dot * entry.sentences[i].scale)
    }

    /// Every chunk's best sentence cosine with `query`, best first, at most
    /// `limit` chunks.
    pub(crate) fn best_chunks(&self, query: &[f32], limit: usize) -> Vec<(String, f32)> {
        if self.dim == 0 || query.len() != self.dim {
            return Vec::new();
        }
        let mut out: Vec<(String, f32)> = Vec::new();
        for f in self.files.values() {
            for c in &f.chunks {
                let best = (0..c.sentences.len())
                    .filter_map(|i| self.cosine(c, i, query))
                    .fold(f32::MIN, f32::max);
                if best > f32::MIN {
                    out.push((c.chunk_id.clone(), best));
                }
            }
        }
        out.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        out.truncate(limit);
        out
    }

    /// The `limit` sentences of the whole corpus most similar to `query`,
    /// best first.
    pub(crate) fn best_sentences(&self, query: &[f32], limit: usize) -> Vec<SentenceHit> {
        if self.dim == 0 || query.len() != self.dim || limit == 0 {
            return Vec::new();
        }
        let mut scored: Vec<(f32, &ChunkEntry, usize)> = Vec::new();
        for f in self.files.values() {
            for c in &f.chunks {
                for i in 0..c.sentences.len() {
                    if let Some(sim) = self.cosine(c, i, query) {
                        scored.push((sim, c, i));
                    }
                }
            }
        }
        let by_score = |a: &(f32, &ChunkEntry, usize), b: &(f32, &ChunkEntry, usize)| {
            b.0.total_cmp(&a.0)
                .then_with(|| a.1.chunk_id.cmp(&b.1.chunk_id))
                .then_with(|| a.2.cmp(&b.2))
        };
        if scored.len() > limit {
            scored.select_nth_unstable_by(limit - 1, by_score);
            scored.truncate(limit);
        }
        scored.sort_by(by_score);
        scored
            .into_iter()
            .map(|(sim, c, i)| SentenceHit {
                chunk_id: c.chunk_id.clone(),
                start: c.sentences[i].start as usize,
                end: c.sentences[i].end as usize,
                similarity: Some(sim),
                context: c.context.clone(),
            })
            .collect()
    }

    /// Sentences with vectors.
    pub(crate) fn vector_count(&self) -> usize {
        if self.dim == 0 {
            return 0;
        }
        self.files
            .values()
            .flat_map(|f| &f.chunks)
            .map(|c| c.vectors.len() / self.dim)
            .sum()
    }

    /// Reads the store of `index_dir`; a missing or unreadable one reads as
    /// empty (the next update rebuilds it).
    pub(crate) fn load(index_dir: &Path) -> Result<SentenceStore, IndexError> {
        let path = index_dir.join(SENTENCES_FILE);
        match fs::read(&path) {
            Ok(bytes) => Ok(decode(&bytes).unwrap_or_default()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(SentenceStore::default()),
            Err(e) => Err(IndexError::io("read sentence store", &path, e)),
        }
    }

    /// Writes the store atomically (temporary file, then rename).
    pub(crate) fn save(&self, index_dir: &Path) -> Result<(), IndexError> {
        let path = index_dir.join(SENTENCES_FILE);
        let tmp = index_dir.join(format!("{SENTENCES_FILE}.tmp"));
        let bytes = encode(self);
        let mut f =
            fs::File::create(&tmp).map_err(|e| IndexError::io("write sentence store", &tmp, e))?;
        f.write_all(&bytes)
            .and_then(|()| f.sync_all())
            .map_err(|e| IndexError::io("write sentence store", &tmp, e))?;
        fs::rename(&tmp, &path).map_err(|e| IndexError::io("write sentence store", &path, e))
    }
}

fn put_u32(out: &mut Vec<u8>, v: usize) {
    out.extend_from_slice(&u32::try_from(v).unwrap_or(u32::MAX).to_le_bytes());
}

fn put_str(out: &mut Vec<u8>, s: &str) {
    put_u32(out, s.len());
    out.extend_from_slice(s.as_bytes());
}

fn encode(store: &SentenceStore) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(MAGIC);
    put_u32(&mut out, VERSION as usize);
    put_u32(&mut out, store.dim);
    put_str(&mut out, store.model.as_deref().unwrap_or(""));
    put_u32(&mut out, store.files.len());
    for (path, f) in &store.files {
        put_str(&mut out, path);
        put_str(&mut out, &f.hash);
        put_u32(&mut out, f.chunks.len());
        for c in &f.chunks {
            put_str(&mut out, &c.chunk_id);
            put_str(&mut out, &c.context);
            put_u32(&mut out, c.sentences.len());
            let has_vectors = c.has_vectors(store.dim);
            out.push(u8::from(has_vectors));
            for (i, s) in c.sentences.iter().enumerate() {
                put_u32(&mut out, s.start as usize);
                put_u32(&mut out, s.end as usize);
                if has_vectors {
                    out.extend_from_slice(&s.scale.to_le_bytes());
                    out.extend(
                        c.vectors[i * store.dim..(i + 1) * store.dim]
                            .iter()
                            .map(|&b| b.cast_unsigned()),
                    );
                }
            }
        }
    }
    out
}

/// A bounds-checked reader: every read can fail, nothing can panic.
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn take(&mut self, n: usize) -> Option<&[u8]> {
        let end = self.at.checked_add(n)?;
        let s = self.bytes.get(self.at..end)?;
        self.at = end;
        Some(s)
    }

    fn u32(&mut self) -> Option<usize> {
        let b = self.take(4)?;
        let v = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
        usize::try_from(v).ok()
    }

    fn f32(&mut self) -> Option<f32> {
        let b = self.take(4)?;
        Some(f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn string(&mut self) -> Option<String> {
        let n = self.u32()?;
        if n > MAX_FIELD {
            return None;
        }
        String::from_utf8(self.take(n)?.to_vec()).ok()
    }

    /// A count that cannot exceed the bytes left (each item takes at least
    /// `min_item` bytes), so a corrupt count cannot reserve memory.
    fn count(&mut self, min_item: usize) -> Option<usize> {
        let n = self.u32()?;
        (n.saturating_mul(min_item) <= self.bytes.len() - self.at).then_some(n)
    }
}

fn decode(bytes: &[u8]) -> Option<SentenceStore> {
    let mut r = Reader { bytes, at: 0 };
    if r.take(4)? != MAGIC || r.u32()? != VERSION as usize {
        return None;
    }
    let dim = r.u32()?;
    if dim > 4096 {
        return None;
    }
    let model = r.string()?;
    let mut store = SentenceStore {
        model: (!model.is_empty()).then_some(model),
        dim,
        files: BTreeMap::new(),
    };
    let n_files = r.count(12)?;
    for _ in 0..n_files {
        let path = r.string()?;
        let hash = r.string()?;
        let n_chunks = r.count(13)?;
        let mut chunks = Vec::with_capacity(n_chunks);
        for _ in 0..n_chunks {
            let chunk_id = r.string()?;
            let context = r.string()?;
            let n = r.count(8)?;
            let has_vectors = r.take(1)?[0] == 1 && dim > 0;
            let mut sentences = Vec::with_capacity(n);
            let mut vectors = Vec::new();
            for _ in 0..n {
                let start = u32::try_from(r.u32()?).ok()?;
                let end = u32::try_from(r.u32()?).ok()?;
                if start > end {
                    return None;
                }
                let mut scale = 0.0;
                if has_vectors {
                    scale = r.f32()?;
                    if !scale.is_finite() {
                        return None;
                    }
                    vectors.extend(r.take(dim)?.iter().map(|&b| b.cast_signed()));
                }
                sentences.push(StoredSentence { start, end, scale });
            }
            // A chunk without vectors in a store with vectors is a file
            // changed while indexing without the model: it reads as it is
            // (no similarity) and the next update with the model embeds that
            // file alone (`is_current`).
            chunks.push(ChunkEntry {
                chunk_id,
                context,
                sentences,
                vectors,
            });
        }
        store.files.insert(path, FileSentences { hash, chunks });
    }
    (r.at == bytes.len()).then_some(store)
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Toy;

    impl Embed for Toy {
        fn model_id(&self) -> &str {
            "toy"
        }
        fn dim(&self) -> usize {
            3
        }
        fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedFailure> {
            Ok(texts
                .iter()
                .map(|t| {
                    let v = [t.len() as f32, t.matches('e').count() as f32, 1.0];
                    let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
                    v.iter().map(|x| x / n).collect()
                })
                .collect())
        }
    }

    fn store() -> SentenceStore {
        let content = "# Refunds\n\nRefunds take five days. Opened software can't be refunded.\n";
        let entry = ChunkEntry::build("a.md#chunk-1", content, &[], "Refunds");
        let mut entries = [entry];
        embed_entries(&mut entries, &[content], &Toy).expect("embedded");
        let [entry] = entries;
        let mut s = SentenceStore {
            model: Some("toy".into()),
            dim: 3,
            files: BTreeMap::new(),
        };
        s.files.insert(
            "a.md".into(),
            FileSentences {
                hash: "h".into(),
                chunks: vec![entry],
            },
        );
        s
    }

    /// Counts the texts it is asked to embed.
    struct Counting(std::sync::atomic::AtomicUsize);

    impl Embed for Counting {
        fn model_id(&self) -> &str {
            "toy"
        }
        fn dim(&self) -> usize {
            3
        }
        fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedFailure> {
            self.0
                .fetch_add(texts.len(), std::sync::atomic::Ordering::Relaxed);
            Toy.embed(texts)
        }
    }

    #[test]
    fn a_file_is_embedded_in_one_call_and_a_repeated_text_once() {
        // Two overlapping chunks share a sentence; the third chunk repeats
        // it under another heading, which is another text.
        let a = "Refunds take five days. Opened software can't be refunded.";
        let b = "Opened software can't be refunded. Gift cards never expire.";
        let c = "Opened software can't be refunded.";
        let mut entries = [
            ChunkEntry::build("f.md#chunk-1", a, &[], "Refunds"),
            ChunkEntry::build("f.md#chunk-2", b, &[], "Refunds"),
            ChunkEntry::build("f.md#chunk-3", c, &[], "Gift cards"),
        ];
        let counting = Counting(Default::default());
        embed_entries(&mut entries, &[a, b, c], &counting).expect("embedded");
        assert_eq!(counting.0.into_inner(), 4, "five sentences, four texts");
        for (entry, content) in entries.iter().zip([a, b, c]) {
            assert!(entry.has_vectors(3));
            for (i, s) in entry.sentences.iter().enumerate() {
                let text = embed_text(&entry.context, &content[s.start as usize..s.end as usize]);
                let (q, scale) = quantize(&Toy.embed(&[&text]).expect("v")[0]);
                assert_eq!(entry.vectors[i * 3..(i + 1) * 3], q[..], "{text}");
                assert_eq!(s.scale, scale, "{text}");
            }
        }
        // A content that does not match its entry is an error, not a panic.
        let mut short = [ChunkEntry::build("f.md#chunk-1", a, &[], "Refunds")];
        assert!(embed_entries(&mut short, &["Refunds."], &Toy).is_err());
        assert!(embed_entries(&mut short, &[], &Toy).is_err());
    }

    #[test]
    fn sentences_are_statements_with_trimmed_spans() {
        let s = store();
        let content = "# Refunds\n\nRefunds take five days. Opened software can't be refunded.\n";
        let hits = s.sentences_of("a.md#chunk-1", None);
        let texts: Vec<&str> = hits.iter().map(|h| &content[h.start..h.end]).collect();
        assert_eq!(
            texts,
            vec![
                "Refunds take five days.",
                "Opened software can't be refunded."
            ]
        );
        assert!(hits.iter().all(|h| h.similarity.is_none()));
        let q = Toy.embed(&["Refunds: Refunds take five days."]).expect("v");
        let scored = s.sentences_of("a.md#chunk-1", Some(&q[0]));
        let first = scored[0].similarity.expect("scored");
        assert!((first - 1.0).abs() < 0.02, "{first}");
        assert_eq!(s.best_chunks(&q[0], 5).len(), 1);
    }

    #[test]
    fn bm25_keeps_vectors_and_a_chunk_without_them_is_embedded_alone() {
        let mut s = store();
        assert!(s.is_current("a.md", "h", Some("toy")));
        assert!(s.is_current("a.md", "h", None));
        assert!(!s.is_current("a.md", "other", None));
        assert!(!s.is_current("a.md", "h", Some("other-model")));
        // A file changed while indexing without the model: no vectors.
        let content = "# Cards\n\nCards arrive in 3 days.\n";
        let bare = ChunkEntry::build("b.md#chunk-1", content, &[], "Cards");
        s.files.insert(
            "b.md".into(),
            FileSentences {
                hash: "hb".into(),
                chunks: vec![bare],
            },
        );
        assert!(s.is_current("b.md", "hb", None));
        assert!(!s.is_current("b.md", "hb", Some("toy")));
        assert!(s.is_current("a.md", "h", Some("toy")));
        // It is stored and read back as it is, not as a damaged store.
        let back = decode(&encode(&s)).expect("a mixed store reads back");
        assert_eq!(back, s);
        assert_eq!(back.vector_count(), 2);
        let q = Toy.embed(&["Cards arrive"]).expect("v");
        assert!(
            back.sentences_of("b.md#chunk-1", Some(&q[0]))[0]
                .similarity
                .is_none()
        );
    }

    #[test]
    fn the_store_round_trips_and_refuses_corruption() {
        let s = store();
        let bytes = encode(&s);
        assert_eq!(decode(&bytes), Some(s.clone()));
        // Any truncation or flipped count reads as "rebuild", never a panic.
        for cut in 0..bytes.len() {
            assert_eq!(decode(&bytes[..cut]), None, "cut at {cut}");
        }
        let mut bad = bytes.clone();
        bad[12] = 0xff;
        let _ = decode(&bad);
        for i in 0..bytes.len() {
            let mut b = bytes.clone();
            b[i] ^= 0x5a;
            let _ = decode(&b);
        }
    }
}

//! The on-disk index: incremental updates and BM25 search.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::io::Read;
use std::ops::Range;
use std::path::{Path, PathBuf};

use groundcite_core::{Chunk, Contract, QuoteLocation, Span};
use serde::{Deserialize, Serialize};
use tantivy::collector::TopDocs;
use tantivy::directory::MmapDirectory;
use tantivy::query::{AllQuery, BooleanQuery, BoostQuery, Query, TermQuery};
use tantivy::schema::{
    Field, IndexRecordOption, STORED, STRING, Schema, TextFieldIndexing, TextOptions, Value,
};
use tantivy::tokenizer::{
    Language, LowerCaser, RemoveLongFilter, SimpleTokenizer, Stemmer, StopWordFilter, TextAnalyzer,
};
use tantivy::{IndexReader, IndexSettings, IndexWriter, ReloadPolicy, TantivyDocument, Term};

use crate::chunker::{ChunkerConfig, DocChunk, chunk_extracted};
use crate::document::{extracted_title, source_url};
use crate::error::{IndexError, IndexErrorKind};
use crate::formats::{DocLayout, Extracted, Format, extract};
use crate::layout::{LAYOUT_DIR, StoredLayout};
use crate::manifest::{FileEntry, Manifest, Settings, hash_hex};
use crate::sentences::{ChunkEntry, Embed, FileSentences, SentenceHit, SentenceStore};
use crate::spelling::{self, Corrected};
use crate::walk::{Walk, find_documents};

/// Files larger than this (10 MiB) are skipped.
pub const MAX_FILE_BYTES: u64 = 10 * 1024 * 1024;

/// At most this many distinct query terms are searched; the rest of a very
/// long query is ignored.
pub const MAX_QUERY_TERMS: usize = 64;

/// Weight of a match in the document title, relative to one in the content.
const TITLE_BOOST: f32 = 1.5;
/// Weight of a match in the chunk's headings, relative to one in the content.
const HEADINGS_BOOST: f32 = 1.5;

/// Name of the analyzer registered with tantivy.
const ANALYZER: &str = "groundcite_en";

/// Indexing memory budget; one indexing thread.
const WRITER_MEMORY_BYTES: usize = 50_000_000;

/// Words too common in questions and help text to help ranking. Lucene's
/// English list plus question words and pronouns.
const STOP_WORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "if", "in", "into", "is", "it",
    "no", "not", "of", "on", "or", "such", "that", "the", "their", "then", "there", "these",
    "they", "this", "to", "was", "will", "with", // Lucene
    "how", "what", "when", "where", "which", "who", "why", "do", "does", "did", "i", "me", "my",
    "you", "your", "we", "our", "us", "can", "could", "would", "should", "have", "has", "from",
    // Degree words of questions ("how much", "too many"): they name no topic.
    "much", "many", "too", "very",
];

/// What [`Index::update`] indexes and how.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct IndexConfig {
    /// How documents are cut into chunks.
    pub chunker: ChunkerConfig,
    /// When set, each chunk's `source_url` is this URL joined with the
    /// document's relative path (see [`source_url`]).
    pub base_url: Option<String>,
}

/// Progress of an update, reported once per document as it is reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Progress<'a> {
    /// Documents handled so far, this one included.
    pub done: usize,
    /// Documents found.
    pub total: usize,
    /// Relative path of the document just handled.
    pub path: &'a str,
}

/// What an update did. Counts are files unless said otherwise.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct UpdateReport {
    /// Files indexed for the first time.
    pub added: usize,
    /// Files re-indexed: their content changed, or the settings did (a
    /// change of chunker configuration or base URL re-indexes everything).
    pub changed: usize,
    /// Files whose chunks were removed: deleted, or now skipped.
    pub removed: usize,
    /// Files left as they were (not read past hashing, not re-chunked).
    pub unchanged: usize,
    /// Chunks written by this update.
    pub chunks: usize,
    /// Chunks in the index after the update.
    pub total_chunks: usize,
    /// Documents not indexed, as (relative path, reason): invalid UTF-8, over
    /// [`MAX_FILE_BYTES`], unreadable, symbolic links, unusable names.
    pub skipped: Vec<(String, String)>,
    /// Files of kinds that are not indexed (see [`Format`](crate::Format)),
    /// counted by extension (`.org`, or "no extension"); hidden
    /// files are not counted.
    #[serde(default)]
    pub other_kinds: BTreeMap<String, usize>,
}

/// Size of the index.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct IndexStats {
    /// Documents indexed.
    pub documents: usize,
    /// Chunks searchable.
    pub chunks: usize,
    /// Sentences with a vector (0 without an embedding model).
    pub sentence_vectors: usize,
}

#[derive(Debug, Clone, Copy)]
struct Fields {
    chunk_id: Field,
    path: Field,
    title: Field,
    headings: Field,
    content: Field,
    url: Field,
    page: Field,
}

fn schema() -> (Schema, Fields) {
    let mut builder = Schema::builder();
    let analyzed = TextOptions::default().set_indexing_options(
        TextFieldIndexing::default()
            .set_tokenizer(ANALYZER)
            .set_index_option(IndexRecordOption::WithFreqs),
    );
    let fields = Fields {
        chunk_id: builder.add_text_field("chunk_id", STRING | STORED),
        path: builder.add_text_field("path", STRING | STORED),
        title: builder.add_text_field("title", analyzed.clone().set_stored()),
        headings: builder.add_text_field("headings", analyzed.clone()),
        content: builder.add_text_field("content", analyzed.set_stored()),
        url: builder.add_text_field("url", STORED),
        page: builder.add_u64_field("page", STORED),
    };
    (builder.build(), fields)
}

/// How much of a question some chunks cover ([`Index::coverage`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Coverage {
    /// Share of the question's words, weighted by inverse document
    /// frequency, found in the chunks (0 to 1).
    pub share: f64,
    /// The question's words (analyzed: stemmed, lower-case) that no chunk
    /// of the whole index contains.
    pub unknown: Vec<String>,
}

/// The distinct analyzed words of `text`.
fn analyzed(text: &str) -> BTreeSet<String> {
    let mut analyzer = analyzer();
    let mut stream = analyzer.token_stream(text);
    let mut out = BTreeSet::new();
    while out.len() < MAX_QUERY_TERMS && stream.advance() {
        out.insert(stream.token().text.clone());
    }
    out
}

fn analyzer() -> TextAnalyzer {
    TextAnalyzer::builder(SimpleTokenizer::default())
        .filter(RemoveLongFilter::limit(40))
        .filter(LowerCaser)
        .filter(StopWordFilter::remove(
            STOP_WORDS.iter().map(|w| (*w).to_owned()),
        ))
        .filter(Stemmer::new(Language::English))
        .build()
}

/// An embedded corpus index: a directory holding a tantivy BM25 index of
/// document chunks and a manifest of the files it holds.
///
/// One [`Index`] may search while another process reads; only one may
/// [`update`](Index::update) at a time (others get
/// [`IndexErrorKind::Locked`]).
pub struct Index {
    dir: PathBuf,
    index: tantivy::Index,
    reader: IndexReader,
    fields: Fields,
    manifest: Manifest,
    sentences: SentenceStore,
}

impl std::fmt::Debug for Index {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Index")
            .field("dir", &self.dir)
            .field("documents", &self.manifest.files.len())
            .finish_non_exhaustive()
    }
}

impl Index {
    /// Opens the index in `index_dir`, creating the directory and an empty
    /// index if needed. Refuses a non-empty directory that holds no index.
    pub fn open_or_create(index_dir: &Path) -> Result<Index, IndexError> {
        fs::create_dir_all(index_dir)
            .map_err(|e| IndexError::io("create directory", index_dir, e))?;
        let dir = index_dir.to_owned();
        let engine = |e| IndexError::engine(&dir, e);
        let (schema, fields) = schema();
        let exists = dir.join("meta.json").is_file();
        if !exists {
            let mut entries =
                fs::read_dir(&dir).map_err(|e| IndexError::io("read directory", &dir, e))?;
            if entries.next().is_some() {
                return Err(IndexErrorKind::NotAnIndex { path: dir }.into());
            }
        }
        let directory =
            MmapDirectory::open(&dir).map_err(|e| engine(tantivy::TantivyError::from(e)))?;
        let index = if exists {
            let index = tantivy::Index::open(directory).map_err(engine)?;
            if index.schema() != schema {
                return Err(IndexErrorKind::IncompatibleSchema { path: dir }.into());
            }
            index
        } else {
            tantivy::Index::create(directory, schema, IndexSettings::default()).map_err(engine)?
        };
        index.tokenizers().register(ANALYZER, analyzer());
        let reader = index
            .reader_builder()
            .reload_policy(ReloadPolicy::Manual)
            .try_into()
            .map_err(engine)?;
        let manifest = Manifest::load(&dir)?;
        let sentences = SentenceStore::load(&dir)?;
        Ok(Index {
            dir,
            index,
            reader,
            fields,
            manifest,
            sentences,
        })
    }

    /// The index directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Documents and chunks currently searchable.
    pub fn stats(&self) -> IndexStats {
        IndexStats {
            documents: self.manifest.files.len(),
            chunks: usize::try_from(self.reader.searcher().num_docs()).unwrap_or(usize::MAX),
            sentence_vectors: self.sentences.vector_count(),
        }
    }

    /// The embedding model of the stored sentence vectors, if any.
    pub fn vector_model(&self) -> Option<&str> {
        self.sentences.model.as_deref()
    }

    /// Brings the index in line with the documents (every [`Format`])
    /// under `docs_dir` (recursively; hidden entries, symbolic links and the
    /// index directory itself are left out).
    ///
    /// Only what changed is touched: files whose bytes hash as before are not
    /// re-read into chunks; changed files have their old chunks replaced;
    /// deleted files lose theirs. A change of `cfg` (chunker or base URL)
    /// re-indexes everything. Files that cannot be indexed are listed in
    /// [`UpdateReport::skipped`]; if they were indexed before, their chunks
    /// are removed. `progress` is called once per file found.
    pub fn update(
        &mut self,
        docs_dir: &Path,
        cfg: &IndexConfig,
        progress: &mut dyn FnMut(Progress<'_>),
    ) -> Result<UpdateReport, IndexError> {
        self.update_with(docs_dir, cfg, None, progress)
    }

    /// [`Index::update`], also refreshing the sentence store: each changed
    /// file's sentences are embedded with `embed` (when given); a change of
    /// embedding model re-embeds every file without re-indexing it. Without
    /// `embed`, stored vectors of unchanged files are kept.
    pub fn update_with(
        &mut self,
        docs_dir: &Path,
        cfg: &IndexConfig,
        embed: Option<&dyn Embed>,
        progress: &mut dyn FnMut(Progress<'_>),
    ) -> Result<UpdateReport, IndexError> {
        let dir = self.dir.clone();
        let model = embed.map(|e| e.model_id().to_string());
        if model.is_some() && self.sentences.model != model {
            // Vectors of another model (or none) cannot be mixed with these.
            self.sentences = SentenceStore {
                model: model.clone(),
                dim: embed.map_or(0, Embed::dim),
                files: Default::default(),
            };
        }
        let mut sentences_changed = false;
        let engine = |e| IndexError::engine(&dir, e);
        let settings = Settings::new(cfg.chunker, cfg.base_url.clone());
        let rebuild = self.manifest.settings.as_ref() != Some(&settings);
        let Walk {
            found,
            skipped,
            other_kinds,
        } = find_documents(docs_dir, &self.dir)?;
        let mut report = UpdateReport {
            skipped,
            other_kinds,
            ..UpdateReport::default()
        };

        let mut writer: Option<IndexWriter> = None;
        let open_writer = |writer: &mut Option<IndexWriter>| -> Result<(), IndexError> {
            if writer.is_none() {
                let w = self
                    .index
                    .writer_with_num_threads(1, WRITER_MEMORY_BYTES)
                    .map_err(engine)?;
                if rebuild {
                    w.delete_all_documents().map_err(engine)?;
                }
                *writer = Some(w);
            }
            Ok(())
        };
        if rebuild {
            open_writer(&mut writer)?;
        }

        let old_files = &self.manifest.files;
        let mut new_files = std::collections::BTreeMap::new();
        let total = found.len();
        for (i, doc) in found.iter().enumerate() {
            let outcome = read_document(&doc.abs);
            progress(Progress {
                done: i + 1,
                total,
                path: &doc.rel,
            });
            let bytes = match outcome {
                Ok(bytes) => bytes,
                Err(reason) => {
                    report.skipped.push((doc.rel.clone(), reason));
                    continue;
                }
            };
            let hash = hash_hex(&bytes);
            let old = old_files.get(&doc.rel);
            let sentences_current =
                !rebuild && self.sentences.is_current(&doc.rel, &hash, model.as_deref());
            if let Some(old) = old.filter(|old| !rebuild && old.xxh3_128 == hash) {
                report.unchanged += 1;
                report.total_chunks += old.chunks;
                new_files.insert(doc.rel.clone(), old.clone());
                if !sentences_current && let Ok(extracted) = extract(&doc.rel, &bytes) {
                    let chunks = chunk_extracted(&doc.rel, &extracted, &cfg.chunker);
                    let entry = file_sentences(&doc.rel, &extracted, &chunks, &hash, embed)
                        .map_err(|m| IndexError::embedding(&self.dir, &doc.rel, m))?;
                    self.sentences.files.insert(doc.rel.clone(), entry);
                    sentences_changed = true;
                }
                continue;
            }
            let extracted = match extract(&doc.rel, &bytes) {
                Ok(extracted) => extracted,
                Err(e) => {
                    report.skipped.push((doc.rel.clone(), e.to_string()));
                    continue;
                }
            };
            open_writer(&mut writer)?;
            let Some(w) = writer.as_ref() else {
                continue;
            };
            w.delete_term(Term::from_field_text(self.fields.path, &doc.rel));
            let chunks = chunk_extracted(&doc.rel, &extracted, &cfg.chunker);
            let n = self.add_document(w, &doc.rel, &extracted, &chunks, cfg)?;
            if let Some(layout) = &extracted.layout {
                stored_layout(&extracted.text, &chunks, layout).save(&self.dir, &hash)?;
            }
            let entry = file_sentences(&doc.rel, &extracted, &chunks, &hash, embed)
                .map_err(|m| IndexError::embedding(&self.dir, &doc.rel, m))?;
            self.sentences.files.insert(doc.rel.clone(), entry);
            sentences_changed = true;
            if old.is_some() {
                report.changed += 1;
            } else {
                report.added += 1;
            }
            report.chunks += n;
            report.total_chunks += n;
            new_files.insert(
                doc.rel.clone(),
                FileEntry {
                    xxh3_128: hash,
                    bytes: bytes.len() as u64,
                    chunks: n,
                },
            );
        }
        for rel in old_files.keys().filter(|k| !new_files.contains_key(*k)) {
            report.removed += 1;
            open_writer(&mut writer)?;
            if let Some(w) = writer.as_ref() {
                w.delete_term(Term::from_field_text(self.fields.path, rel));
            }
        }
        report.skipped.sort();

        if let Some(mut w) = writer {
            w.commit().map_err(engine)?;
            w.wait_merging_threads().map_err(engine)?;
            self.reader.reload().map_err(engine)?;
        }
        let before = self.sentences.files.len();
        self.sentences
            .files
            .retain(|rel, _| new_files.contains_key(rel));
        sentences_changed |= self.sentences.files.len() != before;
        if sentences_changed || !self.dir.join(crate::sentences::SENTENCES_FILE).is_file() {
            self.sentences.save(&self.dir)?;
        }
        let manifest = Manifest {
            settings: Some(settings),
            files: new_files,
        };
        if manifest != self.manifest {
            manifest.save(&self.dir)?;
            self.manifest = manifest;
        }
        self.remove_stale_layouts();
        Ok(report)
    }

    fn add_document(
        &self,
        writer: &IndexWriter,
        rel: &str,
        doc: &Extracted,
        chunks: &[DocChunk],
        cfg: &IndexConfig,
    ) -> Result<usize, IndexError> {
        let f = self.fields;
        let title = extracted_title(rel, doc);
        let url = source_url(cfg.base_url.as_deref(), rel);
        for chunk in chunks {
            let mut tdoc = TantivyDocument::default();
            tdoc.add_text(f.chunk_id, &chunk.chunk_id);
            tdoc.add_text(f.path, rel);
            tdoc.add_text(f.title, &title);
            tdoc.add_text(f.headings, chunk.heading_path.join("\n"));
            tdoc.add_text(f.content, &chunk.content);
            if let Some(url) = &url {
                tdoc.add_text(f.url, url);
            }
            if let Some(page) = chunk.page_number {
                tdoc.add_u64(f.page, u64::from(page));
            }
            writer
                .add_document(tdoc)
                .map_err(|e| IndexError::engine(&self.dir, e))?;
        }
        Ok(chunks.len())
    }

    /// Deletes glyph tables of files no longer indexed under that hash. A
    /// failure leaves a stray file, never a wrong location: tables are
    /// looked up by the hash of the file indexed now.
    fn remove_stale_layouts(&self) {
        let Ok(entries) = fs::read_dir(self.dir.join(LAYOUT_DIR)) else {
            return;
        };
        let live: BTreeSet<&str> = self
            .manifest
            .files
            .values()
            .map(|f| f.xxh3_128.as_str())
            .collect();
        for entry in entries.flatten() {
            let name = entry.file_name();
            let keep = name
                .to_str()
                .and_then(|n| n.strip_suffix(".bin"))
                .is_some_and(|hash| live.contains(hash));
            if !keep {
                let _ = fs::remove_file(entry.path());
            }
        }
    }

    /// Where code points `span` of chunk `chunk_id` are drawn on its page:
    /// `Some` only for a chunk of a PDF indexed here whose glyphs in that
    /// span have boxes (see [`QuoteLocation`] for the coordinates).
    pub fn locate(&self, chunk_id: &str, span: Span) -> Option<QuoteLocation> {
        let (rel, ordinal) = chunk_id.rsplit_once("#chunk-")?;
        let ordinal: usize = ordinal.parse().ok()?;
        let entry = self.manifest.files.get(rel)?;
        if Format::of_path(rel) != Some(Format::Pdf) {
            return None;
        }
        let stored = StoredLayout::load(&self.dir, &entry.xxh3_128)?;
        let base = *stored.chunk_starts.get(ordinal.checked_sub(1)?)?;
        let start = base.checked_add(u32::try_from(span.start()).ok()?)?;
        let end = base.checked_add(u32::try_from(span.end()).ok()?)?;
        stored.layout.locate(start, end)
    }

    /// Fills `location` of every citation of `contract` whose chunk is a
    /// PDF chunk of this index (see [`Index::locate`]); other citations are
    /// left as they are. Call it on a contract verified against chunks this
    /// index returned: the contract's spans index those chunks' contents.
    pub fn attach_locations(&self, contract: &mut Contract) {
        for claim in &mut contract.claims {
            for citation in &mut claim.citations {
                if let Some(span) = citation.span {
                    citation.location = self.locate(&citation.chunk_id, span);
                }
            }
        }
    }

    /// The `top_k` chunks that best match `query` (BM25 over the content,
    /// the document title and the chunk's headings, titles and headings
    /// weighted 1.5), best first, each with `score: Some(bm25)`.
    ///
    /// `query` is plain user text, never query syntax: it is cut into words
    /// by the index's own analyzer (lower-cased, English stop words dropped,
    /// stemmed) and any word may match. Nothing in it can cause an error; an
    /// empty query, or one of stop words only, finds nothing. Only the first
    /// [`MAX_QUERY_TERMS`] distinct words count.
    pub fn search(&self, query: &str, top_k: usize) -> Result<Vec<Chunk>, IndexError> {
        let searcher = self.reader.searcher();
        let limit = top_k.min(usize::try_from(searcher.num_docs()).unwrap_or(usize::MAX));
        if limit == 0 {
            return Ok(Vec::new());
        }
        let f = self.fields;
        let mut analyzer = analyzer();
        let mut stream = analyzer.token_stream(query);
        let mut words = BTreeSet::new();
        let mut ordered = Vec::new();
        while ordered.len() < MAX_QUERY_TERMS && stream.advance() {
            let word = stream.token().text.clone();
            if words.insert(word.clone()) {
                ordered.push(word);
            }
        }
        if ordered.is_empty() {
            return Ok(Vec::new());
        }
        let mut clauses: Vec<Box<dyn Query>> = Vec::with_capacity(ordered.len() * 3);
        for word in &ordered {
            let term = |field| {
                TermQuery::new(
                    Term::from_field_text(field, word),
                    IndexRecordOption::WithFreqs,
                )
            };
            clauses.push(Box::new(term(f.content)));
            clauses.push(Box::new(BoostQuery::new(
                Box::new(term(f.title)),
                TITLE_BOOST,
            )));
            clauses.push(Box::new(BoostQuery::new(
                Box::new(term(f.headings)),
                HEADINGS_BOOST,
            )));
        }
        let query = BooleanQuery::union(clauses);
        let hits = searcher
            .search(&query, &TopDocs::with_limit(limit).order_by_score())
            .map_err(|e| IndexError::engine(&self.dir, e))?;
        hits.into_iter()
            .map(|(score, address)| {
                let doc: TantivyDocument = searcher
                    .doc(address)
                    .map_err(|e| IndexError::engine(&self.dir, e))?;
                Ok(self.to_chunk(&doc, Some(f64::from(score))))
            })
            .collect()
    }

    /// How much of `question` the `chunks` cover, from 0 to 1: the
    /// question's words (the index's analyzer: lower-cased, stop words
    /// dropped, stemmed), each weighted by its BM25 inverse document
    /// frequency in this index, and the weighted share found in the chunks.
    /// A word the corpus uses everywhere (the company's name) weighs little;
    /// a word it never uses ("Tokyo") weighs most. A question with no word
    /// left counts as covered (1).
    pub fn coverage(&self, question: &str, chunks: &[Chunk]) -> Result<Coverage, IndexError> {
        let searcher = self.reader.searcher();
        let n = searcher.num_docs() as f64;
        let words = analyzed(question);
        let mut unknown = Vec::new();
        if words.is_empty() {
            return Ok(Coverage {
                share: 1.0,
                unknown,
            });
        }
        let mut present = BTreeSet::new();
        for c in chunks {
            present.extend(analyzed(&c.content));
            if let Some(t) = &c.source_title {
                present.extend(analyzed(t));
            }
        }
        let (mut found, mut total) = (0.0, 0.0);
        for w in &words {
            let df = searcher
                .doc_freq(&Term::from_field_text(self.fields.content, w))
                .map_err(|e| IndexError::engine(&self.dir, e))? as f64;
            if df == 0.0 {
                unknown.push(w.clone());
            }
            let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
            total += idf;
            if present.contains(w) {
                found += idf;
            }
        }
        let share = if total > 0.0 { found / total } else { 1.0 };
        Ok(Coverage { share, unknown })
    }

    /// Dense retrieval: the `limit` chunks whose best sentence is most
    /// similar to `query` (a normalised question vector from the same
    /// model as the store), with that cosine, best first. Empty without
    /// stored vectors.
    pub fn dense_search(&self, query: &[f32], limit: usize) -> Vec<(String, f32)> {
        self.sentences.best_chunks(query, limit)
    }

    /// The `limit` sentences of the whole corpus most similar to `query`
    /// (a normalised question vector of the store's model), best first.
    /// Empty without stored vectors.
    pub fn sentence_search(&self, query: &[f32], limit: usize) -> Vec<SentenceHit> {
        self.sentences.best_sentences(query, limit)
    }

    /// The stored sentences of `chunk_id` (statements of the core's
    /// sentence rule), scored against `query` when given.
    pub fn sentences_of(&self, chunk_id: &str, query: Option<&[f32]>) -> Vec<SentenceHit> {
        self.sentences.sentences_of(chunk_id, query)
    }

    /// The title and headings above `chunk_id`, `" > "`-separated.
    pub fn context_of(&self, chunk_id: &str) -> Option<String> {
        self.sentences.context_of(chunk_id).map(str::to_string)
    }

    /// The distinct analyzed words of `text` (lower-cased, stop words
    /// dropped, stemmed): the index's own notion of a word.
    pub fn words(text: &str) -> BTreeSet<String> {
        analyzed(text)
    }

    /// `text` with its misspelt words read as words of this corpus
    /// ([`spelling`](crate::spelling) has the rule): "intrest" becomes
    /// "interest" when chunks use "interest" and none "intrest".
    pub fn correct_spelling(&self, text: &str) -> Result<Corrected, IndexError> {
        let searcher = self.reader.searcher();
        let f = self.fields;
        let mut analyzer = analyzer();
        spelling::correct(text, |word| {
            let mut stream = analyzer.token_stream(word);
            let mut n = 0;
            while stream.advance() {
                let term = &stream.token().text;
                for field in [f.content, f.title, f.headings] {
                    n += searcher
                        .doc_freq(&Term::from_field_text(field, term))
                        .map_err(|e| IndexError::engine(&self.dir, e))?;
                }
            }
            Ok(n)
        })
    }

    /// Inverse document frequency of an analyzed word in this index (BM25's
    /// weight; a word no chunk uses weighs most).
    pub fn idf(&self, word: &str) -> Result<f64, IndexError> {
        let searcher = self.reader.searcher();
        let n = searcher.num_docs() as f64;
        let df = searcher
            .doc_freq(&Term::from_field_text(self.fields.content, word))
            .map_err(|e| IndexError::engine(&self.dir, e))? as f64;
        Ok((1.0 + (n - df + 0.5) / (df + 0.5)).ln())
    }

    /// Every indexed chunk (with `score: None`), ordered by chunk ID.
    pub fn all_chunks(&self) -> Result<Vec<Chunk>, IndexError> {
        let searcher = self.reader.searcher();
        let n = usize::try_from(searcher.num_docs()).unwrap_or(usize::MAX);
        if n == 0 {
            return Ok(Vec::new());
        }
        let hits = searcher
            .search(&AllQuery, &TopDocs::with_limit(n).order_by_score())
            .map_err(|e| IndexError::engine(&self.dir, e))?;
        let mut out = Vec::with_capacity(hits.len());
        for (_, address) in hits {
            let doc: TantivyDocument = searcher
                .doc(address)
                .map_err(|e| IndexError::engine(&self.dir, e))?;
            out.push(self.to_chunk(&doc, None));
        }
        out.sort_by(|a, b| a.chunk_id.cmp(&b.chunk_id));
        Ok(out)
    }

    /// The chunk with this ID, if indexed (with `score: None`).
    pub fn get(&self, chunk_id: &str) -> Result<Option<Chunk>, IndexError> {
        let searcher = self.reader.searcher();
        let query = TermQuery::new(
            Term::from_field_text(self.fields.chunk_id, chunk_id),
            IndexRecordOption::Basic,
        );
        let hits = searcher
            .search(&query, &TopDocs::with_limit(1).order_by_score())
            .map_err(|e| IndexError::engine(&self.dir, e))?;
        let Some((_, address)) = hits.into_iter().next() else {
            return Ok(None);
        };
        let doc: TantivyDocument = searcher
            .doc(address)
            .map_err(|e| IndexError::engine(&self.dir, e))?;
        Ok(Some(self.to_chunk(&doc, None)))
    }

    fn to_chunk(&self, doc: &TantivyDocument, score: Option<f64>) -> Chunk {
        let f = self.fields;
        let text = |field| {
            doc.get_first(field)
                .and_then(|v| v.as_str().map(str::to_owned))
        };
        Chunk {
            chunk_id: text(f.chunk_id).unwrap_or_default(),
            content: text(f.content).unwrap_or_default(),
            source_title: text(f.title),
            source_url: text(f.url),
            page_number: doc
                .get_first(f.page)
                .and_then(|v| v.as_u64())
                .and_then(|p| u32::try_from(p).ok()),
            score,
        }
    }
}

/// The sentence-store entry of one document: its chunks (as indexed), each
/// with its context (title and headings) and sentences, embedded when
/// `embed` is given.
fn file_sentences(
    rel: &str,
    doc: &Extracted,
    chunks: &[DocChunk],
    hash: &str,
    embed: Option<&dyn Embed>,
) -> Result<FileSentences, String> {
    let title = extracted_title(rel, doc);
    let mut entries: Vec<ChunkEntry> = chunks
        .iter()
        .map(|c| {
            let mut context = vec![title.as_str()];
            context.extend(
                c.heading_path
                    .iter()
                    .map(String::as_str)
                    .filter(|h| *h != title),
            );
            let headings = heading_ranges(doc, c);
            ChunkEntry::build(&c.chunk_id, &c.content, &headings, &context.join(" > "))
        })
        .collect();
    if let Some(e) = embed {
        let contents: Vec<&str> = chunks.iter().map(|c| c.content.as_str()).collect();
        crate::sentences::embed_entries(&mut entries, &contents, e)?;
    }
    Ok(FileSentences {
        hash: hash.to_string(),
        chunks: entries,
    })
}

/// The byte ranges of `chunk`'s content that its document's own blocks
/// mark as headings (extracted formats; Markdown marks them in the text).
fn heading_ranges(doc: &Extracted, chunk: &DocChunk) -> Vec<Range<usize>> {
    let Some(blocks) = &doc.blocks else {
        return Vec::new();
    };
    // `content` is `text[byte_range]` trimmed; find where it starts.
    let Some(raw) = doc.text.get(chunk.byte_range.clone()) else {
        return Vec::new();
    };
    let start = chunk.byte_range.start + (raw.len() - raw.trim_start().len());
    let end = start + chunk.content.len();
    blocks
        .iter()
        .filter(|b| b.heading.is_some() && b.range.start < end && start < b.range.end)
        .map(|b| b.range.start.max(start) - start..b.range.end.min(end) - start)
        .collect()
}

/// A PDF's glyph table with the code point offset of each chunk.
fn stored_layout(text: &str, chunks: &[DocChunk], layout: &DocLayout) -> StoredLayout {
    let mut chunk_starts = Vec::with_capacity(chunks.len());
    let (mut byte, mut cp) = (0usize, 0u32);
    for c in chunks {
        // Chunks are in text order; overlapping pieces may step back a little.
        if c.byte_range.start < byte {
            byte = 0;
            cp = 0;
        }
        cp += text[byte..c.byte_range.start].chars().count() as u32;
        byte = c.byte_range.start;
        chunk_starts.push(cp);
    }
    StoredLayout {
        chunk_starts,
        layout: layout.clone(),
    }
}

/// Reads a document's bytes, or says why it is skipped.
fn read_document(path: &Path) -> Result<Vec<u8>, String> {
    let file = fs::File::open(path).map_err(|e| format!("cannot open: {e}"))?;
    let len = file
        .metadata()
        .map_err(|e| format!("cannot read metadata: {e}"))?
        .len();
    let too_large = |len: u64| format!("file is {len} bytes; the limit is {MAX_FILE_BYTES}");
    if len > MAX_FILE_BYTES {
        return Err(too_large(len));
    }
    let mut bytes = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
    file.take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read: {e}"))?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(too_large(bytes.len() as u64));
    }
    Ok(bytes)
}

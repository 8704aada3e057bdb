//! The WordPiece tokenizer of uncased BERT models.

use std::collections::HashMap;
use std::fmt;
use std::ops::ControlFlow;
use std::path::Path;

use crate::EmbedError;
use crate::basic::for_each_word;

/// A word longer than this many characters is one `[UNK]`.
const MAX_WORD_CHARS: usize = 100;

/// The special tokens recognised verbatim in the input text (case and
/// spelling exact), as Hugging Face's tokenizer does for the added tokens of
/// BERT models: `"a [SEP] b"` contains a real separator.
const SPECIALS: [&str; 5] = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"];

/// The WordPiece tokenizer of uncased BERT models, identical in its output
/// to Hugging Face's `BertTokenizerFast` for them (checked against it on
/// `testdata/embed/tokens.json`).
///
/// Steps: the special tokens `[PAD]`, `[UNK]`, `[CLS]`, `[SEP]` and
/// `[MASK]` written in the text are kept as such; the rest is cleaned (NUL,
/// U+FFFD and control, format and private-use characters dropped, white
/// space unified), CJK ideographs split out, accents stripped (NFD without
/// non-spacing marks), lower-cased and split on white space and punctuation;
/// each word is then cut greedily into the longest vocabulary pieces from
/// the left, continuations written `##piece`. A word of more than 100
/// characters, or one that cannot be cut, is a single `[UNK]`.
///
/// Tokenizing never fails and never panics, whatever the text.
pub struct Tokenizer {
    /// Pieces that start a word.
    words: HashMap<Box<str>, u32>,
    /// Continuation pieces, without their `##`.
    continuations: HashMap<Box<str>, u32>,
    /// IDs of [`SPECIALS`], in that order.
    special_ids: [u32; 5],
    /// Number of entries in the vocabulary file.
    size: usize,
}

impl Tokenizer {
    /// Reads a BERT `vocab.txt`: one token per line, the ID being the line
    /// number from 0. It must hold the five special tokens.
    pub fn from_vocab_file(path: &Path) -> Result<Tokenizer, EmbedError> {
        let text = std::fs::read_to_string(path).map_err(|e| EmbedError::io(path, e))?;
        Tokenizer::from_vocab(&text).map_err(|reason| EmbedError::invalid(path, reason))
    }

    /// Builds the tokenizer from the text of a `vocab.txt` (see
    /// [`Tokenizer::from_vocab_file`]); the error says what is missing.
    pub(crate) fn from_vocab(vocab: &str) -> Result<Tokenizer, String> {
        let mut words = HashMap::new();
        let mut continuations = HashMap::new();
        let mut size = 0u32;
        for line in vocab.lines() {
            // A later duplicate wins, as in Hugging Face's loader.
            match line.strip_prefix("##") {
                Some(rest) if !rest.is_empty() => continuations.insert(rest.into(), size),
                _ => words.insert(line.into(), size),
            };
            size = size
                .checked_add(1)
                .ok_or_else(|| "more than 2^32 tokens".to_owned())?;
        }
        let mut special_ids = [0; 5];
        for (id, name) in special_ids.iter_mut().zip(SPECIALS) {
            *id = *words
                .get(name)
                .ok_or_else(|| format!("the vocabulary has no {name} token"))?;
        }
        Ok(Tokenizer {
            words,
            continuations,
            special_ids,
            size: size as usize,
        })
    }

    /// Number of tokens in the vocabulary.
    pub fn vocab_size(&self) -> usize {
        self.size
    }

    /// The ID of `[PAD]`.
    pub fn pad_id(&self) -> u32 {
        self.special_ids[0]
    }

    /// The ID of `[UNK]`.
    pub fn unk_id(&self) -> u32 {
        self.special_ids[1]
    }

    /// The ID of `[CLS]`, the first token of every encoding.
    pub fn cls_id(&self) -> u32 {
        self.special_ids[2]
    }

    /// The ID of `[SEP]`, the last token of every encoding.
    pub fn sep_id(&self) -> u32 {
        self.special_ids[3]
    }

    /// The token IDs of `text`, between `[CLS]` and `[SEP]`, not truncated.
    pub fn encode(&self, text: &str) -> Vec<u32> {
        self.encode_truncated(text, usize::MAX)
    }

    /// The token IDs of `text` between `[CLS]` and `[SEP]`, at most
    /// `max_tokens` of them in all (at least the two special tokens): the
    /// first `max_tokens - 2` tokens of the text are kept, as Hugging Face's
    /// truncation does. Stops reading the text once it has enough.
    pub fn encode_truncated(&self, text: &str, max_tokens: usize) -> Vec<u32> {
        let room = max_tokens.max(2) - 2;
        let mut ids = Vec::with_capacity(room.min(text.len() / 2 + 2).saturating_add(2));
        ids.push(self.cls_id());
        if room > 0 {
            let _ = self.for_each_id(text, &mut |id| {
                ids.push(id);
                if ids.len() > room {
                    ControlFlow::Break(())
                } else {
                    ControlFlow::Continue(())
                }
            });
        }
        ids.push(self.sep_id());
        ids
    }

    /// The number of tokens [`Tokenizer::encode`] gives for `text`, with
    /// `[CLS]` and `[SEP]`, without building the list.
    pub fn count(&self, text: &str) -> usize {
        let mut n = 2usize;
        let _ = self.for_each_id(text, &mut |_| {
            n = n.saturating_add(1);
            ControlFlow::Continue(())
        });
        n
    }

    /// Calls `f` with each token ID of `text` (no `[CLS]`/`[SEP]` added),
    /// until `f` breaks.
    fn for_each_id(
        &self,
        text: &str,
        f: &mut dyn FnMut(u32) -> ControlFlow<()>,
    ) -> ControlFlow<()> {
        let mut pieces = Vec::new();
        let mut rest = text;
        loop {
            let (before, special) = self.split_special(rest);
            for_each_word(before, &mut |word| self.word_pieces(word, &mut pieces, f))?;
            match special {
                Some((id, after)) => {
                    f(id)?;
                    rest = after;
                }
                None => return ControlFlow::Continue(()),
            }
        }
    }

    /// Splits `text` at its first special token: the text before it, and
    /// the token's ID with the text after it.
    fn split_special<'t>(&self, text: &'t str) -> (&'t str, Option<(u32, &'t str)>) {
        for (at, _) in text.match_indices('[') {
            let tail = &text[at..];
            for (name, &id) in SPECIALS.iter().zip(&self.special_ids) {
                if let Some(after) = tail.strip_prefix(name) {
                    return (&text[..at], Some((id, after)));
                }
            }
        }
        (text, None)
    }

    /// Greedy longest-match-first WordPiece of one normalized word; `pieces`
    /// is scratch space.
    fn word_pieces(
        &self,
        word: &str,
        pieces: &mut Vec<u32>,
        f: &mut dyn FnMut(u32) -> ControlFlow<()>,
    ) -> ControlFlow<()> {
        if word.chars().count() > MAX_WORD_CHARS {
            return f(self.unk_id());
        }
        pieces.clear();
        let mut start = 0;
        while start < word.len() {
            let table = if start == 0 {
                &self.words
            } else {
                &self.continuations
            };
            let mut end = word.len();
            let mut found = None;
            while start < end {
                let candidate = &word[start..end];
                if let Some(&id) = table.get(candidate) {
                    found = Some(id);
                    break;
                }
                end -= candidate.chars().next_back().map_or(1, char::len_utf8);
            }
            match found {
                Some(id) => {
                    pieces.push(id);
                    start = end;
                }
                None => return f(self.unk_id()),
            }
        }
        for &id in pieces.iter() {
            f(id)?;
        }
        ControlFlow::Continue(())
    }
}

impl fmt::Debug for Tokenizer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tokenizer")
            .field("vocab_size", &self.size)
            .field("cls_id", &self.cls_id())
            .field("sep_id", &self.sep_id())
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tiny() -> Tokenizer {
        let vocab = "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\nun\n##aff\n##able\nrun\n##ning\n!\n";
        Tokenizer::from_vocab(vocab).expect("valid vocabulary")
    }

    #[test]
    fn greedy_longest_match() {
        let t = tiny();
        assert_eq!(t.encode("unaffable running!"), [2, 5, 6, 7, 8, 9, 10, 3]);
        // "unx" cannot be cut: the whole word is [UNK], not "un" + [UNK].
        assert_eq!(t.encode("unx run"), [2, 1, 8, 3]);
        assert_eq!(t.encode(&"a".repeat(101)), [2, 1, 3]);
        assert_eq!(t.encode(""), [2, 3]);
    }

    #[test]
    fn specials_in_text_and_truncation() {
        let t = tiny();
        assert_eq!(t.encode("run[SEP]run [cls]"), [2, 8, 3, 8, 1, 1, 1, 3]);
        assert_eq!(t.encode_truncated("run run run", 4), [2, 8, 8, 3]);
        assert_eq!(t.encode_truncated("run run", 0), [2, 3]);
        assert_eq!(t.count("run run run"), 5);
    }

    #[test]
    fn rejects_a_vocabulary_without_specials() {
        let err = Tokenizer::from_vocab("a\nb\n").expect_err("no specials");
        assert!(err.contains("[PAD]"), "{err}");
    }
}

//! Finding the documents to index.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use groundcite_core::MAX_CHUNK_ID_LEN;

use crate::error::{IndexError, IndexErrorKind};

/// A document found under the documents directory.
#[derive(Debug)]
pub(crate) struct Found {
    /// Path relative to the documents directory, with `/` separators.
    pub(crate) rel: String,
    pub(crate) abs: PathBuf,
}

/// What a walk found.
#[derive(Debug)]
pub(crate) struct Walk {
    /// Documents, sorted by relative path.
    pub(crate) found: Vec<Found>,
    /// Entries that could not be considered, as (relative path, reason), sorted.
    pub(crate) skipped: Vec<(String, String)>,
    /// Files of kinds that are not indexed, counted by extension.
    pub(crate) other_kinds: BTreeMap<String, usize>,
}

/// The documents under `root` and the entries that could not be considered. Hidden entries (name starting
/// with `.`) and `skip_dir` (the index directory, if nested) are ignored
/// silently; symbolic links are not followed.
pub(crate) fn find_documents(root: &Path, skip_dir: &Path) -> Result<Walk, IndexError> {
    let meta = fs::metadata(root).map_err(|e| IndexError::io("read", root, e))?;
    if !meta.is_dir() {
        return Err(IndexErrorKind::NotADirectory {
            path: root.to_owned(),
        }
        .into());
    }
    // The index directory was created before we walk, so this resolves.
    let skip_dir = fs::canonicalize(skip_dir).ok();
    let mut found = Vec::new();
    let mut skipped = Vec::new();
    let mut other_kinds: BTreeMap<String, usize> = BTreeMap::new();
    let mut stack = vec![(root.to_owned(), String::new())];
    while let Some((dir, rel_dir)) = stack.pop() {
        let entries = match fs::read_dir(&dir) {
            Ok(entries) => entries,
            Err(e) if rel_dir.is_empty() => return Err(IndexError::io("read directory", &dir, e)),
            Err(e) => {
                skipped.push((rel_dir, format!("cannot read directory: {e}")));
                continue;
            }
        };
        for entry in entries {
            let entry = match entry {
                Ok(entry) => entry,
                Err(e) => {
                    skipped.push((display(&rel_dir), format!("cannot read directory: {e}")));
                    continue;
                }
            };
            let name = entry.file_name();
            let Some(name) = name.to_str() else {
                let lossy = join(&rel_dir, &name.to_string_lossy());
                skipped.push((lossy, "file name is not valid UTF-8".to_owned()));
                continue;
            };
            if name.starts_with('.') {
                continue;
            }
            let rel = join(&rel_dir, name);
            let file_type = match entry.file_type() {
                Ok(t) => t,
                Err(e) => {
                    skipped.push((rel, format!("cannot read file type: {e}")));
                    continue;
                }
            };
            if file_type.is_symlink() {
                skipped.push((rel, "symbolic link (not followed)".to_owned()));
            } else if file_type.is_dir() {
                let path = entry.path();
                if skip_dir.is_some() && fs::canonicalize(&path).ok() == skip_dir {
                    continue;
                }
                stack.push((path, rel));
            } else if file_type.is_file() && has_document_extension(name) {
                if let Err(reason) = check_rel_path(&rel) {
                    skipped.push((rel, reason));
                } else {
                    found.push(Found {
                        rel,
                        abs: entry.path(),
                    });
                }
            } else if file_type.is_file() {
                *other_kinds.entry(kind_of(name)).or_default() += 1;
            }
        }
    }
    found.sort_by(|a, b| a.rel.cmp(&b.rel));
    skipped.sort();
    Ok(Walk {
        found,
        skipped,
        other_kinds,
    })
}

fn display(rel_dir: &str) -> String {
    if rel_dir.is_empty() {
        ".".to_owned()
    } else {
        rel_dir.to_owned()
    }
}

fn join(rel_dir: &str, name: &str) -> String {
    if rel_dir.is_empty() {
        name.to_owned()
    } else {
        format!("{rel_dir}/{name}")
    }
}

/// A file's kind as a report names it: `.rst` (lower case), or "no
/// extension".
fn kind_of(name: &str) -> String {
    match name.rsplit_once('.') {
        Some((stem, ext)) if !stem.is_empty() && !ext.is_empty() && ext.len() <= 12 => {
            format!(".{}", ext.to_lowercase())
        }
        _ => "no extension".to_owned(),
    }
}

fn has_document_extension(name: &str) -> bool {
    crate::formats::Format::of_path(name).is_some()
}

/// Room left in a chunk ID after the path, for `#chunk-` and the number.
const CHUNK_SUFFIX_ROOM: usize = 32;

/// The relative path must make valid chunk IDs (see
/// `groundcite_core::ChunkSet::new`): no control characters, no leading or
/// trailing white space, and short enough.
fn check_rel_path(rel: &str) -> Result<(), String> {
    if rel.chars().any(char::is_control) {
        return Err("path contains a control character, which a chunk ID cannot hold".into());
    }
    if rel.trim() != rel {
        return Err("path starts or ends with white space, which a chunk ID cannot hold".into());
    }
    if rel.len() + CHUNK_SUFFIX_ROOM > MAX_CHUNK_ID_LEN {
        return Err(format!(
            "path is {} bytes long; chunk IDs allow at most {} bytes of path",
            rel.len(),
            MAX_CHUNK_ID_LEN - CHUNK_SUFFIX_ROOM
        ));
    }
    Ok(())
}

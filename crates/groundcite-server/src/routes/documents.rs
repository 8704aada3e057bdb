//! `GET /v1/chunks/{chunk_id}/document`: the PDF a chunk of the service's
//! own corpus was extracted from, for the web app's page previewer.
//!
//! Only what the index knows is served: the chunk must be in the index, its
//! document is the chunk ID's path (`relative/path.pdf#chunk-N`) under the
//! docs folder, and the resolved file must stay inside that folder (no
//! `..`, no symbolic link out of it). Only PDFs: HTML and text documents
//! are previewed from the chunk text the answer carries, and serving a
//! user's HTML from this origin would run its scripts here.

use std::path::{Path as FsPath, PathBuf};

use axum::extract::{Path, State};
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};

use super::Who;
use crate::error::ApiError;
use crate::routes::ask::no_corpus;
use crate::state::AppState;

/// Larger documents are refused rather than read into memory whole.
pub(crate) const MAX_DOCUMENT_BYTES: u64 = 64 * 1024 * 1024;

pub(crate) async fn document(
    State(state): State<AppState>,
    _who: Who,
    Path(chunk_id): Path<String>,
) -> Result<Response, ApiError> {
    let corpus = state.0.corpus.as_ref().ok_or_else(no_corpus)?;
    let unknown = || ApiError::not_found(format!("no chunk {chunk_id:?} in this corpus"));
    let Some((rel, _)) = chunk_id.rsplit_once("#chunk-") else {
        return Err(unknown());
    };
    if !rel.to_ascii_lowercase().ends_with(".pdf") {
        return Err(ApiError::not_found(
            "only PDF documents are served; other documents are previewed from the chunk text",
        ));
    }
    let Some(docs) = corpus.docs_dir.as_deref() else {
        return Err(ApiError::not_found(
            "this service does not serve its documents",
        ));
    };
    let Some(index) = corpus.source.index().map(std::sync::Arc::clone) else {
        return Err(ApiError::not_found(
            "the documents of a search service are not served",
        ));
    };
    let id = chunk_id.clone();
    let known = tokio::task::spawn_blocking(move || index.get(&id))
        .await
        .map_err(ApiError::internal)?
        .map_err(ApiError::internal)?;
    if known.is_none() {
        return Err(unknown());
    }
    // The index knows the chunk: a file that no longer resolves inside the
    // folder was removed, moved or replaced since indexing.
    let gone = || ApiError::not_found("the document is no longer in the docs folder");
    let path = inside(docs, rel).ok_or_else(gone)?;
    let meta = tokio::fs::metadata(&path).await.map_err(|_| gone())?;
    if meta.len() > MAX_DOCUMENT_BYTES {
        return Err(ApiError::limit_exceeded(
            format!("the document is larger than {MAX_DOCUMENT_BYTES} bytes"),
            "chunk_id",
        ));
    }
    let bytes = tokio::fs::read(&path).await.map_err(|_| gone())?;
    let mut response = ([(header::CONTENT_TYPE, "application/pdf")], bytes).into_response();
    let h = response.headers_mut();
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    // Opened directly, the PDF runs nothing on this origin.
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static("sandbox; default-src 'none'"),
    );
    h.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("private, no-cache"),
    );
    Ok(response)
}

/// `docs/rel` when it is a file inside `docs` once every link is resolved.
fn inside(docs: &FsPath, rel: &str) -> Option<PathBuf> {
    let root = std::fs::canonicalize(docs).ok()?;
    let path = std::fs::canonicalize(root.join(rel)).ok()?;
    (path.starts_with(&root) && path.is_file()).then_some(path)
}

#[cfg(test)]
mod tests {
    use super::inside;

    #[test]
    fn only_files_inside_the_docs_folder_resolve() {
        let dir = tempfile::tempdir().expect("tmp");
        let docs = dir.path().join("docs");
        std::fs::create_dir_all(docs.join("sub")).expect("mkdir");
        std::fs::write(docs.join("sub/a.pdf"), b"%PDF-1.4").expect("write");
        std::fs::write(dir.path().join("secret.pdf"), b"%PDF-1.4").expect("write");
        assert!(inside(&docs, "sub/a.pdf").is_some());
        assert!(inside(&docs, "../secret.pdf").is_none());
        assert!(inside(&docs, "sub/../../secret.pdf").is_none());
        assert!(inside(&docs, "/etc/passwd").is_none());
        assert!(inside(&docs, "sub").is_none(), "a folder is not a document");
        assert!(inside(&docs, "missing.pdf").is_none());
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(dir.path().join("secret.pdf"), docs.join("link.pdf"))
                .expect("symlink");
            assert!(
                inside(&docs, "link.pdf").is_none(),
                "a link out of the folder"
            );
        }
    }
}

//! `GET /v1/chunks/{chunk_id}/document`: the page previewer's PDF, served
//! only for chunks of the index, only PDFs, only from inside the docs folder.

use axum::http::StatusCode;

use crate::ask::corpus;
use crate::common::{KEY_A, Script, get, send, state_full, state_with};
use groundcite_server::Limits;

fn path(chunk_id: &str) -> String {
    let enc: String = chunk_id
        .bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect();
    format!("/v1/chunks/{enc}/document")
}

#[tokio::test]
async fn without_a_corpus_there_is_no_document() {
    let (s, _) = state_with(Some(Script::Answer("{}".into())), Limits::default()).await;
    let r = send(&s, get(&path("a.pdf#chunk-0"), Some(KEY_A))).await;
    assert_eq!(r.status, StatusCode::CONFLICT);
    assert_eq!(r.code(), "no_corpus");
}

#[tokio::test]
async fn documents_need_a_key() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (s, _) = state_full(None, Limits::default(), Some(corpus(dir.path()))).await;
    let r = send(&s, get(&path("refunds.txt#chunk-0"), None)).await;
    assert_eq!(r.status, StatusCode::UNAUTHORIZED);
}

#[tokio::test]
async fn only_pdfs_of_the_index_are_served() {
    let dir = tempfile::tempdir().expect("tempdir");
    // A PDF beside the docs folder, and one inside it the index never saw.
    std::fs::write(dir.path().join("secret.pdf"), b"%PDF-1.4 secret").expect("write");
    let (s, _) = state_full(None, Limits::default(), Some(corpus(dir.path()))).await;
    std::fs::write(dir.path().join("docs/later.pdf"), b"%PDF-1.4 later").expect("write");
    for (id, why) in [
        ("refunds.txt#chunk-0", "only PDF"),
        ("later.pdf#chunk-0", "no chunk"),
        ("../secret.pdf#chunk-0", "no chunk"),
        ("/etc/passwd.pdf#chunk-0", "no chunk"),
        ("refunds.txt", "no chunk"),
        ("", "no chunk"),
    ] {
        let r = send(&s, get(&path(id), Some(KEY_A))).await;
        let body = String::from_utf8_lossy(&r.body);
        if id.is_empty() {
            // An empty segment matches no route at all.
            assert_eq!(r.status, StatusCode::NOT_FOUND, "{id:?}: {body}");
            continue;
        }
        assert_eq!(r.status, StatusCode::NOT_FOUND, "{id:?}: {body}");
        assert_eq!(r.code(), "not_found", "{id:?}");
        assert!(body.contains(why), "{id:?}: {body}");
        assert!(!body.contains("%PDF"), "no file content: {id:?}: {body}");
    }
}

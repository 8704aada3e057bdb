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

/// A one-page PDF (Helvetica, not embedded) with `text` on one line.
fn one_page_pdf(text: &str) -> Vec<u8> {
    let content = format!("BT /F1 20 Tf 72 700 Td ({text}) Tj ET");
    let objects = [
        "<< /Type /Catalog /Pages 2 0 R >>".to_string(),
        "<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_string(),
        "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 4 0 R >> >> /Contents 5 0 R >>".to_string(),
        "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>".to_string(),
        format!("<< /Length {} >>\nstream\n{content}\nendstream", content.len()),
    ];
    let mut out = String::from("%PDF-1.4\n");
    let mut offsets = Vec::new();
    for (i, o) in objects.iter().enumerate() {
        offsets.push(out.len());
        out.push_str(&format!("{} 0 obj\n{o}\nendobj\n", i + 1));
    }
    let xref = out.len();
    out.push_str(&format!(
        "xref\n0 {}\n0000000000 65535 f \n",
        objects.len() + 1
    ));
    for off in offsets {
        out.push_str(&format!("{off:010} 00000 n \n"));
    }
    out.push_str(&format!(
        "trailer\n<< /Size {} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n",
        objects.len() + 1
    ));
    out.into_bytes()
}

#[tokio::test]
async fn a_pdf_of_the_index_is_served_as_it_is_on_disk() {
    let dir = tempfile::tempdir().expect("tempdir");
    let pdf = one_page_pdf("Warranty claims need the original receipt.");
    std::fs::create_dir_all(dir.path().join("docs/manuals")).expect("mkdir");
    let file = dir.path().join("docs/manuals/warranty.pdf");
    std::fs::write(&file, &pdf).expect("write");
    let corpus = corpus(dir.path());
    let index = corpus.source.index().expect("an index").clone();
    let id = (0..4)
        .map(|n| format!("manuals/warranty.pdf#chunk-{n}"))
        .find(|id| index.get(id).expect("get").is_some())
        .expect("the PDF was indexed");
    let (s, _) = state_full(None, Limits::default(), Some(corpus)).await;

    let r = send(&s, get(&path(&id), Some(KEY_A))).await;
    assert_eq!(
        r.status,
        StatusCode::OK,
        "{}",
        String::from_utf8_lossy(&r.body)
    );
    assert_eq!(r.body, pdf, "the file's bytes, unchanged");
    assert_eq!(r.headers["content-type"], "application/pdf");
    assert_eq!(r.headers["x-content-type-options"], "nosniff");
    let csp = r.headers["content-security-policy"]
        .to_str()
        .expect("ascii");
    assert!(csp.contains("sandbox"), "{csp}");

    // Gone from the folder since it was indexed: a clear 404, not a 500.
    std::fs::remove_file(&file).expect("rm");
    let r = send(&s, get(&path(&id), Some(KEY_A))).await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);
    assert!(String::from_utf8_lossy(&r.body).contains("no longer in the docs folder"));
}

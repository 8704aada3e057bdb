//! The web app: served from the binary with a strict policy.

use axum::http::{StatusCode, header};

use crate::common::{get, send, state};

#[tokio::test]
async fn the_web_app_is_served_from_the_binary_with_a_strict_policy() {
    let s = state().await;
    for (path, kind) in [
        ("/", "text/html"),
        ("/traces/0190-abc", "text/html"),
        ("/assets/groundcite-render.js", "text/javascript"),
        ("/assets/app.js", "text/javascript"),
        ("/assets/trace.js", "text/javascript"),
        ("/assets/api.js", "text/javascript"),
        ("/assets/style.css", "text/css"),
    ] {
        let r = send(&s, get(path, None)).await;
        assert_eq!(r.status, StatusCode::OK, "{path}");
        assert!(
            r.headers[header::CONTENT_TYPE]
                .to_str()
                .unwrap_or("")
                .starts_with(kind),
            "{path}"
        );
        let csp = r.headers[header::CONTENT_SECURITY_POLICY]
            .to_str()
            .unwrap_or("");
        assert!(csp.contains("script-src 'self'"), "{path}: {csp}");
        assert!(!csp.contains("unsafe-inline"), "{path}: {csp}");
        assert_eq!(r.headers[header::X_CONTENT_TYPE_OPTIONS], "nosniff");
    }
    let page = String::from_utf8(send(&s, get("/", None)).await.body).expect("utf-8");
    // No CDN: every script and stylesheet comes from this origin.
    assert!(!page.contains("http://") && !page.contains("https://"));
    let missing = send(&s, get("/assets/../Cargo.toml", None)).await;
    assert_eq!(missing.status, StatusCode::NOT_FOUND);
    let missing = send(&s, get("/assets/nope.js", None)).await;
    assert_eq!(missing.status, StatusCode::NOT_FOUND);
}

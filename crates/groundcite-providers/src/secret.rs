//! Secrets that cannot be logged by construction, and URLs shown without
//! credentials.

use std::fmt;

/// An API key, token or client secret. `Debug` and `Display` print
/// `[REDACTED]`; the value is reachable only through [`SecretString::expose`],
/// which the HTTP layer calls when it sets a header.
#[derive(Clone, PartialEq, Eq)]
pub struct SecretString(Box<str>);

impl SecretString {
    /// Wraps a secret.
    pub fn new(value: impl Into<String>) -> SecretString {
        SecretString(value.into().into_boxed_str())
    }

    /// The secret itself. Call only to put it on the wire.
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// Whether the secret is empty.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl fmt::Debug for SecretString {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SecretString([REDACTED])")
    }
}

impl fmt::Display for SecretString {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[REDACTED]")
    }
}

/// The API endpoint `url` for display: user name, password and query
/// values removed (an Azure SAS token or `?key=` would otherwise leak into
/// messages); only `api-version` and `resource` are kept. Stricter than the
/// store's `redact_store_url`, which keeps a database URL's user name and
/// connection options and hides only passwords.
pub fn redact_endpoint_url(url: &url::Url) -> String {
    let mut shown = url.clone();
    // Setting these cannot fail for the http(s) URLs providers use; for
    // other schemes the URL is shown without its credentials anyway below.
    let _ = shown.set_username("");
    let _ = shown.set_password(None);
    if shown.query().is_some() {
        let pairs: Vec<(String, String)> = shown
            .query_pairs()
            .map(|(k, v)| {
                let keep = matches!(k.as_ref(), "api-version" | "resource");
                (
                    k.into_owned(),
                    if keep { v.into_owned() } else { "***".into() },
                )
            })
            .collect();
        shown.query_pairs_mut().clear().extend_pairs(pairs);
    }
    shown.to_string()
}

/// Replaces every occurrence of each secret in `text` with `[REDACTED]`
/// (provider error bodies sometimes echo the key they were sent).
pub(crate) fn scrub(text: &str, secrets: &[SecretString]) -> String {
    let mut out = text.to_string();
    for s in secrets {
        if s.expose().len() >= 4 && out.contains(s.expose()) {
            out = out.replace(s.expose(), "[REDACTED]");
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn never_formatted() {
        let s = SecretString::new("sk-live-very-secret");
        assert_eq!(format!("{s}"), "[REDACTED]");
        assert!(!format!("{s:?}").contains("very-secret"));
        assert!(!format!("{:?}", Some(s.clone())).contains("very-secret"));
        assert_eq!(s.expose(), "sk-live-very-secret");
    }

    #[test]
    fn urls_without_credentials() {
        let u = url::Url::parse("https://user:pw@h.example/p?api-version=1&sig=abc").unwrap();
        let shown = redact_endpoint_url(&u);
        assert_eq!(shown, "https://h.example/p?api-version=1&sig=***");
    }

    #[test]
    fn scrubbing() {
        let s = SecretString::new("sk-abcdef");
        assert_eq!(
            scrub("bad key sk-abcdef given", &[s]),
            "bad key [REDACTED] given"
        );
    }
}

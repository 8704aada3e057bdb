//! Store URLs: which backend a URL names, and how to show one without its
//! password.

use std::path::PathBuf;

use crate::error::StoreError;

/// What a store URL resolves to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Location {
    /// A private in-memory SQLite database (`sqlite::memory:`), for tests.
    SqliteMemory,
    /// A SQLite database file, created if missing.
    SqliteFile(PathBuf),
    /// A PostgreSQL connection URL, passed to sqlx as given.
    Postgres(String),
}

/// Resolves a store URL to a backend and location.
///
/// Accepted forms: `sqlite::memory:` (or `:memory:`), `sqlite:PATH`,
/// `sqlite://PATH` (so `sqlite:///abs/path` is absolute), a plain file path
/// (SQLite), and `postgres://…` / `postgresql://…`. SQLite paths are taken
/// literally: no percent-decoding, no `?option` parameters.
pub(crate) fn parse_location(url: &str) -> Result<Location, StoreError> {
    let invalid = |reason: &str| StoreError::InvalidUrl {
        url: redact_store_url(url),
        reason: reason.to_owned(),
    };
    if url.trim().is_empty() {
        return Err(invalid("empty store URL"));
    }
    if url == "sqlite::memory:" || url == ":memory:" {
        return Ok(Location::SqliteMemory);
    }
    let lower = url.get(..13).unwrap_or(url).to_ascii_lowercase();
    if lower.starts_with("postgres://") || lower.starts_with("postgresql://") {
        return Ok(Location::Postgres(url.to_owned()));
    }
    let sqlite_path = if lower.starts_with("sqlite://") {
        Some(&url[9..])
    } else if lower.starts_with("sqlite:") {
        Some(&url[7..])
    } else {
        None
    };
    if let Some(path) = sqlite_path {
        if path.is_empty() {
            return Err(invalid("a sqlite: URL needs a file path"));
        }
        if path.contains('?') {
            return Err(invalid(
                "sqlite: URLs take no ?parameters (the store sets its own pragmas)",
            ));
        }
        return Ok(Location::SqliteFile(PathBuf::from(path)));
    }
    if let Some(scheme_end) = url.find("://") {
        let scheme = &url[..scheme_end];
        if !scheme.is_empty()
            && scheme
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '+')
        {
            return Err(invalid(
                "unsupported scheme (expected sqlite:, postgres:// or a file path)",
            ));
        }
    }
    Ok(Location::SqliteFile(PathBuf::from(url)))
}

/// The byte range of the password in `url`'s userinfo, if it has one.
///
/// Errs on the side of hiding: the userinfo is taken to end at the *last*
/// `@` after `://`, so a password containing an unescaped `/`, `?` or `#`
/// (which no URL parser would accept, and which would then be echoed in an
/// error) is still found.
fn password_range(url: &str) -> Option<std::ops::Range<usize>> {
    let start = url.find("://")? + 3;
    let rest = &url[start..];
    let at = rest.rfind('@')?;
    let colon = rest[..at].find(':')?;
    Some(start + colon + 1..start + at)
}

/// The password in `url`'s userinfo, exactly as written, if non-empty.
pub(crate) fn url_password(url: &str) -> Option<&str> {
    password_range(url)
        .map(|range| &url[range])
        .filter(|password| !password.is_empty())
}

/// The store URL `url` with every password replaced by `****`: the
/// userinfo password (`postgres://user:****@host/db`) and any `password=`
/// (or `sslpassword=`…) query parameter. Strings that are not URLs (file
/// paths) come back unchanged.
///
/// Use it wherever a store URL is formatted: errors, logs, `Debug`. Unlike
/// the provider adapters' `redact_endpoint_url` (which drops the user name
/// and every query value of an API endpoint, where any parameter may be a
/// key), it keeps the user name and the connection options (`sslmode=`…),
/// which an operator needs to see, and it works on the text as written, so
/// a password no URL parser accepts is still hidden.
///
/// ```
/// use groundcite_store::redact_store_url;
/// assert_eq!(
///     redact_store_url("postgres://app:s3cret@db.internal:5432/traces"),
///     "postgres://app:****@db.internal:5432/traces",
/// );
/// assert_eq!(redact_store_url("/var/lib/groundcite/traces.db"), "/var/lib/groundcite/traces.db");
/// ```
pub fn redact_store_url(url: &str) -> String {
    let mut out = String::with_capacity(url.len());
    let query_from = match password_range(url) {
        Some(range) => {
            out.push_str(&url[..range.start]);
            out.push_str("****");
            range.end
        }
        None => 0,
    };
    let rest = &url[query_from..];
    let Some(question) = rest.find('?') else {
        out.push_str(rest);
        return out;
    };
    out.push_str(&rest[..=question]);
    let (query, fragment) = match rest[question + 1..].find('#') {
        Some(hash) => rest[question + 1..].split_at(hash),
        None => (&rest[question + 1..], ""),
    };
    for (i, pair) in query.split('&').enumerate() {
        if i > 0 {
            out.push('&');
        }
        match pair.split_once('=') {
            Some((key, _)) if key.to_ascii_lowercase().ends_with("password") => {
                out.push_str(key);
                out.push_str("=****");
            }
            _ => out.push_str(pair),
        }
    }
    out.push_str(fragment);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redact_store_url_hides_every_password() {
        let cases = [
            ("postgres://u:pw@h/db", "postgres://u:****@h/db"),
            ("postgresql://u:pw@h:5432", "postgresql://u:****@h:5432"),
            ("postgres://u@h/db", "postgres://u@h/db"),
            ("postgres://h/db", "postgres://h/db"),
            ("postgres://u:@h/db", "postgres://u:****@h/db"),
            ("postgres://u:p@ss/w?rd#@h/db", "postgres://u:****@h/db"),
            (
                "postgres://h/db?sslmode=disable&password=pw&x=1",
                "postgres://h/db?sslmode=disable&password=****&x=1",
            ),
            (
                "postgres://u:pw1@h/db?PassWord=pw2#frag",
                "postgres://u:****@h/db?PassWord=****#frag",
            ),
            (
                "postgres://h/db?sslpassword=k",
                "postgres://h/db?sslpassword=****",
            ),
            ("sqlite:/tmp/traces.db", "sqlite:/tmp/traces.db"),
            ("sqlite::memory:", "sqlite::memory:"),
            ("./traces.db", "./traces.db"),
            ("", ""),
        ];
        for (url, want) in cases {
            assert_eq!(redact_store_url(url), want, "{url}");
            if let Some(password) = url_password(url) {
                assert!(!redact_store_url(url).contains(password), "{url}");
            }
        }
    }

    #[test]
    fn url_password_is_the_raw_userinfo_password() {
        assert_eq!(url_password("postgres://u:pw@h/db"), Some("pw"));
        assert_eq!(url_password("postgres://u:@h/db"), None);
        assert_eq!(url_password("postgres://u@h/db"), None);
        assert_eq!(url_password("traces.db"), None);
    }

    #[test]
    fn locations() {
        let file = |p: &str| Location::SqliteFile(PathBuf::from(p));
        let ok = |url: &str| parse_location(url).expect(url);
        assert_eq!(ok("sqlite::memory:"), Location::SqliteMemory);
        assert_eq!(ok(":memory:"), Location::SqliteMemory);
        assert_eq!(ok("sqlite:traces.db"), file("traces.db"));
        assert_eq!(ok("sqlite://traces.db"), file("traces.db"));
        assert_eq!(ok("sqlite:///var/t.db"), file("/var/t.db"));
        assert_eq!(ok("SQLite:/var/t.db"), file("/var/t.db"));
        assert_eq!(ok("/var/t.db"), file("/var/t.db"));
        assert_eq!(ok("t.db"), file("t.db"));
        assert_eq!(
            ok("postgres://u:p@h/db"),
            Location::Postgres("postgres://u:p@h/db".into())
        );
        assert_eq!(
            ok("postgresql://h/db"),
            Location::Postgres("postgresql://h/db".into())
        );
        for bad in [
            "",
            "  ",
            "sqlite:",
            "sqlite://",
            "sqlite:t.db?mode=ro",
            "mysql://u:pw@h/db",
        ] {
            let err = parse_location(bad).expect_err(bad);
            assert!(matches!(err, StoreError::InvalidUrl { .. }), "{bad}");
            assert!(!err.to_string().contains("pw"), "{err}");
        }
    }
}

//! API keys and tenants.
//!
//! Keys are random strings handed to clients once; the service stores only
//! their SHA-256 digests (a fast hash is right for high-entropy random
//! keys: there is nothing to brute-force), in a TOML file:
//!
//! ```toml
//! [[keys]]
//! tenant = "acme"
//! sha256 = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
//! ```
//!
//! `groundcite key new --tenant acme` prints a fresh key and its entry.
//! Clients send `Authorization: Bearer <key>` (or `X-API-Key: <key>`).

use std::fmt;
use std::path::Path;

use axum::http::HeaderMap;
use serde::Deserialize;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

/// The tenant a request was authenticated as.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tenant(pub Option<String>);

impl Tenant {
    /// The tenant's name, `None` when authentication is off.
    pub fn name(&self) -> Option<&str> {
        self.0.as_deref()
    }

    /// The metric/log label: the name, or `-`.
    pub fn label(&self) -> &str {
        self.0.as_deref().unwrap_or("-")
    }
}

struct Entry {
    digest: [u8; 32],
    tenant: String,
}

/// The accepted keys (digests only), or no authentication at all.
pub struct ApiKeys {
    entries: Vec<Entry>,
    enabled: bool,
}

impl fmt::Debug for ApiKeys {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Digests are not secrets, but there is no reason to print them.
        f.debug_struct("ApiKeys")
            .field("keys", &self.entries.len())
            .field("enabled", &self.enabled)
            .finish()
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct KeyFile {
    #[serde(default)]
    keys: Vec<KeyEntry>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct KeyEntry {
    tenant: String,
    sha256: String,
}

/// The SHA-256 digest of `key`, lowercase hex (what the key file stores).
pub fn key_digest(key: &str) -> String {
    hex::encode(Sha256::digest(key.as_bytes()))
}

/// A tenant name [`validate_tenant`] refused (the name, as given).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("tenant {0:?} must be 1 to 64 characters of letters, digits, '.', '_' or '-'")]
pub struct InvalidTenant(pub String);

/// Why [`ApiKeys::load`] refused a key file; every message names the file.
#[derive(Debug, thiserror::Error)]
pub enum KeyFileError {
    /// The file could not be read.
    #[error("{path}: {source}")]
    Read {
        /// The file, as shown.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// The file is not TOML of the expected shape.
    #[error("{path}: {source}")]
    Parse {
        /// The file, as shown.
        path: String,
        /// Why.
        source: toml::de::Error,
    },
    /// No `[[keys]]` entry (it would lock every client out).
    #[error("{path}: no [[keys]] entry; create one with `groundcite key new --tenant NAME`")]
    Empty {
        /// The file, as shown.
        path: String,
    },
    /// An entry's tenant is not a valid name.
    #[error("{path}: keys[{index}]: {source}")]
    Tenant {
        /// The file, as shown.
        path: String,
        /// The entry.
        index: usize,
        /// Why.
        source: InvalidTenant,
    },
    /// An entry's `sha256` is not 64 hex digits.
    #[error(
        "{path}: keys[{index}].sha256 must be 64 hexadecimal digits (a SHA-256 digest, not the key itself)"
    )]
    Digest {
        /// The file, as shown.
        path: String,
        /// The entry.
        index: usize,
    },
}

/// Tenants name traces and metric labels: 1-64 of `[A-Za-z0-9._-]`.
pub fn validate_tenant(tenant: &str) -> Result<(), InvalidTenant> {
    let ok = (1..=64).contains(&tenant.len())
        && tenant
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'));
    if ok {
        Ok(())
    } else {
        Err(InvalidTenant(tenant.to_string()))
    }
}

impl ApiKeys {
    /// No authentication: every request is the anonymous tenant.
    pub fn disabled() -> ApiKeys {
        ApiKeys {
            entries: Vec::new(),
            enabled: false,
        }
    }

    /// Keys from `(tenant, plaintext key)` pairs (for tests and embedding).
    pub fn from_plain<'a>(keys: impl IntoIterator<Item = (&'a str, &'a str)>) -> ApiKeys {
        ApiKeys {
            entries: keys
                .into_iter()
                .map(|(tenant, key)| Entry {
                    digest: Sha256::digest(key.as_bytes()).into(),
                    tenant: tenant.to_string(),
                })
                .collect(),
            enabled: true,
        }
    }

    /// Reads a key file (see the module docs). Errors name the file and
    /// the entry; a file without keys is an error (it would lock every
    /// client out).
    pub fn load(path: &Path) -> Result<ApiKeys, KeyFileError> {
        let shown = || path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| KeyFileError::Read {
            path: shown(),
            source,
        })?;
        let file: KeyFile = toml::from_str(&text).map_err(|source| KeyFileError::Parse {
            path: shown(),
            source,
        })?;
        if file.keys.is_empty() {
            return Err(KeyFileError::Empty { path: shown() });
        }
        let mut entries = Vec::with_capacity(file.keys.len());
        for (index, k) in file.keys.into_iter().enumerate() {
            validate_tenant(&k.tenant).map_err(|source| KeyFileError::Tenant {
                path: shown(),
                index,
                source,
            })?;
            let mut digest = [0u8; 32];
            hex::decode_to_slice(k.sha256.trim(), &mut digest).map_err(|_| {
                KeyFileError::Digest {
                    path: shown(),
                    index,
                }
            })?;
            entries.push(Entry {
                digest,
                tenant: k.tenant,
            });
        }
        Ok(ApiKeys {
            entries,
            enabled: true,
        })
    }

    /// Whether keys are required.
    pub fn enabled(&self) -> bool {
        self.enabled
    }

    /// The tenant of the key in `headers`, `None` when it is missing or
    /// unknown.
    pub fn authenticate(&self, headers: &HeaderMap) -> Option<Tenant> {
        if !self.enabled {
            return Some(Tenant(None));
        }
        let key = presented_key(headers)?;
        let digest: [u8; 32] = Sha256::digest(key.as_bytes()).into();
        // Compare against every entry in constant time, without an early exit.
        let mut found = None;
        for e in &self.entries {
            if bool::from(e.digest.ct_eq(&digest)) && found.is_none() {
                found = Some(e.tenant.clone());
            }
        }
        found.map(|t| Tenant(Some(t)))
    }
}

fn presented_key(headers: &HeaderMap) -> Option<&str> {
    if let Some(v) = headers.get(axum::http::header::AUTHORIZATION) {
        let v = v.to_str().ok()?;
        let (scheme, key) = v.split_once(' ')?;
        return scheme
            .eq_ignore_ascii_case("bearer")
            .then(|| key.trim())
            .filter(|k| !k.is_empty());
    }
    headers
        .get("x-api-key")
        .and_then(|v| v.to_str().ok())
        .map(str::trim)
        .filter(|k| !k.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn headers(name: &'static str, value: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(name, HeaderValue::from_str(value).expect("header"));
        h
    }

    #[test]
    fn keys_map_to_their_tenants() {
        let keys = ApiKeys::from_plain([("acme", "k-acme"), ("globex", "k-globex")]);
        let t = keys.authenticate(&headers("authorization", "Bearer k-globex"));
        assert_eq!(t, Some(Tenant(Some("globex".into()))));
        let t = keys.authenticate(&headers("x-api-key", "k-acme"));
        assert_eq!(t, Some(Tenant(Some("acme".into()))));
        assert_eq!(
            keys.authenticate(&headers("authorization", "Bearer nope")),
            None
        );
        assert_eq!(
            keys.authenticate(&headers("authorization", "Basic k-acme")),
            None
        );
        assert_eq!(keys.authenticate(&HeaderMap::new()), None);
    }

    #[test]
    fn the_key_file_holds_digests_only() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("keys.toml");
        std::fs::write(
            &path,
            format!(
                "[[keys]]\ntenant = \"acme\"\nsha256 = \"{}\"\n",
                key_digest("secret-key")
            ),
        )
        .expect("write");
        let keys = ApiKeys::load(&path).expect("load");
        assert!(
            keys.authenticate(&headers("authorization", "Bearer secret-key"))
                .is_some()
        );
        assert!(!format!("{keys:?}").contains(&key_digest("secret-key")));

        std::fs::write(
            &path,
            "[[keys]]\ntenant = \"acme\"\nsha256 = \"secret-key\"\n",
        )
        .expect("write");
        let err = ApiKeys::load(&path)
            .expect_err("a plaintext key is refused")
            .to_string();
        assert!(err.contains("64 hexadecimal digits"), "{err}");
        assert!(!err.contains("secret-key"), "{err}");
        std::fs::write(&path, "").expect("write");
        assert!(ApiKeys::load(&path).is_err());
        std::fs::write(
            &path,
            format!(
                "[[keys]]\ntenant = \"a b\"\nsha256 = \"{}\"\n",
                key_digest("x")
            ),
        )
        .expect("write");
        assert!(matches!(
            ApiKeys::load(&path),
            Err(KeyFileError::Tenant { index: 0, .. })
        ));
    }
}

//! Where environment variables come from: the process, or (in tests) a map.
//! Every setting read from the environment goes through [`Env`], so the
//! precedence of flags, environment and file can be tested without
//! touching the process's environment.

use std::collections::BTreeMap;

use groundcite_providers::SecretString;

/// A source of environment variables. A blank value counts as unset, as an
/// empty key or URL is never meant.
pub trait Env: Send + Sync {
    /// The raw value, if set (blank or not).
    fn raw(&self, name: &str) -> Option<String>;

    /// The value, if set and not blank.
    fn var(&self, name: &str) -> Option<String> {
        self.raw(name).filter(|v| !v.trim().is_empty())
    }

    /// A secret's value, wrapped at once so it cannot be printed.
    fn secret(&self, name: &str) -> Option<SecretString> {
        self.var(name).map(SecretString::new)
    }
}

/// The process's environment.
#[derive(Debug, Clone, Copy, Default)]
pub struct ProcessEnv;

impl Env for ProcessEnv {
    fn raw(&self, name: &str) -> Option<String> {
        std::env::var(name).ok()
    }
}

/// A fixed set of variables, for tests and embedding.
#[derive(Debug, Clone, Default)]
pub struct MapEnv(pub BTreeMap<String, String>);

impl MapEnv {
    /// From `(name, value)` pairs.
    pub fn of<'a>(pairs: impl IntoIterator<Item = (&'a str, &'a str)>) -> Self {
        MapEnv(
            pairs
                .into_iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        )
    }
}

impl Env for MapEnv {
    fn raw(&self, name: &str) -> Option<String> {
        self.0.get(name).cloned()
    }
}

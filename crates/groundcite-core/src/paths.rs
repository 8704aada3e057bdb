//! Where groundcite keeps what it can rebuild: one rule for the cache
//! directory, used for the models (the embedded generator and the
//! embedding model) and the indexes. Pure: the caller passes how variables
//! are read.

use std::path::PathBuf;

/// `$GROUNDCITE_CACHE_DIR`, else `$XDG_CACHE_HOME/groundcite`, else
/// `$HOME/.cache/groundcite`; `None` when none of them is set. `var` reads
/// a variable (blank counts as unset).
pub fn cache_dir(var: impl Fn(&str) -> Option<String>) -> Option<PathBuf> {
    let var = |k: &str| var(k).filter(|v| !v.trim().is_empty()).map(PathBuf::from);
    var("GROUNDCITE_CACHE_DIR")
        .or_else(|| var("XDG_CACHE_HOME").map(|d| d.join("groundcite")))
        .or_else(|| var("HOME").map(|h| h.join(".cache").join("groundcite")))
}

/// [`cache_dir`]`/models`, read from the process's environment: where
/// `scripts/setup` installs the models.
pub fn model_cache_dir() -> Option<PathBuf> {
    cache_dir(|k| std::env::var(k).ok()).map(|d| d.join("models"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cache_directory_is_the_first_variable_set() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |k: &str| {
                pairs
                    .iter()
                    .find(|(n, _)| *n == k)
                    .map(|(_, v)| (*v).to_string())
            }
        };
        let all = env(&[
            ("GROUNDCITE_CACHE_DIR", "/c"),
            ("XDG_CACHE_HOME", "/x"),
            ("HOME", "/h"),
        ]);
        assert_eq!(cache_dir(all), Some(PathBuf::from("/c")));
        let xdg = env(&[
            ("GROUNDCITE_CACHE_DIR", " "),
            ("XDG_CACHE_HOME", "/x"),
            ("HOME", "/h"),
        ]);
        assert_eq!(cache_dir(xdg), Some(PathBuf::from("/x/groundcite")));
        let home = env(&[("HOME", "/h")]);
        assert_eq!(cache_dir(home), Some(PathBuf::from("/h/.cache/groundcite")));
        assert_eq!(cache_dir(env(&[])), None);
    }
}

//! The one error of settings: every way a setting can be unusable, each a
//! sentence that says what to change.

use groundcite_providers::ProviderError;

/// A setting that cannot be used. The CLI reports it as bad input (exit
/// 2); the service refuses to start with it.
#[derive(Debug, thiserror::Error)]
pub enum SettingsError {
    /// Not set anywhere; `ways` lists the flag, environment variable and
    /// file key that would set it.
    #[error("settings: {what} is not set: {ways}.")]
    Missing {
        /// What is missing ("The OpenAI model").
        what: String,
        /// How to set it ("pass --model, set OPENAI_MODEL, or …").
        ways: String,
    },
    /// Set, but to a value that cannot be used.
    #[error("{setting}: {message}")]
    Invalid {
        /// Where it was set: a flag, a file key, or `settings`.
        setting: String,
        /// What is wrong with it.
        message: String,
    },
    /// A file named by a setting (the configuration, a schema) is
    /// unreadable or invalid.
    #[error("{file}{}{}: {message}", location(*line, *column), key.as_ref().map(|k| format!(": at {k}")).unwrap_or_default())]
    File {
        /// The file as named.
        file: String,
        /// 1-based line, when known.
        line: Option<usize>,
        /// 1-based column, when known.
        column: Option<usize>,
        /// The offending key's path (`openai.api_key`), when known.
        key: Option<String>,
        /// What is wrong.
        message: String,
    },
    /// The provider's client could not be built from these settings (a bad
    /// base URL, an unusable credential).
    #[error("settings: {0}")]
    Provider(#[from] ProviderError),
}

/// `:LINE` or `:LINE:COLUMN`, when known.
fn location(line: Option<usize>, column: Option<usize>) -> String {
    match (line, column) {
        (Some(l), Some(c)) => format!(":{l}:{c}"),
        (Some(l), None) => format!(":{l}"),
        _ => String::new(),
    }
}

impl SettingsError {
    /// An unusable value of `setting`.
    pub fn invalid(setting: impl Into<String>, message: impl std::fmt::Display) -> Self {
        SettingsError::Invalid {
            setting: setting.into(),
            message: message.to_string(),
        }
    }

    /// A setting that is missing, in one sentence naming what would set it.
    pub fn missing(
        what: &str,
        flag: Option<&str>,
        env_var: Option<&str>,
        file_key: Option<&str>,
    ) -> Self {
        let mut ways = Vec::new();
        if let Some(f) = flag {
            ways.push(format!("pass {f}"));
        }
        if let Some(e) = env_var {
            ways.push(format!("set {e}"));
        }
        if let Some(k) = file_key {
            ways.push(format!("set {k} in groundcite.toml"));
        }
        let ways = match ways.len() {
            0 | 1 => ways.concat(),
            _ => {
                let last = ways.pop().unwrap_or_default();
                format!("{}, or {last}", ways.join(", "))
            }
        };
        SettingsError::Missing {
            what: what.to_string(),
            ways,
        }
    }

    /// A problem with `file` (no line known).
    pub fn file(file: impl Into<String>, message: impl std::fmt::Display) -> Self {
        SettingsError::File {
            file: file.into(),
            line: None,
            column: None,
            key: None,
            message: message.to_string(),
        }
    }

    /// What the message is about: the flag, file key or file; `settings`
    /// when it is the settings as a whole.
    pub fn subject(&self) -> &str {
        match self {
            SettingsError::Missing { .. } | SettingsError::Provider(_) => "settings",
            SettingsError::Invalid { setting, .. } => setting,
            SettingsError::File { file, .. } => file,
        }
    }

    /// The message without its subject.
    pub fn message(&self) -> String {
        match self {
            SettingsError::Missing { what, ways } => format!("{what} is not set: {ways}."),
            SettingsError::Invalid { message, .. } | SettingsError::File { message, .. } => {
                message.clone()
            }
            SettingsError::Provider(e) => e.to_string(),
        }
    }
}

/// A setting that cannot be used is bad input (the CLI's exit 2), shown the
/// same way as any other.
impl From<SettingsError> for groundcite_core::json::BadInput {
    fn from(e: SettingsError) -> Self {
        match e {
            SettingsError::File {
                file,
                line,
                column,
                key,
                message,
            } => groundcite_core::json::BadInput {
                source: file,
                line,
                column,
                path: key,
                message,
            },
            other => groundcite_core::json::BadInput::new(other.subject(), other.message()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_settings_are_one_sentence() {
        let e = SettingsError::missing(
            "The OpenAI model",
            Some("--model"),
            Some("OPENAI_MODEL"),
            Some("[openai] model"),
        );
        assert_eq!(
            e.to_string(),
            "settings: The OpenAI model is not set: pass --model, set OPENAI_MODEL, or set [openai] model in groundcite.toml."
        );
        let e = SettingsError::missing(
            "The Anthropic API key",
            None,
            Some("ANTHROPIC_API_KEY"),
            None,
        );
        assert_eq!(
            e.message(),
            "The Anthropic API key is not set: set ANTHROPIC_API_KEY."
        );
        assert_eq!(e.subject(), "settings");
    }

    #[test]
    fn file_errors_name_line_and_key() {
        let e = SettingsError::File {
            file: "g.toml".into(),
            line: Some(2),
            column: None,
            key: Some("openai.api_key".into()),
            message: "no secrets".into(),
        };
        assert_eq!(e.to_string(), "g.toml:2: at openai.api_key: no secrets");
    }
}

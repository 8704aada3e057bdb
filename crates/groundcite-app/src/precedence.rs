//! Settings precedence, for every source: flag > environment > file >
//! default. The environment is a map, so nothing here touches the
//! process's.

use groundcite_ask::GateMode;

use crate::ask::{self, DATABASE_ENV};
use crate::config::{self, FileConfig};
use crate::env::MapEnv;
use crate::flags::{ProviderFlags, RetrievalFlags};
use crate::values::{ProviderName, Quotes};
use crate::{PROVIDER_ENV, Settings, SettingsError};

fn file(text: &str) -> FileConfig {
    config::parse("groundcite.toml", text).expect("valid file")
}

const FILE: &str = r#"
provider = "anthropic"
[openai]
model = "file-model"
base_url = "http://file.invalid/v1"
[anthropic]
model = "file-claude"
[azure]
endpoint = "https://file.openai.azure.com"
deployment = "file-deployment"
[openai_compatible]
base_url = "http://file-compat.invalid/v1"
model = "file-compat-model"
[bedrock]
model_id = "file.bedrock"
[gemini]
model = "file-gemini"
base_url = "http://file-gemini.invalid/v1beta"
[local]
quotes = "words"
[ask]
database = "file.sqlite3"
gate = "off"
top_k = 5
min_typed_similarity = 0.5
[serve]
database = "serve-file.sqlite3"
"#;

#[test]
fn provider_is_flag_then_env_then_file_then_local() {
    let f = file(FILE);
    let none = ProviderFlags::default();
    let flag = ProviderFlags {
        provider: Some(ProviderName::Openai),
        ..ProviderFlags::default()
    };
    let env = MapEnv::of([(PROVIDER_ENV, "azure")]);
    let empty = MapEnv::default();
    assert_eq!(
        Settings::new(&flag, &f, &env).provider().unwrap(),
        ProviderName::Openai
    );
    assert_eq!(
        Settings::new(&none, &f, &env).provider().unwrap(),
        ProviderName::Azure
    );
    assert_eq!(
        Settings::new(&none, &f, &empty).provider().unwrap(),
        ProviderName::Anthropic
    );
    let default = FileConfig::default();
    assert_eq!(
        Settings::new(&none, &default, &empty).provider().unwrap(),
        ProviderName::Local
    );
    // A bad value in the environment names the variable and the values.
    let bad = MapEnv::of([(PROVIDER_ENV, "gpt")]);
    let e = Settings::new(&none, &f, &bad).provider().unwrap_err();
    assert_eq!(e.subject(), PROVIDER_ENV);
    assert!(e.message().contains("openai-compatible"), "{e}");
}

#[test]
fn model_and_base_url_are_flag_then_provider_env_then_file() {
    let f = file(FILE);
    let none = ProviderFlags::default();
    let flag = ProviderFlags {
        model: Some("flag-model".into()),
        base_url: Some("http://flag.invalid/v1".into()),
        ..ProviderFlags::default()
    };
    let env = MapEnv::of([
        ("OPENAI_MODEL", "env-model"),
        ("OPENAI_BASE_URL", "http://env.invalid/v1"),
        ("ANTHROPIC_MODEL", "env-claude"),
        ("CHAT_DEPLOYMENT", "env-deployment"),
        ("AZURE_OPENAI_ENDPOINT", "https://env.openai.azure.com"),
        ("GROUNDCITE_COMPAT_MODEL", "env-compat-model"),
        ("BEDROCK_MODEL_ID", "env.bedrock"),
        ("GEMINI_MODEL", "env-gemini"),
    ]);
    let empty = MapEnv::default();
    let cases = [
        (ProviderName::Gemini, "env-gemini", "file-gemini"),
        (ProviderName::Openai, "env-model", "file-model"),
        (ProviderName::OpenaiResponses, "env-model", "file-model"),
        (ProviderName::Anthropic, "env-claude", "file-claude"),
        (
            ProviderName::AnthropicCitations,
            "env-claude",
            "file-claude",
        ),
        (ProviderName::Azure, "env-deployment", "file-deployment"),
        (
            ProviderName::OpenaiCompatible,
            "env-compat-model",
            "file-compat-model",
        ),
        (ProviderName::Bedrock, "env.bedrock", "file.bedrock"),
    ];
    for (p, from_env, from_file) in cases {
        assert_eq!(
            Settings::new(&flag, &f, &env).model(p).as_deref(),
            Some("flag-model"),
            "{p}"
        );
        assert_eq!(
            Settings::new(&none, &f, &env).model(p).as_deref(),
            Some(from_env),
            "{p}"
        );
        assert_eq!(
            Settings::new(&none, &f, &empty).model(p).as_deref(),
            Some(from_file),
            "{p}"
        );
    }
    assert_eq!(
        Settings::new(&flag, &f, &env).model(ProviderName::Local),
        None
    );

    let url = |flags, env, p| Settings::new(flags, &f, env).base_url(p);
    assert_eq!(
        url(&flag, &env, ProviderName::Openai).as_deref(),
        Some("http://flag.invalid/v1")
    );
    assert_eq!(
        url(&none, &env, ProviderName::Openai).as_deref(),
        Some("http://env.invalid/v1")
    );
    assert_eq!(
        url(&none, &empty, ProviderName::Openai).as_deref(),
        Some("http://file.invalid/v1")
    );
    // openai-responses shares the OpenAI settings.
    assert_eq!(
        url(&none, &env, ProviderName::OpenaiResponses).as_deref(),
        Some("http://env.invalid/v1")
    );
    assert_eq!(
        url(&none, &empty, ProviderName::OpenaiResponses).as_deref(),
        Some("http://file.invalid/v1")
    );
    // Azure: AOAI_ENDPOINT (the seed's name) before AZURE_OPENAI_ENDPOINT.
    assert_eq!(
        url(&none, &env, ProviderName::Azure).as_deref(),
        Some("https://env.openai.azure.com")
    );
    let both = MapEnv::of([
        ("AOAI_ENDPOINT", "https://aoai.openai.azure.com"),
        ("AZURE_OPENAI_ENDPOINT", "https://env.openai.azure.com"),
    ]);
    assert_eq!(
        url(&none, &both, ProviderName::Azure).as_deref(),
        Some("https://aoai.openai.azure.com")
    );
    assert_eq!(
        url(&none, &empty, ProviderName::Azure).as_deref(),
        Some("https://file.openai.azure.com")
    );
    // A blank variable counts as unset.
    let blank = MapEnv::of([("OPENAI_MODEL", "  ")]);
    assert_eq!(
        Settings::new(&none, &f, &blank)
            .model(ProviderName::Openai)
            .as_deref(),
        Some("file-model")
    );
}

#[test]
fn secrets_come_from_the_environment_and_missing_ones_say_how_to_set_them() {
    let f = file(FILE);
    let none = ProviderFlags::default();
    let empty = MapEnv::default();
    let e = Settings::new(&none, &f, &empty)
        .generator(ProviderName::Openai)
        .expect_err("no key");
    assert!(matches!(e, SettingsError::Missing { .. }));
    assert_eq!(
        e.to_string(),
        "settings: The OpenAI API key is not set: set OPENAI_API_KEY."
    );
    let env = MapEnv::of([("OPENAI_API_KEY", "sk-test-not-a-key")]);
    let g = Settings::new(&none, &f, &env)
        .generator(ProviderName::Openai)
        .expect("built");
    assert_eq!(g.provider(), "openai");
    let e = Settings::new(&none, &f, &empty)
        .generator(ProviderName::OpenaiResponses)
        .expect_err("no key");
    assert_eq!(
        e.to_string(),
        "settings: The OpenAI API key is not set: set OPENAI_API_KEY."
    );
    let g = Settings::new(&none, &f, &env)
        .generator(ProviderName::OpenaiResponses)
        .expect("built");
    assert_eq!(g.provider(), "openai-responses");
    assert_eq!(
        crate::backend::default_max_tokens(ProviderName::OpenaiResponses),
        crate::backend::default_max_tokens(ProviderName::Openai)
    );
    // The resolver's Debug never shows the environment.
    let dbg = format!("{:?}", Settings::new(&none, &f, &env));
    assert!(!dbg.contains("sk-test"), "{dbg}");
}

#[test]
fn local_settings_are_flag_then_file_then_default() {
    let f = file(FILE);
    let empty = MapEnv::default();
    let none = ProviderFlags::default();
    let flag = ProviderFlags {
        quotes: Some(Quotes::Free),
        ..ProviderFlags::default()
    };
    assert_eq!(Settings::new(&flag, &f, &empty).quotes(), Quotes::Free);
    assert_eq!(Settings::new(&none, &f, &empty).quotes(), Quotes::Words);
    let default = FileConfig::default();
    assert_eq!(
        Settings::new(&none, &default, &empty).quotes(),
        Quotes::Verbatim
    );
}

#[test]
fn retrieval_settings_are_flag_then_file_then_the_providers_default() {
    let f = file(FILE);
    let none = RetrievalFlags::default();
    let flag = RetrievalFlags {
        gate: Some(GateMode::Evidence),
        top_k: Some(2),
        ..RetrievalFlags::default()
    };
    let s = ask::ask_settings(&flag, &f, ProviderName::Openai).unwrap();
    assert_eq!((s.gate.mode, s.top_k), (GateMode::Evidence, 2));
    let s = ask::ask_settings(&none, &f, ProviderName::Openai).unwrap();
    assert_eq!((s.gate.mode, s.top_k), (GateMode::Off, 5));
    assert_eq!(s.gate.min_typed_similarity, 0.5);
    let typed = RetrievalFlags {
        min_typed_similarity: Some(0.4),
        ..RetrievalFlags::default()
    };
    let s = ask::ask_settings(&typed, &f, ProviderName::Local).unwrap();
    assert_eq!(s.gate.min_typed_similarity, 0.4);
    let default = FileConfig::default();
    let s = ask::ask_settings(&none, &default, ProviderName::Local).unwrap();
    assert_eq!(s.gate.mode, GateMode::Evidence);
    // The embedded model quotes among candidates of 3 chunks; a hosted model
    // reads the 5 best chunks whole, unless told otherwise.
    assert_eq!((s.top_k, s.candidates), (3, 4));
    let s = ask::ask_settings(&none, &default, ProviderName::Openai).unwrap();
    assert_eq!(s.gate.mode, GateMode::Retrieval);
    assert_eq!((s.top_k, s.candidates), (5, 0));
    let told = RetrievalFlags {
        top_k: Some(3),
        candidates: Some(4),
        ..RetrievalFlags::default()
    };
    let s = ask::ask_settings(&told, &default, ProviderName::Anthropic).unwrap();
    assert_eq!((s.top_k, s.candidates), (3, 4));
    let bad = RetrievalFlags {
        top_k: Some(0),
        ..RetrievalFlags::default()
    };
    let e = ask::ask_settings(&bad, &default, ProviderName::Local).unwrap_err();
    assert_eq!(e.subject(), "--top-k");
    let s = ask::ask_settings(&none, &default, ProviderName::Local).unwrap();
    assert_eq!(s.gate.min_typed_similarity, 0.45);
    // Spelling correction: on, unless the file or the flag turns it off.
    assert!(s.spelling);
    let off = file("[ask]\nspelling = false\n");
    assert!(
        !ask::ask_settings(&none, &off, ProviderName::Local)
            .unwrap()
            .spelling
    );
    let flag = RetrievalFlags {
        no_spelling: true,
        ..RetrievalFlags::default()
    };
    assert!(
        !ask::ask_settings(&flag, &default, ProviderName::Openai)
            .unwrap()
            .spelling
    );
}

#[test]
fn database_is_flag_then_env_then_the_commands_key_then_ask_then_data_dir() {
    let f = file(FILE);
    let env = MapEnv::of([(DATABASE_ENV, "env.sqlite3"), ("HOME", "/home/u")]);
    let home = MapEnv::of([("HOME", "/home/u")]);
    let serve_key = f.serve.database.as_deref();
    assert_eq!(
        ask::database_url(Some("flag.sqlite3"), serve_key, &f, &env).unwrap(),
        "flag.sqlite3"
    );
    assert_eq!(
        ask::database_url(None, serve_key, &f, &env).unwrap(),
        "env.sqlite3"
    );
    assert_eq!(
        ask::database_url(None, serve_key, &f, &home).unwrap(),
        "serve-file.sqlite3"
    );
    assert_eq!(
        ask::database_url(None, None, &f, &home).unwrap(),
        "file.sqlite3"
    );
    let default = FileConfig::default();
    assert_eq!(
        ask::database_url(None, None, &default, &home).unwrap(),
        "/home/u/.local/share/groundcite/traces.sqlite3"
    );
    let xdg = MapEnv::of([("HOME", "/home/u"), ("XDG_DATA_HOME", "/data")]);
    assert_eq!(
        ask::database_url(None, None, &default, &xdg).unwrap(),
        "/data/groundcite/traces.sqlite3"
    );
    assert!(ask::database_url(None, None, &default, &MapEnv::default()).is_err());
}

#[test]
fn embedding_model_is_flag_then_env_then_file() {
    let dir = tempfile::tempdir().unwrap();
    let named = dir.path().join("absent-model").display().to_string();
    let f = file(&format!(
        "[ask]\nembed_model = \"{}/from-file\"\n",
        dir.path().display()
    ));
    // A named model that is absent is an error naming the path that won.
    let flag = RetrievalFlags {
        embed_model: Some(named.clone()),
        ..RetrievalFlags::default()
    };
    let env = MapEnv::of([("GROUNDCITE_EMBED_MODEL", "/nonexistent/from-env")]);
    let err = |flags: &RetrievalFlags, env: &MapEnv| {
        ask::embedder(flags, &f, env)
            .err()
            .expect("absent")
            .to_string()
    };
    assert!(
        err(&flag, &env).contains("absent-model"),
        "{}",
        err(&flag, &env)
    );
    let none = RetrievalFlags::default();
    assert!(
        err(&none, &env).contains("from-env"),
        "{}",
        err(&none, &env)
    );
    assert!(
        err(&none, &MapEnv::default()).contains("from-file"),
        "{}",
        err(&none, &MapEnv::default())
    );
}

#[test]
fn azure_route_is_chosen_by_the_setting_only() {
    use groundcite_providers::TokenLimitField;
    use groundcite_providers::azure::AzureRoute;

    use crate::values::AzureApi;

    let none = ProviderFlags::default();
    let plain = file(FILE);
    let versioned = ProviderFlags {
        azure_api: Some(AzureApi::Versioned),
        ..ProviderFlags::default()
    };
    let python_env = MapEnv::of([("OPENAI_API_VERSION", "2025-04-01-preview")]);
    let empty = MapEnv::default();

    // OPENAI_API_VERSION alone keeps the default v1 route (and says so).
    let c = Settings::new(&none, &plain, &python_env).azure_route();
    assert_eq!(c.route, AzureRoute::V1);
    assert_eq!(c.source, "default");
    assert_eq!(c.token_limit_field, TokenLimitField::MaxCompletionTokens);
    assert_eq!(c.ignored_api_version.as_deref(), Some("2025-04-01-preview"));
    assert!(c.worth_noting());
    assert!(
        c.note().contains("2025-04-01-preview is unused"),
        "{}",
        c.note()
    );

    // Nothing set: v1, nothing worth a note.
    let c = Settings::new(&none, &plain, &empty).azure_route();
    assert_eq!(c.route, AzureRoute::V1);
    assert!(!c.worth_noting());
    assert_eq!(c.note(), "azure route: v1 (default), max_completion_tokens");

    // The flag chooses the versioned route; the variable sets its version,
    // which takes max_completion_tokens.
    let c = Settings::new(&versioned, &plain, &python_env).azure_route();
    assert_eq!(
        c.route,
        AzureRoute::Versioned {
            api_version: "2025-04-01-preview".into()
        }
    );
    assert_eq!(c.source, "--azure-api");
    assert_eq!(c.token_limit_field, TokenLimitField::MaxCompletionTokens);
    assert!(c.worth_noting());

    // The file chooses it too; 2024-10-21 (the default version) documents
    // max_tokens only.
    let f = file("[azure]\napi = \"versioned\"\n");
    let c = Settings::new(&none, &f, &empty).azure_route();
    assert_eq!(
        c.route,
        AzureRoute::Versioned {
            api_version: "2024-10-21".into()
        }
    );
    assert_eq!(c.source, "[azure] api");
    assert_eq!(c.token_limit_field, TokenLimitField::MaxTokens);
    assert_eq!(
        c.note(),
        "azure route: versioned, api-version 2024-10-21 ([azure] api), max_tokens"
    );

    // The flag wins over the file; the file's field is forced on any route.
    let f = file(
        "[azure]\napi = \"versioned\"\napi_version = \"2024-10-21\"\ntoken_limit_field = \"max_completion_tokens\"\n",
    );
    let v1 = ProviderFlags {
        azure_api: Some(AzureApi::V1),
        ..ProviderFlags::default()
    };
    let c = Settings::new(&v1, &f, &empty).azure_route();
    assert_eq!(c.route, AzureRoute::V1);
    assert_eq!(c.ignored_api_version.as_deref(), Some("2024-10-21"));
    let c = Settings::new(&none, &f, &empty).azure_route();
    assert_eq!(c.token_limit_field, TokenLimitField::MaxCompletionTokens);
    assert!(c.field_forced);
    assert!(
        c.note()
            .ends_with("max_completion_tokens ([azure] token_limit_field)")
    );
}

#[test]
fn gemini_settings_key_and_default_limit() {
    let none = ProviderFlags::default();
    let f = file(FILE);
    let url = |env: &MapEnv| Settings::new(&none, &f, env).base_url(ProviderName::Gemini);
    assert_eq!(
        url(&MapEnv::of([(
            "GEMINI_BASE_URL",
            "http://env-gemini.invalid"
        )]))
        .as_deref(),
        Some("http://env-gemini.invalid")
    );
    assert_eq!(
        url(&MapEnv::default()).as_deref(),
        Some("http://file-gemini.invalid/v1beta")
    );
    // GEMINI_API_KEY, else GOOGLE_API_KEY; a missing key names both.
    let built = |env: &MapEnv, f: &FileConfig| {
        Settings::new(&none, f, env)
            .generator(ProviderName::Gemini)
            .map(|g| g.provider())
    };
    assert_eq!(
        built(&MapEnv::of([("GOOGLE_API_KEY", "AIza-google")]), &f).unwrap(),
        "gemini"
    );
    let e = built(&MapEnv::default(), &f).unwrap_err();
    assert!(
        e.to_string().contains("GEMINI_API_KEY (or GOOGLE_API_KEY)"),
        "{e}"
    );
    // [gemini] api_key_env names the one variable to read.
    let own = file("[gemini]\nmodel = \"m\"\napi_key_env = \"TEAM_GEMINI_KEY\"\n");
    let e = built(&MapEnv::of([("GEMINI_API_KEY", "AIza-x")]), &own).unwrap_err();
    assert!(e.to_string().contains("TEAM_GEMINI_KEY"), "{e}");
    assert!(!e.to_string().contains("AIza-x"), "{e}");
    assert!(built(&MapEnv::of([("TEAM_GEMINI_KEY", "AIza-y")]), &own).is_ok());
    assert_eq!(
        crate::backend::default_max_tokens(ProviderName::Gemini),
        Some(groundcite_providers::REASONING_DEFAULT_MAX_TOKENS)
    );
}

#[test]
fn azure_v1_responses_route() {
    use groundcite_providers::azure::AzureRoute;

    use crate::values::AzureApi;

    let flags = ProviderFlags {
        azure_api: Some(AzureApi::V1Responses),
        ..ProviderFlags::default()
    };
    let empty = MapEnv::default();
    let c = Settings::new(&flags, &file(FILE), &empty).azure_route();
    assert_eq!(c.route, AzureRoute::V1Responses);
    assert!(c.worth_noting());
    assert_eq!(
        c.note(),
        "azure route: v1-responses (--azure-api), max_output_tokens"
    );
    let f = file(
        "[azure]\napi = \"v1-responses\"\nendpoint = \"https://r.openai.azure.com\"\ndeployment = \"d\"\n",
    );
    let c = Settings::new(&ProviderFlags::default(), &f, &empty).azure_route();
    assert_eq!(c.route, AzureRoute::V1Responses);
    assert_eq!(c.source, "[azure] api");
    let key = MapEnv::of([("AZURE_OPENAI_API_KEY", "aoai-x")]);
    let g = Settings::new(&ProviderFlags::default(), &f, &key)
        .generator(ProviderName::Azure)
        .unwrap();
    assert_eq!(g.provider(), "azure");
    assert_eq!(
        g.mode(),
        groundcite_providers::Mode::Structured(groundcite_core::schema::Target::Azure)
    );
}

#[test]
fn resilience_settings_come_from_the_file_and_default_otherwise() {
    let none = ProviderFlags::default();
    let empty = MapEnv::default();
    let f = file(
        "[resilience]\nretry_budget_percent = 20\nretry_budget_per_second = 2\nretry_budget_max = 4\nbreaker_failures = 0\nbreaker_cool_down_secs = 2.5\n",
    );
    let http = Settings::new(&none, &f, &empty).http_config().unwrap();
    assert_eq!(http.retry_budget.percent, 20);
    assert_eq!(http.retry_budget.min_per_second, 2);
    assert_eq!(http.retry_budget.max_tokens, 4);
    assert_eq!(http.breaker.failure_threshold, 0);
    assert_eq!(
        http.breaker.cool_down,
        std::time::Duration::from_millis(2500)
    );
    let default = FileConfig::default();
    let http = Settings::new(&none, &default, &empty)
        .http_config()
        .unwrap();
    assert_eq!(
        http.retry_budget,
        groundcite_providers::resilience::RetryBudget::default()
    );
    let bad = file("[resilience]\nbreaker_cool_down_secs = -1\n");
    assert!(Settings::new(&none, &bad, &empty).http_config().is_err());
}

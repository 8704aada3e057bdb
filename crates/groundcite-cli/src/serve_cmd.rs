//! `groundcite serve` (the HTTP service) and `groundcite key new` (an API
//! key for it).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;
use groundcite_app::{
    FileConfig, ProcessEnv, ProviderFlags, ProviderName, RetrievalFlags, Settings, ask, config,
};
use groundcite_core::{ClaimPolicy, MatchProfile};
use groundcite_index::{Index, IndexConfig};
use groundcite_server::{
    ApiKeys, AppState, Corpus, CorpusSource, Limits, ServerConfig, Store, key_digest,
};

use crate::input::BadInput;

#[derive(Debug, clap::Args)]
pub struct ServeArgs {
    /// Address to listen on (else `[serve] addr`, else 127.0.0.1:8787).
    #[arg(long, value_name = "HOST:PORT", env = "GROUNDCITE_ADDR")]
    addr: Option<String>,
    /// Trace store: a SQLite file, `sqlite://PATH`, or `postgres://…` (else
    /// `[serve] database`, `[ask] database`, the data directory's
    /// traces.sqlite3).
    #[arg(
        long,
        visible_alias = "database-url",
        value_name = "URL",
        env = "GROUNDCITE_DATABASE"
    )]
    database: Option<String>,
    /// API keys: a TOML file of `[[keys]] tenant = "…" sha256 = "…"` (else
    /// `[serve] api_keys_file`).
    #[arg(long, value_name = "FILE", env = "GROUNDCITE_API_KEYS_FILE")]
    api_keys_file: Option<String>,
    /// Serve without API keys: one anonymous tenant that reads every trace.
    /// For a single-user service on a trusted host only; any key file set
    /// in the environment or the file is then ignored.
    #[arg(long)]
    no_auth: bool,
    /// Serve verification only: no model for `/v1/answer` and
    /// `/v1/chat/completions` (they answer 501).
    #[arg(long)]
    no_model: bool,
    /// Skip the start-up warm-up request (`/readyz` is ready at once).
    #[arg(long)]
    no_warmup: bool,
    /// Delete traces older than this many days (checked hourly).
    #[arg(long, value_name = "DAYS")]
    retention_days: Option<u32>,
    /// Memory for recognising chunks already stored with earlier traces, in
    /// MiB (else `[serve] chunk_cache_mb`, else 32; 0: store every trace's
    /// chunks anew).
    #[arg(long, value_name = "MIB")]
    chunk_cache_mb: Option<u32>,
    /// Allow this origin to call the API from a browser (repeatable); CORS
    /// is off by default.
    #[arg(long = "cors-origin", value_name = "ORIGIN")]
    cors_origins: Vec<String>,
    /// Default matching profile: `default` or `lenient`.
    #[arg(long = "match", value_name = "PROFILE", default_value = "default")]
    profile: MatchProfile,
    /// Folder of documents (Markdown, reStructuredText, AsciiDoc, text,
    /// PDF, HTML, DOCX, ODT, EPUB) that `POST /v1/ask` (and the web page's
    /// Ask form) answers from (else `[ask] docs`); changed files are
    /// indexed at start-up. Without it, /v1/ask answers 409 `no_corpus`.
    #[arg(long, value_name = "DIR")]
    docs: Option<String>,
    /// Where the index of --docs lives (else `[ask] index`, else the
    /// directory `groundcite ask` uses for that folder).
    #[arg(long, value_name = "DIR")]
    index: Option<String>,
    /// Retrieval and the gate of /v1/ask (as `groundcite ask`).
    #[command(flatten)]
    r: RetrievalFlags,
    /// Base URL of the documents: a chunk's `source_url` is this URL + the
    /// document's path (else `[ask] base_url`; none: `source_url` is null).
    #[arg(long, value_name = "URL")]
    source_base_url: Option<String>,
    /// Claims whose quotes do not carry their quantities, for /v1/ask
    /// requests that do not choose: `strict` drops them, `lenient` keeps
    /// them with a warning.
    #[arg(long = "claims", value_name = "POLICY", default_value = "strict")]
    policy: ClaimPolicy,
    /// Largest request body in bytes.
    #[arg(long, value_name = "BYTES", default_value_t = Limits::default().max_body_bytes)]
    max_body_bytes: usize,
    /// Most chunks in one request.
    #[arg(long, value_name = "N", default_value_t = Limits::default().max_chunks)]
    max_chunks: usize,
    /// Requests served at once before 503 + Retry-After.
    #[arg(long, value_name = "N", default_value_t = Limits::default().max_concurrency)]
    max_concurrency: usize,
    /// Model generations at once before 503 + Retry-After (a question the
    /// relevance gate answers takes none).
    #[arg(long, value_name = "N", default_value_t = Limits::default().max_generations)]
    max_generations: usize,
    /// Seconds before a request times out (503 `timeout`).
    #[arg(long, value_name = "SECS", default_value_t = Limits::default().request_timeout.as_secs())]
    request_timeout: u64,
    /// Log format on stderr.
    #[arg(long, value_enum, default_value = "json")]
    log_format: LogFormat,
    /// Worker threads of the async runtime (default: the number of cores).
    #[arg(long, value_name = "N")]
    workers: Option<usize>,
    #[command(flatten)]
    p: ProviderFlags,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum LogFormat {
    Json,
    Text,
}

#[derive(Debug, clap::Args)]
pub struct KeyArgs {
    #[command(subcommand)]
    command: KeyCommand,
}

#[derive(Debug, clap::Subcommand)]
enum KeyCommand {
    /// Print a new random API key (once: it is not stored) and the
    /// `[[keys]]` entry to append to the service's key file.
    New {
        /// The tenant the key belongs to.
        #[arg(long)]
        tenant: String,
    },
    /// Print the `[[keys]]` entry of an existing key read from stdin.
    Hash {
        /// The tenant the key belongs to.
        #[arg(long)]
        tenant: String,
    },
}

pub fn key(args: KeyArgs) -> anyhow::Result<ExitCode> {
    match args.command {
        KeyCommand::New { tenant } => {
            groundcite_server::validate_tenant(&tenant)
                .map_err(|m| BadInput::new("--tenant", m.to_string()))?;
            let mut bytes = [0u8; 32];
            getrandom::fill(&mut bytes).context("reading the system's random source")?;
            let key = format!("gck_{}", hex::encode(bytes));
            println!("{key}");
            eprintln!(
                "# Give the key above to the client; append this to the key file:\n[[keys]]\ntenant = \"{tenant}\"\nsha256 = \"{}\"",
                key_digest(&key)
            );
        }
        KeyCommand::Hash { tenant } => {
            groundcite_server::validate_tenant(&tenant)
                .map_err(|m| BadInput::new("--tenant", m.to_string()))?;
            let mut key = String::new();
            std::io::stdin().read_line(&mut key)?;
            let key = key.trim();
            if key.is_empty() {
                return Err(BadInput::new("<stdin>", "no key on standard input").into());
            }
            println!(
                "[[keys]]\ntenant = \"{tenant}\"\nsha256 = \"{}\"",
                key_digest(key)
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

pub fn run(args: ServeArgs) -> anyhow::Result<ExitCode> {
    crate::init_logging("info", args.log_format == LogFormat::Json);
    let (file, _) = config::load(args.p.config.as_deref(), &ProcessEnv)?;
    // Flag or environment (clap reads GROUNDCITE_ADDR), then the file.
    let addr_text = args
        .addr
        .clone()
        .or_else(|| file.serve.addr.clone())
        .unwrap_or_else(|| "127.0.0.1:8787".into());
    let addr: SocketAddr = addr_text
        .parse()
        .map_err(|e| BadInput::new("--addr", format!("{addr_text:?} is not HOST:PORT ({e})")))?;
    let keys = if args.no_auth {
        ApiKeys::disabled()
    } else {
        let path = args
            .api_keys_file
            .clone()
            .or_else(|| file.serve.api_keys_file.clone())
            .ok_or_else(|| {
                BadInput::new(
                    "--api-keys-file",
                    "API keys are required: pass --api-keys-file FILE (create a key with `groundcite key new --tenant NAME`), set GROUNDCITE_API_KEYS_FILE or [serve] api_keys_file, or pass --no-auth for a single-user service",
                )
            })?;
        ApiKeys::load(&PathBuf::from(&path))
            .map_err(|m| BadInput::new("--api-keys-file", m.to_string()))?
    };
    let database = ask::database_url(
        args.database.as_deref(),
        file.serve.database.as_deref(),
        &file,
        &ProcessEnv,
    )?;
    let (backend, chat) = if args.no_model {
        (None, None)
    } else {
        let resolver = Settings::new(&args.p, &file, &ProcessEnv);
        let provider = resolver.provider()?;
        let backend = resolver.backend(provider)?;
        if provider == ProviderName::Azure {
            // Once at start-up, whatever chose it: a service's route should
            // be visible in its log.
            eprintln!("note: {}", resolver.azure_route().note());
        }
        // The OpenAI-compatible endpoint serves the embedded model only.
        let chat = (provider == ProviderName::Local).then(|| backend.shared_generator());
        (Some(backend), chat)
    };
    let limits = Limits {
        max_body_bytes: args.max_body_bytes,
        max_chunks: args.max_chunks,
        max_concurrency: args.max_concurrency,
        max_generations: args.max_generations,
        request_timeout: Duration::from_secs(args.request_timeout.max(1)),
        ..Limits::default()
    };
    let retention = args
        .retention_days
        .or(file.serve.retention_days)
        .map(|d| Duration::from_secs(u64::from(d) * 86_400));
    let chunk_cache_mb = args.chunk_cache_mb.or(file.serve.chunk_cache_mb);
    if let Some(mib) = chunk_cache_mb
        && mib > 65_536
    {
        return Err(BadInput::new(
            "--chunk-cache-mb",
            format!("at most 65536 MiB, got {mib} (--chunk-cache-mb or [serve] chunk_cache_mb)"),
        )
        .into());
    }
    let mut cors_origins = args.cors_origins.clone();
    cors_origins.extend(file.serve.cors_origins.iter().cloned());
    let corpus = open_corpus(&args, &file)?;
    let mut runtime = tokio::runtime::Builder::new_multi_thread();
    runtime.enable_all();
    if let Some(n) = args.workers {
        runtime.worker_threads(n.max(1));
    }
    let runtime = runtime.build().context("starting the async runtime")?;
    runtime.block_on(async move {
        // Migrations run here, before the socket opens.
        let store = Store::open(&database).await?;
        if let Some(mib) = chunk_cache_mb {
            store.set_chunk_cache_bytes(usize::try_from(mib).unwrap_or(usize::MAX) << 20);
        }
        let state = AppState::new(ServerConfig {
            store,
            keys,
            limits,
            backend,
            chat,
            corpus,
            profile: args.profile,
            retention,
            cors_origins,
        });
        groundcite_server::serve(addr, state, !args.no_warmup)
            .await
            .with_context(|| format!("serving on {addr}"))?;
        Ok::<_, anyhow::Error>(())
    })?;
    Ok(ExitCode::SUCCESS)
}

/// The corpus of `/v1/ask`: a search service (`--retriever`), or the
/// index of `--docs` / `[ask] docs` brought up to date (changed files only)
/// before the socket opens; none when neither is set.
fn open_corpus(args: &ServeArgs, file: &FileConfig) -> anyhow::Result<Option<Corpus>> {
    let resolver = Settings::new(&args.p, file, &ProcessEnv);
    let external = groundcite_app::retriever::external(&args.r, &file.retriever, &ProcessEnv)?;
    if let Some(r) = external {
        let provider = resolver.provider()?;
        let mut settings = ask::ask_settings(&args.r, file, provider)?;
        settings.profile = args.profile;
        settings.policy = args.policy;
        let embed = crate::progress::embedder(&args.r, file)?;
        return Ok(Some(Corpus {
            source: CorpusSource::Retriever(std::sync::Arc::from(r)),
            embed,
            settings,
            trace_options: groundcite_store::TraceOptions {
                quotes: Some(resolver.quotes().as_str().to_string()),
                ..Default::default()
            },
            docs_dir: None,
        }));
    }
    let docs = ask::docs_dir(args.docs.as_deref(), file)
        .map_err(|e| BadInput::new("--docs", e.to_string()))?;
    let Some(docs) = docs else {
        return Ok(None);
    };
    let provider = resolver.provider()?;
    let mut settings = ask::ask_settings(&args.r, file, provider)?;
    settings.profile = args.profile;
    settings.policy = args.policy;
    let index_dir = ask::index_dir(args.index.as_deref(), file, &docs, &ProcessEnv)?;
    let embed = crate::progress::embedder(&args.r, file)?;
    let mut index = Index::open_or_create(&index_dir)?;
    let cfg = IndexConfig {
        base_url: args
            .source_base_url
            .clone()
            .or_else(|| file.ask.base_url.clone()),
        ..IndexConfig::default()
    };
    // Prints what changed (stderr); the service logs the corpus size once serving.
    crate::progress::update_index(&mut index, &docs, &cfg, embed.as_deref(), true)?;
    let quotes = resolver.quotes().as_str().to_string();
    Ok(Some(Corpus {
        source: CorpusSource::Index(std::sync::Arc::new(index)),
        embed,
        settings,
        trace_options: groundcite_store::TraceOptions {
            quotes: Some(quotes),
            docs: Some(docs.display().to_string()),
            ..Default::default()
        },
        docs_dir: Some(docs),
    }))
}

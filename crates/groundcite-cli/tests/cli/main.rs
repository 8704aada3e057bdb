//! The CLI's end-to-end tests, one binary: each module ran as its own test
//! binary before, and every one of them linked the whole stack (llama.cpp,
//! tantivy, the AWS SDK), which cost minutes of linking and gigabytes of
//! disk in CI.

mod common;

mod answer_bedrock;
mod answer_defaults;
mod answer_schema;
mod ask_retriever;
mod cli_answer;
mod cli_ask;
mod cli_eval;
mod cli_parse;
mod cli_settings;
mod cli_verify;
mod schema_cli;
mod serve_ask;
mod serve_durability;
mod serve_self;

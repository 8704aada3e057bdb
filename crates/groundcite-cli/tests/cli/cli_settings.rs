//! CLI conventions: every setting resolves flag > environment > file, the
//! configuration file is discovered the documented way, `--help` names each
//! flag's variable and each fixed value, and completions, the man page and
//! `--version` exist.

use std::process::{Command, Output};

use crate::common::{Tmp, repo, text};

/// Runs `groundcite` with `args` and exactly the variables `env` (plus
/// PATH and HOME pointed at `home`), so the runner's environment cannot leak
/// in.
fn run(args: &[&str], env: &[(&str, &str)], home: &str) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_groundcite"));
    cmd.args(args)
        .current_dir(repo())
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home);
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("runs")
}

#[test]
fn help_names_variables_and_values() {
    let tmp = Tmp::new("help");
    let home = tmp.file(".keep", b"");
    let home = home.trim_end_matches("/.keep");
    let out = run(&["ask", "--help"], &[], home);
    assert!(out.status.success());
    let help = text(&out.stdout);
    for needle in [
        "[env: GROUNDCITE_DATABASE=]",
        "[env: GROUNDCITE_PROVIDER=]",
        "[env: GROUNDCITE_CONFIG=]",
        "[env: GROUNDCITE_MODEL=]",
        "[env: GROUNDCITE_EMBED_MODEL=]",
        // Fixed values are listed, `words` included.
        "verbatim",
        "words",
        "openai-compatible",
        "evidence",
    ] {
        assert!(help.contains(needle), "{needle} missing from:\n{help}");
    }
    let out = run(&["serve", "--help"], &[], home);
    let help = text(&out.stdout);
    assert!(help.contains("[env: GROUNDCITE_ADDR=]"), "{help}");
    assert!(help.contains("[env: GROUNDCITE_API_KEYS_FILE=]"), "{help}");
}

#[test]
fn completions_man_page_and_version() {
    let tmp = Tmp::new("completions");
    let home = tmp.file(".keep", b"");
    let home = home.trim_end_matches("/.keep");
    let out = run(&["completions", "bash"], &[], home);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let script = text(&out.stdout);
    assert!(script.contains("_groundcite()"), "{script}");
    assert!(
        script.contains("--min-p-answerable"),
        "subcommand flags are completed"
    );
    let out = run(&["completions", "zsh"], &[], home);
    assert!(text(&out.stdout).contains("#compdef groundcite"));
    let out = run(&["man"], &[], home);
    assert!(out.status.success());
    assert!(text(&out.stdout).starts_with(".ie") || text(&out.stdout).contains(".TH groundcite"));
    let out = run(&["--version"], &[], home);
    let v = text(&out.stdout);
    assert!(v.starts_with("groundcite "), "{v}");
    assert!(v.contains("features: "), "{v}");
    assert_eq!(v.contains("local"), cfg!(feature = "local"), "{v}");
}

#[test]
fn the_database_is_flag_then_environment_then_file() {
    let tmp = Tmp::new("precedence");
    let dir = tmp.file(".keep", b"");
    let dir = dir.trim_end_matches("/.keep");
    let from_file = format!("{dir}/file.sqlite3");
    let from_env = format!("{dir}/env.sqlite3");
    let from_flag = format!("{dir}/flag.sqlite3");
    let config = tmp.file(
        "g.toml",
        format!("[ask]\ndatabase = \"{from_file}\"\n").as_bytes(),
    );
    let exists = |p: &str| std::path::Path::new(p).exists();

    // Environment over file.
    let out = run(
        &["trace", "list", "--config", &config],
        &[("GROUNDCITE_DATABASE", &from_env)],
        dir,
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(exists(&from_env) && !exists(&from_file));
    // Flag over environment.
    let out = run(
        &[
            "trace",
            "list",
            "--config",
            &config,
            "--database",
            &from_flag,
        ],
        &[("GROUNDCITE_DATABASE", &from_env)],
        dir,
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(exists(&from_flag) && !exists(&from_file));
    // File when neither is set; the file found through GROUNDCITE_CONFIG.
    let out = run(&["trace", "list"], &[("GROUNDCITE_CONFIG", &config)], dir);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(exists(&from_file));
}

#[test]
fn the_user_configuration_directory_is_the_last_place_looked() {
    let tmp = Tmp::new("userconfig");
    let dir = tmp.file(".keep", b"");
    let dir = dir.trim_end_matches("/.keep");
    let db = format!("{dir}/user.sqlite3");
    std::fs::create_dir_all(format!("{dir}/xdg/groundcite")).unwrap();
    std::fs::write(
        format!("{dir}/xdg/groundcite/groundcite.toml"),
        format!("[ask]\ndatabase = \"{db}\"\n"),
    )
    .unwrap();
    let xdg = format!("{dir}/xdg");
    let out = run(&["trace", "list"], &[("XDG_CONFIG_HOME", &xdg)], dir);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(std::path::Path::new(&db).exists());
}

#[test]
fn bad_fixed_values_name_the_accepted_ones() {
    let tmp = Tmp::new("badvalue");
    let dir = tmp.file(".keep", b"");
    let dir = dir.trim_end_matches("/.keep");
    let config = tmp.file("g.toml", b"# comment\nprovider = \"gpt\"\n");
    let out = run(&["trace", "list", "--config", &config], &[], dir);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    let err = text(&out.stderr);
    assert!(err.contains("g.toml:2"), "{err}");
    assert!(err.contains("openai-compatible"), "{err}");
    // From the environment: the value and the accepted ones, exit 2.
    let out = run(
        &["answer", "--chunks", "-", "--question", "q"],
        &[("GROUNDCITE_PROVIDER", "gpt")],
        dir,
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    let err = text(&out.stderr);
    assert!(
        err.contains("gpt") && err.contains("openai-compatible"),
        "{err}"
    );
}

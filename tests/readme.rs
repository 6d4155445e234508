//! Every command of README.md's set-up (the main job), quick start, command-line,
//! GCS / DM, sparse tensor column and Parquet archive sections, run in a scratch
//! folder on the CLI cargo built for this test run, prints what the README shows. The commands and their output are read from the README's `console`
//! blocks (`$ command` lines, each followed by its exact standard output), so the
//! README and this test cannot drift apart.
//!
//! The README builds and runs the release CLI; the test runs the same commands
//! on the binary cargo built beside it (`CARGO_BIN_EXE_arrow-sparse`: the test
//! profile under `cargo test`, the release one under `cargo test --release`).
//! The code is the same and so is the output; CI spares the 10-17 minutes a cold
//! release build takes on two cores. The Python line runs on `ARROW_SPARSE_PYTHON`
//! (set by test-all.sh) or the project venv `.venv/bin/python`.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

/// The README's build line, which the test replaces by the binary cargo built.
const BUILD: &str = r#"cargo build --release --locked && export PATH="$PWD/target/release:$PATH""#;
/// The main job of the set-up section runs the release CLI with these arguments
/// appended (here: the binary cargo built, with the same arguments).
const MAIN_JOB: &str = "cargo run --release --locked -- ";

/// A command of a console block and the standard output shown after it.
#[derive(Debug)]
struct Step {
    command: String,
    output: String,
}

/// The fenced blocks of `text` whose info string is `lang`, as lists of lines.
fn blocks(text: &str, lang: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let mut current: Option<Vec<String>> = None;
    for line in text.lines() {
        match (&mut current, line.strip_prefix("```")) {
            (None, Some(info)) if info.trim() == lang => current = Some(Vec::new()),
            (Some(_), Some("")) => out.push(current.take().unwrap()),
            (Some(block), _) => block.push(line.to_string()),
            (None, _) => {}
        }
    }
    assert!(current.is_none(), "unclosed ```{lang} block");
    out
}

fn steps(block: &[String]) -> Vec<Step> {
    let mut steps: Vec<Step> = Vec::new();
    for line in block {
        match line.strip_prefix("$ ") {
            Some(command) => steps.push(Step {
                command: command.to_string(),
                output: String::new(),
            }),
            None => {
                let step = steps
                    .last_mut()
                    .unwrap_or_else(|| panic!("output before any command: {line}"));
                step.output.push_str(line);
                step.output.push('\n');
            }
        }
    }
    steps
}

/// The folder of the CLI cargo built with this test.
fn bin_dir() -> PathBuf {
    let exe = PathBuf::from(env!("CARGO_BIN_EXE_arrow-sparse"));
    exe.parent().unwrap().to_path_buf()
}

fn python() -> PathBuf {
    let p = std::env::var_os("ARROW_SPARSE_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| common::repo().join(".venv/bin/python"));
    assert!(
        p.exists(),
        "{} does not exist: run `bash scripts/setup-interop.sh` (the test command does) or set ARROW_SPARSE_PYTHON",
        p.display()
    );
    p
}

/// Run `steps` in `dir` (`export`s carry over to the later steps); every step's
/// exit code, standard output and standard error.
fn run(dir: &Path, steps: &[(String, &Step)]) -> Vec<(i32, String, String)> {
    let mut results = Vec::new();
    // each step in its own shell, after the earlier steps' `export` lines
    let mut exports = String::new();
    for (command, _) in steps {
        let script = format!("{exports}{command}");
        let out = Command::new("bash")
            .args(["-c", &script])
            .current_dir(dir)
            .env_remove("ARROW_SPARSE_PROGRESS_DELAY_MS")
            .output()
            .unwrap();
        results.push((
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        ));
        if command.starts_with("export ") {
            exports.push_str(command);
            exports.push('\n');
        }
    }
    results
}

#[test]
fn every_readme_command_prints_what_the_readme_shows() {
    let readme = std::fs::read_to_string(common::repo().join("README.md")).unwrap();
    let bin = bin_dir();
    let python = python();
    let scratch = tempfile::tempdir().unwrap();
    std::fs::create_dir(scratch.path().join("data")).unwrap();
    for sample in ["sample.mtx", "sample.tns"] {
        std::fs::copy(
            common::repo().join("data").join(sample),
            scratch.path().join("data").join(sample),
        )
        .unwrap();
    }

    // the console blocks, in README order: quick start, command line, GCS / DM,
    // sparse tensor columns, Parquet archives (one session: later blocks use the
    // files earlier ones wrote)
    let all: Vec<Step> = blocks(&readme, "console")
        .iter()
        .flat_map(|b| steps(b))
        .collect();
    assert!(
        all.len() >= 20,
        "{} console commands in README.md",
        all.len()
    );
    assert_eq!(
        all[0].command, BUILD,
        "the quick start's first command changed: update tests/readme.rs"
    );
    let export = format!("export PATH=\"{}:$PATH\"", bin.display());

    // the set-up's main job runs the CLI on the sample; it prints what
    // the same command of the quick start shows
    let setup = blocks(&readme, "sh")
        .into_iter()
        .find(|b| b.iter().any(|l| l.starts_with("bash scripts/test-all.sh")))
        .expect("the set-up block");
    assert_eq!(setup.len(), 2, "two set-up commands: {setup:?}");
    let main_job = setup[0].split(" #").next().unwrap().trim();
    let args = main_job
        .strip_prefix(MAIN_JOB)
        .unwrap_or_else(|| panic!("the main job is not `{MAIN_JOB}...`: {main_job}"));
    let shown = all
        .iter()
        .find(|s| s.command == format!("arrow-sparse {args}"))
        .unwrap_or_else(|| panic!("the quick start does not show `arrow-sparse {args}`"));

    let mut plan: Vec<(String, &Step)> = Vec::new();
    plan.push((export.clone(), &all[0]));
    let main_step = Step {
        command: main_job.to_string(),
        output: shown.output.clone(),
    };
    plan.push((format!("arrow-sparse {args}"), &main_step));
    for step in &all[1..] {
        let command = step
            .command
            .replace(".venv/bin/python", &python.display().to_string());
        assert!(
            !command.contains("cargo "),
            "a README command runs cargo: {}",
            step.command
        );
        plan.push((command, step));
    }
    let results = run(scratch.path(), &plan);
    for ((command, step), (code, stdout, stderr)) in plan.iter().zip(&results) {
        assert_eq!(
            (*code, stderr.as_str()),
            (0, ""),
            "README command `{}` (run as `{command}`) failed",
            step.command
        );
        assert_eq!(
            stdout, &step.output,
            "README command `{}` prints something else than README.md shows",
            step.command
        );
    }
    // the files it wrote are the ones .gitignore lists for the repository root
    let gitignore = std::fs::read_to_string(common::repo().join(".gitignore")).unwrap();
    for entry in std::fs::read_dir(scratch.path()).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        if name != "data" {
            assert!(
                gitignore.lines().any(|l| l == format!("/{name}")),
                "the README writes {name}, which .gitignore does not list"
            );
        }
    }
}

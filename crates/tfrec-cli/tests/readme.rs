//! The command-line tour runs as written: every command of the README's first-screen example and
//! of the guide's tour (docs/guide/cli.md, which the README's tour became), in order, on a fresh
//! copy of the samples, with `tfrec` on the PATH. (scripts/docs runs them again, with every other
//! code block of the guide.)

mod common;

use std::path::Path;
use std::process::Command;

use common::*;

/// The ```sh blocks between `heading` and the next heading of the same or a higher level.
fn sh_blocks(readme: &str, heading: &str) -> Vec<String> {
    let start = readme
        .find(&format!("\n{heading}\n"))
        .unwrap_or_else(|| panic!("no {heading:?}"));
    let rest = &readme[start + heading.len()..];
    let end = rest.find("\n### ").or_else(|| rest.find("\n## ")).unwrap_or(rest.len());
    let section = &rest[..end];
    let mut blocks = Vec::new();
    let mut inside = None;
    for line in section.lines() {
        match (&mut inside, line.trim()) {
            (None, "```sh") => inside = Some(String::new()),
            (Some(block), "```") => {
                blocks.push(std::mem::take(block));
                inside = None;
            }
            (Some(block), _) => {
                block.push_str(line);
                block.push('\n');
            }
            _ => {}
        }
    }
    blocks
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for entry in std::fs::read_dir(from).expect("read dir") {
        let entry = entry.expect("entry");
        let target = to.join(entry.file_name());
        if entry.path().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).expect("copy");
        }
    }
}

/// The commands of `heading`'s ```sh blocks in `file`: every one a tfrec command.
fn commands_of(file: &str, heading: &str) -> Vec<String> {
    let text = std::fs::read_to_string(repo().join(file)).unwrap_or_else(|e| panic!("{file}: {e}"));
    sh_blocks(&text, heading)
        .iter()
        .flat_map(|b| b.lines())
        .filter(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
        .map(str::to_string)
        .collect()
}

/// Runs `commands` in order in a fresh directory holding a copy of the samples; returns it.
fn run_in_samples_copy(commands: &[String]) -> tempfile::TempDir {
    assert!(
        commands.iter().all(|c| c.trim_start().starts_with("tfrec ")),
        "every line is a tfrec command: {commands:?}"
    );
    let dir = tempfile::tempdir().expect("temp dir");
    copy_dir(&repo().join("samples"), &dir.path().join("samples"));
    let bin = dir.path().join("bin");
    std::fs::create_dir(&bin).expect("mkdir");
    std::os::unix::fs::symlink(binary(), bin.join("tfrec")).expect("symlink");
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
    for command in commands {
        let out = Command::new("bash")
            .args(["-c", command])
            .current_dir(dir.path())
            .env("PATH", &path)
            .output()
            .expect("bash");
        assert!(
            out.status.success(),
            "documented command failed: {command}\nstdout: {}\nstderr: {}",
            text(&out.stdout),
            text(&out.stderr)
        );
    }
    dir
}

#[test]
fn the_readme_first_screen_example_runs_as_written() {
    let commands = commands_of("README.md", "## Try it");
    assert!(
        commands.len() >= 5,
        "the README's example lost its commands: {commands:?}"
    );
    let dir = run_in_samples_copy(&commands);
    assert!(dir.path().join("notebook.parquet").exists());
}

#[test]
fn every_command_of_the_tour_runs_as_written() {
    let commands = commands_of("docs/guide/cli.md", "## The tour");
    assert!(commands.len() >= 10, "the tour lost its commands: {commands:?}");
    let dir = run_in_samples_copy(&commands);
    // What the tour says it makes is there.
    for made in [
        "images.npz",
        "notebook.idx",
        "movie.tfrecord",
        "notebook.tfrecord.gz",
        "images.tfrecord",
    ] {
        assert!(dir.path().join(made).exists(), "{made}");
    }
    assert_eq!(names_in(&dir.path().join("shards")).len(), 4);
}

//! The README's tour runs as written: every command of its command-line block, in order, on a
//! fresh copy of the samples, with `tfrec` on the PATH.

mod common;

use std::path::Path;
use std::process::Command;

use common::*;

/// The ```sh blocks between `heading` and the next heading of the same or a higher level.
fn sh_blocks(readme: &str, heading: &str) -> Vec<String> {
    let start = readme
        .find(heading)
        .unwrap_or_else(|| panic!("README has no {heading:?}"));
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

#[test]
fn every_command_of_the_tour_runs_as_written() {
    let readme = std::fs::read_to_string(repo().join("README.md")).expect("README");
    let blocks = sh_blocks(&readme, "### The command line (`tfrec`)");
    let commands: Vec<&str> = blocks
        .iter()
        .flat_map(|b| b.lines())
        .filter(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
        .collect();
    assert!(commands.len() >= 10, "the tour lost its commands: {commands:?}");
    assert!(
        commands.iter().all(|c| c.trim_start().starts_with("tfrec ")),
        "every tour line is a tfrec command"
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
            "README command failed: {command}\nstdout: {}\nstderr: {}",
            text(&out.stdout),
            text(&out.stderr)
        );
    }
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

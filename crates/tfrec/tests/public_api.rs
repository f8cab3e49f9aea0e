//! The library's public signatures take and return its own types: no `serde_json::Value` (JSON
//! goes in and out as text). A check over the source of every public item (functions, fields,
//! type aliases, re-exports, traits), so it needs no rustdoc run; `.ci/run` checks the rendered
//! docs the same way.

use std::path::{Path, PathBuf};

/// The source files of the library.
fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .expect("read the source directory")
        .map(|e| e.expect("directory entry").path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Whether `text` names serde_json's tree: `serde_json::…` anywhere, or the bare names the
/// file brings in with a `use serde_json::…` line.
fn names_serde_json(text: &str, imported: &[String]) -> bool {
    text.contains("serde_json::")
        || text
            .split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .any(|word| imported.iter().any(|i| i == word))
}

/// The names a file imports from serde_json (`use serde_json::{Map, Value};` gives both).
fn imported_names(source: &str) -> Vec<String> {
    let mut names = Vec::new();
    for line in source.lines() {
        let line = line.trim();
        let Some(rest) = line.strip_prefix("use serde_json::") else {
            continue;
        };
        let rest = rest.trim_end_matches(';');
        let list = rest.trim_start_matches('{').trim_end_matches('}');
        for item in list.split(',') {
            // `json` is a macro; `Value as Json` brings in `Json`.
            let name = item.split(" as ").last().unwrap_or("").trim();
            if !name.is_empty() && name != "json" && name != "self" {
                names.push(name.to_owned());
            }
        }
    }
    names
}

/// Public signatures that name serde_json's types, as `file:line: text`.
fn offending_items(file: &str, source: &str) -> Vec<String> {
    // Unit tests at the end of a file are not API.
    let source = source.split("#[cfg(test)]\nmod tests").next().unwrap_or(source);
    let imported = imported_names(source);
    let lines: Vec<&str> = source.lines().collect();
    let mut found = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let trimmed = lines[i].trim_start();
        let public = trimmed.starts_with("pub ") && !trimmed.starts_with("pub(");
        if !public {
            i += 1;
            continue;
        }
        // The item's signature: up to its body or the end of the declaration.
        let start = i;
        let mut signature = String::new();
        loop {
            let line = lines[i];
            let cut = line.find('{').map_or(line, |b| &line[..b]);
            signature.push_str(cut);
            signature.push(' ');
            let is_field =
                signature.trim_start().starts_with("pub ") && !signature.contains('(') && line.ends_with(',');
            if line.contains('{') || line.trim_end().ends_with(';') || is_field || i + 1 == lines.len() {
                break;
            }
            i += 1;
        }
        if names_serde_json(&signature, &imported) {
            found.push(format!("{file}:{}: {}", start + 1, signature.trim()));
        }
        i += 1;
    }
    found
}

#[test]
fn the_checker_sees_value_in_a_signature() {
    let source =
        "use serde_json::{json, Value};\npub fn read(v: &Value) -> u8 {\n    0\n}\npub fn ok(v: &str) -> Values {}\n";
    assert_eq!(offending_items("x.rs", source).len(), 1);
    let field = "pub struct S {\n    pub tree: serde_json::Map<String, u8>,\n}\n";
    assert_eq!(offending_items("x.rs", field).len(), 1);
    let multi = "use serde_json::Value;\npub fn f(\n    a: u8,\n    b: Value,\n) -> u8 {\n}\n";
    assert_eq!(offending_items("x.rs", multi).len(), 1);
    let private = "use serde_json::Value;\npub(crate) fn f(v: &Value) {}\nfn g(v: Value) {}\n";
    assert!(offending_items("x.rs", private).is_empty());
}

#[test]
fn no_serde_json_value_in_public_signatures() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&root, &mut files);
    assert!(files.len() > 10, "the library's sources are found");
    let mut found = Vec::new();
    for path in files {
        let source = std::fs::read_to_string(&path).expect("read a source file");
        let name = path.strip_prefix(&root).unwrap_or(&path).display().to_string();
        found.extend(offending_items(&name, &source));
    }
    assert!(
        found.is_empty(),
        "public items naming serde_json (take or give JSON text instead):\n{}",
        found.join("\n")
    );
}

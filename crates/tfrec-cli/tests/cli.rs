//! End-to-end tests of the `tfrec` binary on the bundled samples and the golden files.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn golden_records() -> PathBuf {
    let dir = match std::env::var_os("TFREC_GOLDEN_DIR") {
        Some(d) => PathBuf::from(d),
        None => repo().join("testdata/golden"),
    };
    dir.join("records")
}

fn tfrec(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tfrec"))
        .args(args)
        .current_dir(repo())
        .output()
        .expect("run tfrec")
}

fn ok(args: &[&str]) -> String {
    let out = tfrec(args);
    assert!(
        out.status.success(),
        "tfrec {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8 output")
}

fn path_str(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

#[test]
fn samples_are_what_the_converters_make() {
    let dir = tempfile::tempdir().expect("temp dir");
    let cases: [(&[&str], &str); 3] = [
        (
            &["from-jsonl", "samples/notebook.jsonl", "--types", "feature3=float"],
            "notebook.tfrecord",
        ),
        (&["from-text", "samples/movie.txtpb"], "movie.tfrecord"),
        (&["from-images", "samples/images"], "images.tfrecord"),
    ];
    for (args, name) in cases {
        let out = dir.path().join(name);
        let mut full: Vec<&str> = args.to_vec();
        full.extend(["-o", path_str(&out)]);
        ok(&full);
        let made = std::fs::read(&out).expect("output");
        let committed = std::fs::read(repo().join("samples").join(name)).expect("committed sample");
        assert!(made == committed, "samples/{name} is stale: run samples/make.sh");
    }
}

#[test]
fn count_and_verify_report_files_and_offsets() {
    let out = ok(&["count", "samples/notebook.tfrecord", "samples/movie.tfrecord"]);
    assert!(out.contains("100  samples/notebook.tfrecord"), "{out}");
    assert!(out.contains("101  total"), "{out}");

    let golden = golden_records();
    let damaged = golden.join("corrupt_data_crc.tfrecord");
    let out = tfrec(&["verify", path_str(&damaged)]);
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("at byte 299") && text.contains("data starts at byte 311"),
        "{text}"
    );

    let out = tfrec(&["verify", "--json", path_str(&golden.join("truncated_header.tfrecord"))]);
    assert_eq!(out.status.code(), Some(1));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON report");
    assert_eq!(report["ok"], false);
    assert_eq!(report["files"][0]["problems"][0]["kind"], "partial_header");
    assert_eq!(report["files"][0]["problems"][0]["offset"], 299);

    ok(&["verify", "samples/"]);
}

#[test]
fn jsonl_round_trips_through_the_converter() {
    let dir = tempfile::tempdir().expect("temp dir");
    for sample in [
        "samples/notebook.tfrecord",
        "samples/movie.tfrecord",
        "samples/images.tfrecord",
    ] {
        let lines = ok(&["cat", "--format", "jsonl", sample]);
        let jsonl = dir.path().join("records.jsonl");
        std::fs::write(&jsonl, lines).expect("write jsonl");
        let back = dir.path().join("back.tfrecord");
        ok(&["from-jsonl", path_str(&jsonl), "-o", path_str(&back)]);
        let original = std::fs::read(repo().join(sample)).expect("sample");
        assert!(
            std::fs::read(&back).expect("back") == original,
            "{sample}: JSONL round trip differs"
        );
    }
}

#[test]
fn text_output_parses_back() {
    let dir = tempfile::tempdir().expect("temp dir");
    let text = ok(&["cat", "samples/movie.tfrecord"]);
    assert!(text.contains("feature_lists {"), "{text}");
    let file = dir.path().join("movie.txtpb");
    std::fs::write(&file, text).expect("write");
    let back = dir.path().join("movie.tfrecord");
    ok(&["from-text", path_str(&file), "-o", path_str(&back)]);
    assert!(
        std::fs::read(back).expect("back") == std::fs::read(repo().join("samples/movie.tfrecord")).expect("sample")
    );
}

#[test]
fn schema_infers_a_spec() {
    let spec: serde_json::Value =
        serde_json::from_str(&ok(&["schema", "--json", "samples/images.tfrecord"])).expect("JSON");
    assert_eq!(spec["height"]["type"], "FixedLenFeature");
    assert_eq!(spec["image_raw"]["dtype"], "string");
    let spec: serde_json::Value =
        serde_json::from_str(&ok(&["schema", "--json", "samples/movie.tfrecord"])).expect("JSON");
    assert_eq!(
        spec["sequence_features"]["movie_ratings"]["type"],
        "FixedLenSequenceFeature"
    );
    assert_eq!(spec["sequence_features"]["actors"]["type"], "VarLenFeature");
}

#[test]
fn index_then_read_record_n() {
    let dir = tempfile::tempdir().expect("temp dir");
    let data = dir.path().join("notebook.tfrecord");
    std::fs::copy(repo().join("samples/notebook.tfrecord"), &data).expect("copy");
    ok(&["index", path_str(&data)]);
    let index = tfrec::record::RecordIndex::load(data.with_extension("tfrecord.idx")).expect("index");
    assert_eq!(index.len(), 100);
    let mut reader = tfrec::record::IndexedReader::open(&data, index).expect("open");
    let record = reader.get(57).expect("record 57").to_vec();
    let all: Vec<Vec<u8>> = tfrec::record::RecordReader::open(&data, Default::default())
        .expect("open")
        .records()
        .collect::<Result<_, _>>()
        .expect("read");
    assert_eq!(record, all[57]);
}

#[test]
fn bad_input_is_a_clean_error() {
    let out = tfrec(&["count", "no/such/file.tfrecord"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot open"));
    let out = tfrec(&[
        "count",
        path_str(&golden_records().join("corrupt_length_huge.tfrecord")),
    ]);
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn parse_prints_json_and_saves_npz() {
    let out = ok(&["parse", "--spec", "samples/movie.spec.json", "samples/movie.tfrecord"]);
    let batch: serde_json::Value = serde_json::from_str(out.lines().next().expect("one batch")).expect("JSON");
    assert_eq!(
        batch["feature_lists"]["movie_ratings"]["values"],
        serde_json::json!([4.5, 5.0])
    );
    assert_eq!(batch["lengths"]["movie_ratings"]["values"], serde_json::json!([2]));

    let out = ok(&[
        "parse",
        "--spec",
        "samples/notebook.spec.json",
        "samples/notebook.tfrecord",
        "--batch",
        "30",
    ]);
    assert_eq!(out.lines().count(), 4, "100 records in batches of 30");

    let dir = tempfile::tempdir().expect("temp dir");
    let npz = dir.path().join("notebook.npz");
    ok(&[
        "parse",
        "--spec",
        "samples/notebook.spec.json",
        "samples/notebook.tfrecord",
        "--format",
        "npz",
        "-o",
        path_str(&npz),
        "--threads",
        "2",
    ]);
    // NumPy itself must read it.
    let check = "import numpy as np, sys\nz = np.load(sys.argv[1])\nassert z['feature2/bytes'].dtype == np.uint8 and z['feature2/offsets'].shape == (101,) and z['feature0'].shape == (100,), z.files\nprint(z['feature3'][:2])";
    let status = Command::new(common::python_with_numpy())
        .args(["-c", check, path_str(&npz)])
        .status()
        .expect("run Python");
    assert!(status.success(), "numpy could not read our .npz");

    let out = tfrec(&[
        "parse",
        "--spec",
        "samples/notebook.spec.json",
        "samples/movie.tfrecord",
    ]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "records that do not fit the spec are a data problem"
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("required"));
}

fn records_of(paths: &[PathBuf]) -> Vec<Vec<u8>> {
    paths
        .iter()
        .flat_map(|p| {
            tfrec::record::RecordReader::open(p, Default::default())
                .expect("open")
                .records()
                .collect::<Result<Vec<_>, _>>()
                .expect("read")
        })
        .collect()
}

fn files_in(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("dir")
        .map(|e| e.expect("entry").path())
        .collect();
    files.sort();
    files
}

#[test]
fn shard_and_shuffle_rewrite_every_record_once() {
    let original = records_of(&[repo().join("samples/notebook.tfrecord")]);
    let mut sorted_original = original.clone();
    sorted_original.sort();
    let dir = tempfile::tempdir().expect("temp dir");

    let by_feature = dir.path().join("by_feature");
    ok(&[
        "shard",
        "samples/notebook.tfrecord",
        "-o",
        path_str(&by_feature),
        "--shards",
        "3",
        "--by-feature",
        "feature2",
        "--output-compression",
        "gzip",
    ]);
    let shards = files_in(&by_feature);
    assert_eq!(shards.len(), 3);
    assert!(shards.iter().all(|p| p.to_string_lossy().ends_with(".tfrecord.gz")));
    let mut all = records_of(&shards);
    all.sort();
    assert_eq!(all, sorted_original, "every record exactly once");
    // Equal values of the feature land in the same shard.
    for shard in &shards {
        let others: Vec<&PathBuf> = shards.iter().filter(|s| *s != shard).collect();
        let names = |paths: &[&PathBuf]| -> std::collections::HashSet<Vec<u8>> {
            paths
                .iter()
                .flat_map(|p| records_of(&[(*p).clone()]))
                .map(|r| {
                    tfrec::example::Example::decode(&r)
                        .expect("example")
                        .get("feature2")
                        .expect("f2")
                        .as_bytes()
                        .expect("bytes")[0]
                        .clone()
                })
                .collect()
        };
        assert!(names(&[shard]).is_disjoint(&names(&others)));
    }

    let shuffled = dir.path().join("shuffled");
    ok(&[
        "shuffle",
        "samples/notebook.tfrecord",
        "-o",
        path_str(&shuffled),
        "--buffer",
        "40",
        "--seed",
        "5",
        "--shards",
        "2",
    ]);
    let out = records_of(&files_in(&shuffled));
    assert_ne!(out, original, "shuffled");
    let mut sorted = out.clone();
    sorted.sort();
    assert_eq!(sorted, sorted_original, "a permutation");
    let again = dir.path().join("again");
    ok(&[
        "shuffle",
        "samples/notebook.tfrecord",
        "-o",
        path_str(&again),
        "--buffer",
        "40",
        "--seed",
        "5",
        "--shards",
        "2",
    ]);
    assert_eq!(records_of(&files_in(&again)), out, "the same seed gives the same files");
}

#[test]
fn stats_writes_tfdv_statistics_and_follows_skip_corrupt() {
    let dir = tempfile::tempdir().expect("temp dir");
    let data = dir.path().join("data.tfrecord");
    common::write_damaged(&data, 10, 4);
    // Damage stops the run (exit 1, naming the file), unless skipped.
    let out = tfrec(&["stats", path_str(&data), "--text"]);
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stderr).contains("data.tfrecord"));
    let binary = dir.path().join("stats.pb");
    ok(&["stats", path_str(&data), "--skip-corrupt", "-o", path_str(&binary)]);
    let text = ok(&["stats", path_str(&data), "--skip-corrupt", "--text", "--threads", "2"]);
    assert!(text.starts_with("datasets {\n  num_examples: 9\n"), "{text}");
    // The binary file is the same statistics as the text.
    let decoded = tfrec::stats::decode_statistics(&std::fs::read(&binary).expect("stats.pb")).expect("decodes");
    assert_eq!(tfrec::stats::statistics_to_text(&decoded).expect("text"), text);
}

//! `RecordFile` / `RecordFiles` against sequential reading: every record by position equals
//! the one `RecordReader` yields, with the index built, loaded from `FILE.idx` or given; damage
//! are errors; GZIP files are read through their seek index; one `RecordFiles` is shared by threads.

use std::path::{Path, PathBuf};

use tfrec::record::{
    Compression, IndexError, ReaderOptions, RecordErrorKind, RecordFile, RecordFiles, RecordIndex, RecordReader,
    RecordWriter, SeekIndex, WriterOptions,
};

/// xorshift64*: reproducible sizes and bytes without a dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// Writes `files` files of records of random sizes (0 bytes to 200 KB, some files empty).
fn make_files(dir: &Path, files: usize, seed: u64, compression: Compression) -> Vec<PathBuf> {
    let mut rng = Rng(seed);
    (0..files)
        .map(|k| {
            let path = dir.join(format!("part-{k}.tfrecord"));
            let mut w = RecordWriter::create(&path, WriterOptions::default().compression(compression)).expect("create");
            let count = if k == 1 { 0 } else { 10 + rng.below(60) };
            for _ in 0..count {
                let len = match rng.below(4) {
                    0 => rng.below(16),
                    1 => rng.below(1000),
                    2 => rng.below(20_000),
                    _ => rng.below(200_000),
                } as usize;
                let record: Vec<u8> = (0..len).map(|_| rng.next() as u8).collect();
                w.write_record(&record).expect("write");
            }
            w.finish().expect("finish");
            path
        })
        .collect()
}

fn sequential(paths: &[PathBuf]) -> Vec<Vec<u8>> {
    paths
        .iter()
        .flat_map(|p| {
            RecordReader::open(p, ReaderOptions::default())
                .expect("open")
                .records()
                .collect::<Result<Vec<_>, _>>()
                .expect("read")
        })
        .collect()
}

fn check_all(files: &RecordFiles, expected: &[Vec<u8>]) {
    assert_eq!(files.len(), expected.len());
    for (i, want) in expected.iter().enumerate() {
        assert_eq!(&files.get(i).expect("get"), want, "record {i}");
    }
    let mut order: Vec<usize> = (0..expected.len()).collect();
    let mut rng = Rng(7);
    for i in (1..order.len()).rev() {
        order.swap(i, rng.below(i as u64 + 1) as usize);
    }
    let (mut scratch, mut spans) = (Vec::new(), Vec::new());
    files.read_many(&order, &mut scratch, &mut spans).expect("read_many");
    for (&i, span) in order.iter().zip(&spans) {
        assert_eq!(&scratch[span.clone()], &expected[i][..], "record {i} in a batch");
    }
    let many = files.get_many(&order[..order.len().min(40)]).expect("get_many");
    assert!(many.iter().zip(&order).all(|(r, &i)| r == &expected[i]));
    assert!(matches!(files.get(expected.len()), Err(IndexError::OutOfRange { .. })));
}

#[test]
fn every_record_by_position_equals_sequential_reading() {
    for seed in [1, 2, 3] {
        let dir = tempfile::tempdir().expect("temp dir");
        let paths = make_files(dir.path(), 4, seed, Compression::None);
        let expected = sequential(&paths);
        assert!(expected.len() > 30);

        // No index yet: built by scanning, saved beside each file.
        let built = RecordFiles::open(&paths).expect("open");
        check_all(&built, &expected);
        for p in &paths {
            assert!(RecordIndex::default_path(p).exists());
        }
        // The saved indexes, loaded.
        let loaded = RecordFiles::open(&paths).expect("open with indexes");
        assert!(loaded.files().iter().all(|f| f.index_file().is_some()));
        check_all(&loaded, &expected);
        // Indexes given in memory, and at another path.
        let given = paths
            .iter()
            .map(|p| RecordFile::with_index(p, RecordIndex::build(p).expect("build")).expect("open"))
            .collect();
        check_all(&RecordFiles::new(given), &expected);
        let elsewhere = paths
            .iter()
            .enumerate()
            .map(|(k, p)| RecordFile::open_with_index_file(p, dir.path().join(format!("{k}.index"))).expect("open"))
            .collect();
        check_all(&RecordFiles::new(elsewhere), &expected);
    }
}

#[test]
fn threads_share_one_record_files() {
    let dir = tempfile::tempdir().expect("temp dir");
    let paths = make_files(dir.path(), 3, 11, Compression::None);
    let expected = sequential(&paths);
    let files = RecordFiles::open(&paths).expect("open");
    std::thread::scope(|s| {
        for t in 0..4 {
            let (files, expected) = (&files, &expected);
            s.spawn(move || {
                let mut out = Vec::new();
                for i in (t..expected.len()).step_by(4).rev() {
                    files.get_into(i, &mut out).expect("get_into");
                    assert_eq!(out, expected[i]);
                }
            });
        }
    });
}

#[test]
fn a_damaged_record_is_an_error_naming_its_offset() {
    let dir = tempfile::tempdir().expect("temp dir");
    let paths = make_files(dir.path(), 1, 5, Compression::None);
    let file = RecordFile::open(&paths[0]).expect("open");
    let (i, entry) = file
        .index()
        .entries()
        .iter()
        .enumerate()
        .find(|(_, e)| e.len > 100)
        .map(|(i, e)| (i, *e))
        .expect("a record of over 84 bytes");
    let mut bytes = std::fs::read(&paths[0]).expect("read");
    bytes[entry.offset as usize + 40] ^= 0x55;
    std::fs::write(&paths[0], &bytes).expect("damage");
    let err = file.get(i).expect_err("damaged");
    let IndexError::Record(record) = &err else {
        panic!("not a record error: {err}")
    };
    assert!(matches!(record.kind, RecordErrorKind::DataCrcMismatch { .. }));
    assert_eq!(
        (record.location.offset, record.location.record_index),
        (entry.offset, i as u64)
    );
    assert_eq!(record.path(), Some(paths[0].as_path()));
    assert!(
        err.to_string()
            .contains(&format!("record {i} at byte {}", entry.offset)),
        "{err}"
    );
    // Without an index, building one meets the same damage.
    std::fs::remove_file(RecordIndex::default_path(&paths[0])).expect("remove the index");
    let err = RecordFile::open(&paths[0]).expect_err("damaged");
    assert!(err.to_string().contains(&format!("at byte {}", entry.offset)), "{err}");
}

#[test]
fn a_gzip_file_is_read_through_its_seek_index() {
    let dir = tempfile::tempdir().expect("temp dir");
    let paths = make_files(dir.path(), 2, 9, Compression::Gzip);
    std::fs::create_dir(dir.path().join("plain")).expect("mkdir");
    let plain = make_files(&dir.path().join("plain"), 2, 9, Compression::None);
    let files = RecordFiles::open(&paths).expect("gzip files");
    let expected = RecordFiles::open(&plain).expect("plain files");
    assert_eq!(files.len(), expected.len());
    for i in (0..files.len()).rev() {
        assert_eq!(
            files.get(i).expect("gzip"),
            expected.get(i).expect("plain"),
            "record {i}"
        );
    }
    assert!(
        SeekIndex::default_path(&paths[0]).exists(),
        "the seek index is saved beside the file"
    );
    assert!(
        !RecordIndex::default_path(&paths[0]).exists(),
        "no offset index for a compressed file"
    );
}

//! Memory bounded by what the input holds: a compressed stream that inflates to one huge record
//! (a "gzip bomb") needs one buffer of the record's size, and a lying length costs at most
//! twice the bytes that really follow it, whatever the corruption policy.
//!
//! The heap is measured by a counting global allocator (live bytes and their peak). A
//! `realloc` is counted as growing in place: for blocks this large the system allocator on
//! Linux moves pages with `mremap` rather than copying, so no second copy is ever resident.

use std::alloc::{GlobalAlloc, Layout, System};
use std::io::Write;
use std::sync::atomic::{AtomicUsize, Ordering};

use tfrec::record::format::encode_header;
use tfrec::record::{Compression, OnCorruption, ReaderOptions, RecordReader, RecordWriter, WriterOptions};

struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

fn grew(by: usize) {
    let now = LIVE.fetch_add(by, Ordering::Relaxed) + by;
    PEAK.fetch_max(now, Ordering::Relaxed);
}

// SAFETY: every method forwards to `System` with the caller's arguments unchanged, so the
// allocator contract holds exactly as it does for `System`; the only additions are atomic
// counter updates, which neither allocate nor touch the returned memory.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        grew(layout.size());
        System.alloc(layout)
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        System.dealloc(ptr, layout)
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        grew(layout.size());
        System.alloc_zeroed(layout)
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if new_size >= layout.size() {
            grew(new_size - layout.size());
        } else {
            LIVE.fetch_sub(layout.size() - new_size, Ordering::Relaxed);
        }
        System.realloc(ptr, layout, new_size)
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

const MIB: usize = 1 << 20;
/// What a reader may hold besides the record: its 1 MiB window, the 256 KiB compressed-input
/// buffer, the inflater's state and small things.
const OVERHEAD: usize = 4 * MIB;

/// Peak live heap above what was live before, while `f` runs.
fn peak_of(f: impl FnOnce()) -> usize {
    let base = LIVE.load(Ordering::Relaxed);
    PEAK.store(base, Ordering::Relaxed);
    f();
    PEAK.load(Ordering::Relaxed) - base
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    encoder.write_all(bytes).expect("compress");
    encoder.finish().expect("compress")
}

/// One test, so that no other test allocates while the peak is measured.
#[test]
fn memory_is_bounded_by_what_the_input_holds() {
    // One real 64 MiB record, 64 KiB of gzip.
    let len = 64 * MIB;
    let mut writer = RecordWriter::with_options(Vec::new(), WriterOptions::default().compression(Compression::Gzip));
    writer.write_record(&vec![0u8; len]).expect("write");
    let bomb = writer.finish().expect("finish");
    assert!(bomb.len() < len / 100, "a bomb: {} compressed bytes", bomb.len());
    for policy in [OnCorruption::Fail, OnCorruption::Resync] {
        let options = ReaderOptions::default()
            .compression(Compression::Gzip)
            .on_corruption(policy);
        let peak = peak_of(|| {
            let mut reader = RecordReader::from_stream(bomb.as_slice(), options).expect("open");
            let record = reader.next_record().expect("valid").expect("one record");
            assert_eq!(record.len(), len);
            assert!(reader.next_record().expect("end").is_none());
        });
        assert!(
            peak <= len + OVERHEAD,
            "{policy:?}: reading one {len}-byte record took {peak} bytes of heap (one buffer is {len})"
        );
    }

    // A header claiming 1 GiB, then 8 MiB of zeros: a lying length, as a stream of unknown
    // size and as a compressed file.
    let follows = 8 * MIB;
    let mut lie = encode_header(1 << 30).to_vec();
    lie.resize(12 + follows, 0);
    let lie_gz = gzip(&lie);
    for policy in [OnCorruption::Fail, OnCorruption::Resync, OnCorruption::SkipFile] {
        for (bytes, compression) in [(&lie, Compression::None), (&lie_gz, Compression::Gzip)] {
            let options = ReaderOptions::default().compression(compression).on_corruption(policy);
            let peak = peak_of(|| {
                let mut reader = RecordReader::from_stream(bytes.as_slice(), options).expect("open");
                while let Ok(Some(_)) = reader.next_record() {}
            });
            assert!(
                peak <= 2 * follows + OVERHEAD,
                "{policy:?} {compression}: a lying length with {follows} bytes after it took {peak} bytes"
            );
        }
    }
}

//! Rendering a record (`tfrec cat` in every format) costs memory of the order of its features,
//! not of its values: a record of millions of packed int64s or empty byte strings, or of one
//! huge bytes value, renders without ever holding a decoded (or encoded) copy of them.
//!
//! It counts the bytes this thread allocates, through a counting allocator (the pattern of
//! `peak_heap` in tests/common/heap.rs), rather than reading the clock or the process's memory.

use std::fmt;

use tfrec::example::{ExampleView, RenderFormat, SequenceExampleView};

#[path = "common/heap.rs"]
mod heap;
use heap::peak_heap;

/// Output that is only counted, as a pipe takes it.
#[derive(Default)]
struct Sink {
    bytes: usize,
    lines: usize,
}

impl fmt::Write for Sink {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        self.bytes += s.len();
        self.lines += s.matches('\n').count();
        Ok(())
    }
}

fn varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// A length-delimited field (field numbers below 16).
fn field(number: u8, payload: &[u8]) -> Vec<u8> {
    let mut out = vec![number << 3 | 2];
    varint(&mut out, payload.len() as u64);
    out.extend_from_slice(payload);
    out
}

/// A message whose field `map_field` holds one map entry `name` -> `value`.
fn one_entry(map_field: u8, name: &str, value: &[u8]) -> Vec<u8> {
    let entry = [field(1, name.as_bytes()), field(2, value)].concat();
    field(map_field, &field(1, &entry))
}

const MIB: usize = 1 << 20;
const VALUES: usize = 8 * MIB;

/// An Example of one int64 feature: `VALUES` packed one-byte varints.
fn packed_ints() -> Vec<u8> {
    let block: Vec<u8> = (0..VALUES).map(|i| (i % 128) as u8).collect();
    one_entry(1, "ids", &field(3, &field(1, &block)))
}

/// An Example of one bytes feature: `VALUES / 2` empty strings.
fn empties() -> Vec<u8> {
    let list: Vec<u8> = [0x0a, 0x00].repeat(VALUES / 2);
    one_entry(1, "blank", &field(1, &list))
}

const FORMATS: [RenderFormat; 4] = [
    RenderFormat::Text,
    RenderFormat::Json,
    RenderFormat::JsonLine,
    RenderFormat::FriendlyJson,
];

/// Checks and renders `record` as `tfrec cat` does; the output's lines and the peak heap.
fn render_example(record: &[u8], format: RenderFormat) -> (Sink, usize) {
    let (sink, heap) = peak_heap(|| {
        let view = ExampleView::new(record);
        view.validate().expect("valid");
        let mut sink = Sink::default();
        view.render(&mut sink, format, 0).expect("renders");
        sink
    });
    (sink, heap)
}

/// Every format renders the Example `record` in full with less heap than a quarter of it.
#[track_caller]
fn renders_in_little_memory(record: &[u8]) {
    for format in FORMATS {
        let (sink, heap) = render_example(record, format);
        assert!(sink.bytes > VALUES, "{format:?}: {} bytes of output", sink.bytes);
        assert!(
            heap < record.len() / 4,
            "{format:?}: {heap} bytes of heap for a {} byte record",
            record.len()
        );
    }
}

#[test]
fn a_huge_packed_int64_list_renders_in_little_memory() {
    renders_in_little_memory(&packed_ints());
}

#[test]
fn a_huge_list_of_empty_strings_renders_in_little_memory() {
    renders_in_little_memory(&empties());
}

#[test]
fn a_huge_feature_list_renders_in_little_memory() {
    // A SequenceExample whose one feature list has one huge step of packed int64s and many
    // steps of one empty string.
    let block: Vec<u8> = (0..VALUES).map(|i| (i % 128) as u8).collect();
    let mut list = field(1, &field(3, &field(1, &block)));
    list.extend(field(1, &field(1, &field(1, &[]))).repeat(VALUES / 8));
    let record = one_entry(2, "steps", &list);
    for format in FORMATS {
        let (sink, heap) = peak_heap(|| {
            let view = SequenceExampleView::new(&record);
            view.validate().expect("valid");
            let mut sink = Sink::default();
            view.render(&mut sink, format, 0).expect("renders");
            sink
        });
        assert!(sink.bytes > VALUES, "{format:?}: {} bytes of output", sink.bytes);
        assert!(
            heap < record.len() / 4,
            "{format:?}: {heap} bytes of heap for a {} byte record",
            record.len()
        );
    }
}

/// One huge value, not UTF-8 (an image): both JSON forms write it as base64, which was
/// encoded whole into a string a third larger than the value before it was written (issue 54:
/// `tfrec cat --format json` of a huge record held it several times over).
#[test]
fn a_huge_bytes_value_renders_in_little_memory() {
    let image: Vec<u8> = (0..VALUES).map(|i| (i % 251) as u8 | 0x80).collect();
    renders_in_little_memory(&one_entry(1, "image", &field(1, &field(1, &image))));
}

#[test]
fn validating_a_huge_record_allocates_nothing_per_value() {
    for record in [packed_ints(), empties()] {
        let (result, heap) = peak_heap(|| {
            (
                ExampleView::new(&record).validate(),
                SequenceExampleView::new(&record).validate(),
            )
        });
        assert_eq!(result, (Ok(()), Ok(())));
        assert!(heap < MIB, "{heap} bytes of heap to validate");
    }
}

//! Protobuf text format for `Example` and `SequenceExample`: rendered exactly as the protobuf
//! Python library prints it (fields in number order, map keys sorted, two-space indent, bytes
//! C-escaped with octal, floats as [`shortest_repr`](super::shortest_repr)), and parsed back, including the `[a, b]`
//! list shorthand, `<...>` message brackets, comments and adjacent string concatenation.

mod parse;
mod render;

pub use parse::TextError;
pub(super) use parse::{example_from_text, sequence_example_from_text};
pub(crate) use render::escape_bytes;
pub(super) use render::{close, indent, open, render_key, write_text_float};

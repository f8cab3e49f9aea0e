//! One module per subcommand.

pub mod cat;
pub mod convert;
pub mod count;
pub mod from_images;
pub mod from_jsonl;
pub mod from_text;
pub mod index;
pub mod infer_schema;
pub mod parse;
pub mod schema;
pub mod shard;
pub mod stats;
pub mod stats_report;
pub mod validate;
pub mod verify;

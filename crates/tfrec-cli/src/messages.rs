//! Choosing how to read records as messages: Example, SequenceExample, or detected.

use clap::Args;
use tfrec::example::{detect_message, MessageKind};

/// Which message the records hold.
#[derive(Args, Debug, Clone, Copy)]
pub struct MessageArgs {
    /// Read the records as SequenceExamples.
    #[arg(long, conflicts_with = "example")]
    pub sequence: bool,
    /// Read the records as Examples.
    #[arg(long)]
    pub example: bool,
}

/// Records to look at before deciding what a file holds.
pub const DETECT_RECORDS: usize = 64;

impl MessageArgs {
    /// Decides from the first records unless forced: SequenceExample if any record has feature
    /// lists, else Example. Says on stderr when the records could be either.
    pub fn is_sequence<'a>(&self, first: impl IntoIterator<Item = &'a [u8]>) -> bool {
        if self.sequence || self.example {
            return self.sequence;
        }
        let first: Vec<&[u8]> = first.into_iter().collect();
        let kinds: Vec<MessageKind> = first.iter().map(|r| detect_message(r)).collect();
        if kinds.contains(&MessageKind::SequenceExample) {
            return true;
        }
        if !kinds.is_empty() && kinds.iter().all(|k| *k == MessageKind::Either) && first.iter().any(|r| !r.is_empty()) {
            eprintln!("note: no record has feature lists, so reading them as Examples (--sequence to override)");
        }
        false
    }
}

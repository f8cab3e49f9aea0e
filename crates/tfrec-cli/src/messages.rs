//! Choosing how to read records as messages: Example, SequenceExample, or detected.

use clap::{Args, ValueEnum};
use tfrec::example::{detect_message, MessageKind};

/// The message kinds a user can ask for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum KindChoice {
    /// Detect from the first records: SequenceExample if any has feature lists.
    Auto,
    /// tf.train.Example.
    Example,
    /// tf.train.SequenceExample.
    Sequence,
}

// Which message the records hold.
#[derive(Args, Debug, Clone, Copy)]
pub struct MessageArgs {
    /// The message the records hold.
    #[arg(long, value_enum, default_value = "auto")]
    pub kind: KindChoice,
}

/// Records to look at before deciding what a file holds.
pub const DETECT_RECORDS: usize = 64;
/// Bytes of records held for that look at most: a few huge records decide alone.
pub const DETECT_BYTES: usize = 16 << 20;

impl MessageArgs {
    /// Whether the kind is decided without looking at records.
    pub fn forced(&self) -> Option<bool> {
        match self.kind {
            KindChoice::Auto => None,
            KindChoice::Example => Some(false),
            KindChoice::Sequence => Some(true),
        }
    }

    /// Decides from the first records unless forced: SequenceExample if any record has feature
    /// lists, else Example. Says on stderr when the records could be either.
    pub fn is_sequence<'a>(&self, first: impl IntoIterator<Item = &'a [u8]>) -> bool {
        if let Some(forced) = self.forced() {
            return forced;
        }
        let first: Vec<&[u8]> = first.into_iter().collect();
        let kinds: Vec<MessageKind> = first.iter().map(|r| detect_message(r)).collect();
        if kinds.contains(&MessageKind::SequenceExample) {
            return true;
        }
        if !kinds.is_empty() && kinds.iter().all(|k| *k == MessageKind::Either) && first.iter().any(|r| !r.is_empty()) {
            say!("note: no record has feature lists, so reading them as Examples (--kind sequence to override)");
        }
        false
    }
}

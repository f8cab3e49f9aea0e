//! Command-line options shared by every command that reads records.

use clap::Args;
use tfrec::record::{CompressionChoice, MultiFileReader, OnCorruption, ReaderOptions, TornTail};

/// How to read the input files.
#[derive(Args, Debug, Clone)]
pub struct InputArgs {
    /// Input files, directories or glob patterns (quote globs to keep the shell off them).
    #[arg(required = true, value_name = "FILES")]
    pub inputs: Vec<String>,
    /// Compression of the inputs: auto (from the extension, else the first bytes), none, gzip, zlib.
    #[arg(long, default_value = "auto")]
    pub compression: CompressionChoice,
    /// Skip damaged records (resynchronising on the next valid header) instead of failing.
    #[arg(long)]
    pub skip_corrupt: bool,
    /// Accept a partial record header at the end of a file (a file still being written).
    #[arg(long)]
    pub allow_torn_tail: bool,
}

impl InputArgs {
    pub fn reader_options(&self, verify_data_crc: bool) -> ReaderOptions {
        ReaderOptions::default()
            .compression(self.compression)
            .verify_data_crc(verify_data_crc)
            .on_corruption(if self.skip_corrupt {
                OnCorruption::Resync
            } else {
                OnCorruption::Fail
            })
            .torn_tail(if self.allow_torn_tail {
                TornTail::Skip
            } else {
                TornTail::Error
            })
    }

    pub fn open(&self, verify_data_crc: bool) -> Result<MultiFileReader, tfrec::record::RecordError> {
        MultiFileReader::open(&self.inputs, self.reader_options(verify_data_crc))
    }
}

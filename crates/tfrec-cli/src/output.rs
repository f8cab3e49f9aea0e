//! Command-line options and helpers shared by every command that writes a TFRecord file.

use std::fs::File;
use std::path::PathBuf;

use clap::Args;
use tfrec::record::{CompressionChoice, ReaderOptions, RecordReader, RecordWriter, WriterOptions};

/// Where and how to write records.
#[derive(Args, Debug, Clone)]
pub struct OutputArgs {
    /// The TFRecord file to write.
    #[arg(short, long, value_name = "FILE")]
    pub output: PathBuf,
    /// Compression of the output: auto (from the extension: .gz, .zz/.zlib), none, gzip, zlib.
    #[arg(long = "output-compression", default_value = "auto")]
    pub compression: CompressionChoice,
}

impl OutputArgs {
    pub fn create(&self) -> Result<RecordWriter<File>, tfrec::record::WriteError> {
        RecordWriter::create(&self.output, WriterOptions::default().compression(self.compression))
    }

    /// Finishes the file, then reads it back: the command succeeds only if every record written
    /// is there with valid CRCs.
    pub fn finish_verified(&self, writer: RecordWriter<File>) -> Result<u64, Box<dyn std::error::Error>> {
        let written = writer.records_written();
        writer.finish()?;
        let mut reader = RecordReader::open(&self.output, ReaderOptions::default().compression(self.compression))?;
        let mut read = 0u64;
        while reader.next_record()?.is_some() {
            read += 1;
        }
        if read != written {
            return Err(format!(
                "{}: wrote {written} records but read back {read}",
                self.output.display()
            )
            .into());
        }
        Ok(written)
    }
}

//! Statistics, schemas and anomalies to and from files and bytes, as TFDV reads and writes
//! them (`load_statistics`: binary, else text; `load_schema_text`; `write_schema_text`;
//! `write_anomalies_text`), with errors that name the file.

use std::path::Path;

use prost::Message as _;

use super::error::StatsError;
use super::proto::{Anomalies, DatasetFeatureStatisticsList, Schema};
use super::schema::schema_from_text;
use super::text::{decode_statistics, statistics_from_text};

fn read(path: &Path) -> Result<Vec<u8>, StatsError> {
    std::fs::read(path).map_err(|source| StatsError::File {
        path: path.to_path_buf(),
        source,
    })
}

/// Statistics from a file, binary or protobuf text (TFDV's `load_statistics`: binary first).
pub fn read_statistics_file(path: &Path) -> Result<DatasetFeatureStatisticsList, StatsError> {
    let bytes = read(path)?;
    if let Ok(stats) = decode_statistics(&bytes) {
        if !stats.datasets.is_empty() || bytes.is_empty() {
            return Ok(stats);
        }
    }
    let text = std::str::from_utf8(&bytes).map_err(|_| StatsError::InFile {
        path: path.to_path_buf(),
        error: Box::new(StatsError::Proto("neither binary statistics nor text".into())),
    })?;
    statistics_from_text(text).map_err(|error| StatsError::InFile {
        path: path.to_path_buf(),
        error: Box::new(error),
    })
}

/// A schema from a protobuf text file (TFDV's `load_schema_text`); an error names the file,
/// line and column.
pub fn read_schema_file(path: &Path) -> Result<Schema, StatsError> {
    let bytes = read(path)?;
    let text = std::str::from_utf8(&bytes).map_err(|e| StatsError::InFile {
        path: path.to_path_buf(),
        error: Box::new(StatsError::SchemaText(format!(
            "not UTF-8 text at byte {}",
            e.valid_up_to()
        ))),
    })?;
    schema_from_text(text).map_err(|error| StatsError::InFile {
        path: path.to_path_buf(),
        error: Box::new(error),
    })
}

/// A schema's protobuf bytes.
pub fn encode_schema(schema: &Schema) -> Vec<u8> {
    schema.encode_to_vec()
}

/// A schema from protobuf bytes.
pub fn decode_schema(bytes: &[u8]) -> Result<Schema, StatsError> {
    Schema::decode(bytes).map_err(|e| StatsError::Proto(format!("not a Schema: {e}")))
}

/// Anomalies' protobuf bytes.
pub fn encode_anomalies(anomalies: &Anomalies) -> Vec<u8> {
    anomalies.encode_to_vec()
}

/// Anomalies from protobuf bytes.
pub fn decode_anomalies(bytes: &[u8]) -> Result<Anomalies, StatsError> {
    Anomalies::decode(bytes).map_err(|e| StatsError::Proto(format!("not an Anomalies message: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_schema_file_that_does_not_parse_is_named_with_its_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("schema.pbtxt");
        std::fs::write(&path, "feature {\n  name: \"a\"\n  type: NOT_A_TYPE\n}\n").unwrap();
        let error = read_schema_file(&path).unwrap_err().to_string();
        assert!(error.contains("schema.pbtxt") && error.contains("line 3"), "{error}");
        assert!(matches!(
            read_schema_file(&dir.path().join("absent")),
            Err(StatsError::File { .. })
        ));
    }

    #[test]
    fn statistics_files_are_read_binary_or_text() {
        let dir = tempfile::tempdir().unwrap();
        let text = dir.path().join("stats.pbtxt");
        std::fs::write(&text, "datasets {\n  num_examples: 3\n}\n").unwrap();
        let stats = read_statistics_file(&text).unwrap();
        assert_eq!(stats.datasets[0].num_examples, 3);
        let binary = dir.path().join("stats.pb");
        std::fs::write(&binary, super::super::text::encode_statistics(&stats)).unwrap();
        assert_eq!(read_statistics_file(&binary).unwrap(), stats);
        let bad = dir.path().join("bad");
        std::fs::write(&bad, "datasets {").unwrap();
        assert!(read_statistics_file(&bad).unwrap_err().to_string().contains("bad"));
    }
}

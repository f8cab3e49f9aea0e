//! Generates tensorflow_metadata's messages (feature `stats` only) from the `.proto` files
//! vendored under `proto/` (see `proto/README.md`), compiled by protox so that no `protoc` is
//! needed.
//!
//! The file descriptor set is written beside the generated code: the `stats` module builds
//! prost-reflect's descriptors from it for the protobuf text format.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    #[cfg(feature = "stats")]
    generate_metadata_messages()?;
    Ok(())
}

#[cfg(feature = "stats")]
fn generate_metadata_messages() -> Result<(), Box<dyn std::error::Error>> {
    use std::path::PathBuf;

    let root = PathBuf::from("proto");
    let files: Vec<PathBuf> = ["statistics", "schema", "anomalies", "path", "derived_feature"]
        .iter()
        .map(|name| root.join(format!("tensorflow_metadata/proto/v0/{name}.proto")))
        .collect();
    println!("cargo:rerun-if-changed=proto");
    let descriptors = protox::compile(&files, [&root])?;
    let out_dir = PathBuf::from(std::env::var("OUT_DIR")?);
    std::fs::write(
        out_dir.join("tensorflow_metadata.bin"),
        prost::Message::encode_to_vec(&descriptors),
    )?;
    prost_build::Config::new().compile_fds(descriptors)?;
    Ok(())
}

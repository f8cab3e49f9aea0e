//! `tfrec from-images`: one Example per image file, as in TensorFlow's TFRecord tutorial:
//! `height`, `width`, `depth` (from the image header, decoded by the `image` crate), `label`,
//! and `image_raw` (the file's bytes, unchanged).

use std::io::BufReader;
use std::path::{Path, PathBuf};

use clap::Args as ClapArgs;
use image::{ImageDecoder, ImageReader};
use tfrec::example::Example;

use crate::error::{CliError, ExitCode};
use crate::output::OutputArgs;

#[derive(ClapArgs)]
pub struct Args {
    /// A directory of images, or of one subdirectory per class (each class's label is its
    /// index among the subdirectory names, sorted).
    dir: PathBuf,
    #[command(flatten)]
    output: OutputArgs,
    /// The label of images directly in DIR.
    #[arg(long, default_value_t = 0)]
    label: i64,
}

const IMAGE_EXTENSIONS: [&str; 5] = ["jpg", "jpeg", "png", "gif", "webp"];

/// The entries of `dir`, or an error naming it.
fn list(dir: &Path) -> Result<std::fs::ReadDir, CliError> {
    std::fs::read_dir(dir).map_err(|e| format!("{}: cannot list the directory: {e}", dir.display()).into())
}

fn images_in(dir: &Path) -> Result<Vec<PathBuf>, CliError> {
    let mut files: Vec<PathBuf> = list(dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.is_file()
                && p.extension()
                    .and_then(|e| e.to_str())
                    .is_some_and(|e| IMAGE_EXTENSIONS.contains(&e.to_ascii_lowercase().as_str()))
        })
        .collect();
    files.sort();
    Ok(files)
}

/// Height, width and channels, from the header only.
fn shape(path: &Path) -> Result<(u32, u32, u8), CliError> {
    let file = std::fs::File::open(path)?;
    let decoder = ImageReader::new(BufReader::new(file))
        .with_guessed_format()?
        .into_decoder()?;
    let (width, height) = decoder.dimensions();
    Ok((height, width, decoder.color_type().channel_count()))
}

pub fn run(args: Args) -> Result<ExitCode, CliError> {
    let mut classes: Vec<PathBuf> = list(&args.dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .collect();
    classes.sort();
    let mut sources: Vec<(PathBuf, i64)> = images_in(&args.dir)?.into_iter().map(|p| (p, args.label)).collect();
    for (label, class) in classes.iter().enumerate() {
        say!("label {label}: {}", class.display());
        sources.extend(images_in(class)?.into_iter().map(|p| (p, label as i64)));
    }
    if sources.is_empty() {
        return Err(format!("{}: no images ({})", args.dir.display(), IMAGE_EXTENSIONS.join(", ")).into());
    }
    let inputs: Vec<PathBuf> = sources.iter().map(|(p, _)| p.clone()).collect();
    let mut output = args.output.create(&inputs)?;
    let (progress, done) = crate::progress::Progress::for_files(&inputs);
    for (path, label) in &sources {
        let (height, width, depth) =
            shape(path).map_err(|e| crate::error::data(format!("{}: not a readable image: {e}", path.display())))?;
        let raw = std::fs::read(path).map_err(|e| format!("{}: cannot read: {e}", path.display()))?;
        done.fetch_add(raw.len() as u64, std::sync::atomic::Ordering::Relaxed);
        let example = Example::builder()
            .int64("height", height)
            .int64("width", width)
            .int64("depth", depth)
            .int64("label", *label)
            .bytes("image_raw", raw)
            .build()?;
        output.writer.write_record(&example.encode())?;
    }
    progress.finish();
    let n = output.finish_verified()?;
    say!("wrote {n} records to {}", args.output.output.display());
    Ok(ExitCode::SUCCESS)
}

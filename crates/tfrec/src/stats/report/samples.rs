//! A few example values per feature, and small thumbnails of the features whose bytes are PNG
//! or JPEG images, taken from the first records of a data set for the report (the statistics
//! themselves keep no values but the top ones).
//!
//! Everything here is bounded: the records read, the values kept per feature and their length,
//! the images kept per feature, each image's size and all images' size together.

use std::collections::BTreeMap;
use std::path::PathBuf;

use base64::Engine as _;

use crate::example::{Example, Feature};
use crate::record::{MultiFileReader, ReaderOptions};
use crate::stats::StatsError;

/// How much [`ReportSamples`] keeps.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SampleLimits {
    /// Records read from the start of the data set (default 256).
    pub max_records: usize,
    /// Distinct example values kept per feature (default 3).
    pub values_per_feature: usize,
    /// Characters of an example value shown before it is cut with `…` (default 60).
    pub max_value_chars: usize,
    /// Images kept per feature (default 3).
    pub images_per_feature: usize,
    /// Largest image embedded, in bytes (default 48 KiB); a larger one is named with its size.
    pub max_image_bytes: usize,
    /// Bytes of all embedded images together (default 2 MiB).
    pub max_total_image_bytes: usize,
}

impl Default for SampleLimits {
    fn default() -> Self {
        SampleLimits {
            max_records: 256,
            values_per_feature: 3,
            max_value_chars: 60,
            images_per_feature: 3,
            max_image_bytes: 48 * 1024,
            max_total_image_bytes: 2 * 1024 * 1024,
        }
    }
}

/// An image format recognised by its first bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImageFormat {
    /// `\x89PNG\r\n\x1a\n`.
    Png,
    /// `\xff\xd8\xff`.
    Jpeg,
}

impl ImageFormat {
    /// The format of `bytes`, by their magic number.
    pub fn sniff(bytes: &[u8]) -> Option<ImageFormat> {
        if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
            Some(ImageFormat::Png)
        } else if bytes.starts_with(b"\xff\xd8\xff") {
            Some(ImageFormat::Jpeg)
        } else {
            None
        }
    }

    /// The media type of a `data:` URI.
    pub fn mime(self) -> &'static str {
        match self {
            ImageFormat::Png => "image/png",
            ImageFormat::Jpeg => "image/jpeg",
        }
    }

    /// The short name shown beside an image.
    pub fn label(self) -> &'static str {
        match self {
            ImageFormat::Png => "PNG",
            ImageFormat::Jpeg => "JPEG",
        }
    }
}

/// One image value of a feature.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImageSample {
    /// Its format.
    pub format: ImageFormat,
    /// Width and height from its header, when the header is readable.
    pub size: Option<(u32, u32)>,
    /// Its length in bytes.
    pub byte_len: usize,
    /// `data:` URI of the image, when it is within the limits; `None` for one too large.
    pub data_uri: Option<String>,
}

/// What was kept of one feature.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FeatureSamples {
    /// Distinct example values, each one example's list as text (`cat`, `[1, 2, 3]`).
    pub values: Vec<String>,
    /// Image values (empty when the feature's bytes are not images).
    pub images: Vec<ImageSample>,
}

/// Example values and thumbnails of a data set's features, from its first records.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReportSamples {
    /// By feature name.
    pub features: BTreeMap<String, FeatureSamples>,
    /// Records looked at.
    pub records: u64,
    /// Bytes of images embedded so far; never above the limit.
    image_bytes: usize,
}

impl ReportSamples {
    /// Samples of the first [`SampleLimits::max_records`] records of `files`. A record that is
    /// not an `Example` is passed over (the statistics pass reports it); damage follows
    /// `reader`'s `on_corruption`.
    pub fn collect(files: Vec<PathBuf>, reader: ReaderOptions, limits: &SampleLimits) -> Result<Self, StatsError> {
        let mut samples = ReportSamples::default();
        let mut records = MultiFileReader::new(files, reader);
        while samples.records < limits.max_records as u64 {
            let Some(record) = records.next_located()? else {
                break;
            };
            samples.add_record(record.data, limits);
        }
        Ok(samples)
    }

    /// Takes what `limits` leave room for from one serialized `Example` (anything else is
    /// counted and passed over).
    pub fn add_record(&mut self, record: &[u8], limits: &SampleLimits) {
        self.records += 1;
        let Ok(example) = Example::decode(record) else {
            return;
        };
        for (name, feature) in example.features().iter() {
            let kept = self.features.entry(name.to_owned()).or_default();
            if let Feature::Bytes(values) = feature {
                for value in values {
                    if kept.images.len() >= limits.images_per_feature {
                        break;
                    }
                    if let Some(image) = image_sample(value, limits, &mut self.image_bytes) {
                        kept.images.push(image);
                    }
                }
            }
            if kept.values.len() < limits.values_per_feature && !feature.is_empty() {
                let text = render_values(feature, limits.max_value_chars);
                if !kept.values.contains(&text) {
                    kept.values.push(text);
                }
            }
        }
    }
}

fn image_sample(bytes: &[u8], limits: &SampleLimits, used: &mut usize) -> Option<ImageSample> {
    let format = ImageFormat::sniff(bytes)?;
    let fits = bytes.len() <= limits.max_image_bytes && *used + bytes.len() <= limits.max_total_image_bytes;
    let data_uri = fits.then(|| {
        *used += bytes.len();
        format!(
            "data:{};base64,{}",
            format.mime(),
            base64::engine::general_purpose::STANDARD.encode(bytes)
        )
    });
    Some(ImageSample {
        format,
        size: image_size(format, bytes),
        byte_len: bytes.len(),
        data_uri,
    })
}

/// Width and height from a PNG's `IHDR` or a JPEG's first start-of-frame segment.
pub fn image_size(format: ImageFormat, bytes: &[u8]) -> Option<(u32, u32)> {
    let be16 =
        |at: usize| -> Option<u32> { Some(u32::from(u16::from_be_bytes(bytes.get(at..at + 2)?.try_into().ok()?))) };
    let be32 = |at: usize| -> Option<u32> { Some(u32::from_be_bytes(bytes.get(at..at + 4)?.try_into().ok()?)) };
    match format {
        ImageFormat::Png => (bytes.get(12..16)? == b"IHDR").then_some((be32(16)?, be32(20)?)),
        ImageFormat::Jpeg => {
            let mut at = 2;
            loop {
                if *bytes.get(at)? != 0xff {
                    return None;
                }
                let marker = *bytes.get(at + 1)?;
                if marker == 0xff {
                    at += 1;
                    continue;
                }
                // Markers without a length: standalone ones.
                if marker == 0x01 || (0xd0..=0xd8).contains(&marker) {
                    at += 2;
                    continue;
                }
                let is_frame = (0xc0..=0xcf).contains(&marker) && !matches!(marker, 0xc4 | 0xc8 | 0xcc);
                if is_frame {
                    return Some((be16(at + 7)?, be16(at + 5)?));
                }
                at += 2 + usize::try_from(be16(at + 2)?).ok()?;
            }
        }
    }
}

/// One example's values of a feature as text: the value alone, or a bracketed list; cut to
/// `max_chars` characters.
fn render_values(feature: &Feature, max_chars: usize) -> String {
    use std::fmt::Write as _;
    let mut items: Vec<String> = Vec::new();
    let mut len = 0;
    let n = feature.len();
    for i in 0..n {
        let item = match feature {
            Feature::Int64(v) => v[i].to_string(),
            Feature::Float(v) => crate::example::shortest_repr(v[i]),
            Feature::Bytes(v) => match ImageFormat::sniff(&v[i]) {
                Some(format) => format!("<{} image, {} bytes>", format.label(), v[i].len()),
                None => match std::str::from_utf8(&v[i]) {
                    Ok(text) => text.chars().take(max_chars + 1).collect(),
                    Err(_) => {
                        let mut s = String::new();
                        // Writing to a String cannot fail.
                        let _ = crate::example::escape_bytes(&mut s, &v[i][..v[i].len().min(max_chars)]);
                        s
                    }
                },
            },
            Feature::None => String::new(),
        };
        len += item.chars().count() + 2;
        items.push(item);
        if len > max_chars {
            break;
        }
    }
    let mut text = if n == 1 {
        items.pop().unwrap_or_default()
    } else {
        let mut s = String::from("[");
        let _ = write!(s, "{}", items.join(", "));
        if items.len() < n {
            s.push_str(", …");
        }
        s.push(']');
        s
    };
    if text.chars().count() > max_chars {
        text = text.chars().take(max_chars.saturating_sub(1)).collect::<String>() + "…";
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn png(width: u32, height: u32, pad: usize) -> Vec<u8> {
        let mut b = b"\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR".to_vec();
        b.extend(width.to_be_bytes());
        b.extend(height.to_be_bytes());
        b.extend(vec![0u8; pad]);
        b
    }

    fn jpeg(width: u16, height: u16) -> Vec<u8> {
        let mut b = vec![0xff, 0xd8, 0xff, 0xe0, 0x00, 0x04, 0x4a, 0x46];
        b.extend([0xff, 0xc0, 0x00, 0x11, 0x08]);
        b.extend(height.to_be_bytes());
        b.extend(width.to_be_bytes());
        b.extend([0u8; 10]);
        b
    }

    #[test]
    fn images_are_recognised_by_their_magic_and_sized_from_their_header() {
        assert_eq!(ImageFormat::sniff(&png(3, 4, 0)), Some(ImageFormat::Png));
        assert_eq!(image_size(ImageFormat::Png, &png(3, 4, 0)), Some((3, 4)));
        assert_eq!(image_size(ImageFormat::Jpeg, &jpeg(640, 480)), Some((640, 480)));
        assert_eq!(ImageFormat::sniff(b"GIF89a"), None);
        // Truncated headers give no size, never a panic.
        for cut in 0..20 {
            let _ = image_size(ImageFormat::Jpeg, &jpeg(1, 1)[..cut]);
            let _ = image_size(ImageFormat::Png, &png(1, 1, 0)[..cut]);
        }
    }

    #[test]
    fn samples_are_bounded() {
        let limits = SampleLimits {
            max_image_bytes: 100,
            max_total_image_bytes: 150,
            ..SampleLimits::default()
        };
        let mut samples = ReportSamples::default();
        for i in 0..10 {
            let example = Example::builder()
                .bytes("image", [png(8, 8, 40 + i)])
                .bytes("big", [png(800, 600, 500)])
                .int64("id", [i as i64])
                .float("many", vec![0.5f32; 100])
                .build()
                .unwrap();
            samples.add_record(&example.encode(), &limits);
        }
        let image = &samples.features["image"];
        assert_eq!(image.images.len(), 3);
        // Two small images fit in 150 bytes; the third is named, not embedded.
        assert_eq!(image.images.iter().filter(|i| i.data_uri.is_some()).count(), 2);
        assert!(samples.image_bytes <= 150);
        assert!(samples.features["big"].images.iter().all(|i| i.data_uri.is_none()));
        assert_eq!(samples.features["big"].images[0].size, Some((800, 600)));
        assert_eq!(samples.features["id"].values, vec!["0", "1", "2"]);
        let many = &samples.features["many"].values[0];
        assert!(
            many.starts_with("[0.5, 0.5") && many.ends_with('…') || many.ends_with("…]"),
            "{many}"
        );
        assert!(many.chars().count() <= limits.max_value_chars);
        assert_eq!(samples.records, 10);
    }
}

//! Draws the small sample images in `samples/images/` (run once; the images are committed).
//! Two classes of synthetic pictures, RGB and one grayscale, so `tfrec from-images` shows
//! different heights, widths and depths.

use image::{GrayImage, ImageBuffer, Rgb};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../samples/images");
    for class in ["circles", "stripes"] {
        std::fs::create_dir_all(root.join(class))?;
    }
    for (i, (w, h)) in [(48u32, 32u32), (40, 40)].into_iter().enumerate() {
        let img = ImageBuffer::from_fn(w, h, |x, y| {
            let (cx, cy) = (w as f32 / 2.0, h as f32 / 2.0);
            let d = ((x as f32 - cx).powi(2) + (y as f32 - cy).powi(2)).sqrt();
            let ring = ((d / (3.0 + i as f32)) as u32 % 2) as u8;
            Rgb([200 * ring + 30, 80 + 20 * i as u8, 255 - 200 * ring])
        });
        img.save(root.join(format!("circles/circle_{i}.jpg")))?;
    }
    let stripes = ImageBuffer::from_fn(64, 24, |x, _| Rgb([((x / 8) % 2 * 220) as u8 + 20, 120, 60]));
    stripes.save(root.join("stripes/stripes_0.jpg"))?;
    let gray = GrayImage::from_fn(30, 20, |x, y| image::Luma([(((x + y) / 5) % 2 * 200) as u8 + 30]));
    gray.save(root.join("stripes/stripes_gray.jpg"))?;
    Ok(())
}

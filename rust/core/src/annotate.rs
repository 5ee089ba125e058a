//! Element ids drawn on a screenshot: on the image itself, after it was taken, so nothing is
//! ever put into the page (an overlay in the page can be read, rewritten or kept by its
//! scripts, and its labels would then read as page text).

use std::fmt;

/// One element's box in the image's own pixels, and the id to write on it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct IdBox {
    pub id: i64,
    pub x: f64,
    pub y: f64,
    pub width: f64,
    pub height: f64,
}

/// A screenshot that is not a PNG this reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImageError(pub String);

impl fmt::Display for ImageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "cannot draw on the screenshot: {}", self.0)
    }
}

impl std::error::Error for ImageError {}

/// Images larger than this many pixels are refused (a full-page capture of a huge page).
const MAX_PIXELS: u64 = 1 << 27;

const RED: [u8; 3] = [0xE0, 0x00, 0x00];
const WHITE: [u8; 3] = [0xFF, 0xFF, 0xFF];
/// Glyphs 5 wide and 7 high, one row per byte (bit 4 the left column): digits and `-`.
const GLYPHS: [[u8; 7]; 11] = [
    [0x0E, 0x11, 0x13, 0x15, 0x19, 0x11, 0x0E], // 0
    [0x04, 0x0C, 0x04, 0x04, 0x04, 0x04, 0x0E], // 1
    [0x0E, 0x11, 0x01, 0x02, 0x04, 0x08, 0x1F], // 2
    [0x1F, 0x02, 0x04, 0x02, 0x01, 0x11, 0x0E], // 3
    [0x02, 0x06, 0x0A, 0x12, 0x1F, 0x02, 0x02], // 4
    [0x1F, 0x10, 0x1E, 0x01, 0x01, 0x11, 0x0E], // 5
    [0x06, 0x08, 0x10, 0x1E, 0x11, 0x11, 0x0E], // 6
    [0x1F, 0x01, 0x02, 0x04, 0x08, 0x08, 0x08], // 7
    [0x0E, 0x11, 0x11, 0x0E, 0x11, 0x11, 0x0E], // 8
    [0x0E, 0x11, 0x11, 0x0F, 0x01, 0x02, 0x0C], // 9
    [0x00, 0x00, 0x00, 0x1F, 0x00, 0x00, 0x00], // -
];

struct Canvas {
    pixels: Vec<u8>,
    width: usize,
    height: usize,
    channels: usize,
}

impl Canvas {
    fn fill(&mut self, x0: i64, y0: i64, x1: i64, y1: i64, color: [u8; 3]) {
        let clamp = |v: i64, max: usize| usize::try_from(v.max(0)).unwrap_or(0).min(max);
        let (x0, x1) = (clamp(x0, self.width), clamp(x1, self.width));
        let (y0, y1) = (clamp(y0, self.height), clamp(y1, self.height));
        for y in y0..y1 {
            for x in x0..x1 {
                let at = (y * self.width + x) * self.channels;
                self.pixels[at..at + 3].copy_from_slice(&color);
                if self.channels == 4 {
                    self.pixels[at + 3] = 0xFF;
                }
            }
        }
    }

    /// A 2-pixel outline around the box (scaled), and the id on a red tab at its top left.
    fn draw(&mut self, b: &IdBox, scale: i64) {
        #[allow(clippy::cast_possible_truncation)]
        let (x0, y0) = (b.x.round() as i64, b.y.round() as i64);
        #[allow(clippy::cast_possible_truncation)]
        let (x1, y1) = (
            (b.x + b.width).round() as i64,
            (b.y + b.height).round() as i64,
        );
        let t = 2 * scale;
        self.fill(x0, y0, x1, y0 + t, RED);
        self.fill(x0, y1 - t, x1, y1, RED);
        self.fill(x0, y0, x0 + t, y1, RED);
        self.fill(x1 - t, y0, x1, y1, RED);
        let text = b.id.to_string();
        let glyph_w = 6 * scale;
        let tab_w = i64::try_from(text.len()).unwrap_or(0) * glyph_w + 2 * scale;
        let tab_h = 9 * scale;
        self.fill(x0, y0, x0 + tab_w, y0 + tab_h, RED);
        for (k, c) in text.bytes().enumerate() {
            let glyph = if c == b'-' {
                &GLYPHS[10]
            } else {
                &GLYPHS[usize::from(c - b'0')]
            };
            let left = x0 + 2 * scale + i64::try_from(k).unwrap_or(0) * glyph_w;
            for (row, bits) in (0i64..).zip(glyph) {
                for col in 0..5i64 {
                    if bits & (0x10 >> col) != 0 {
                        let (px, py) = (left + col * scale, y0 + scale + row * scale);
                        self.fill(px, py, px + scale, py + scale, WHITE);
                    }
                }
            }
        }
    }
}

/// `png` with each box outlined and its id written on it, as a PNG of the same size and
/// color type. `scale` is the image's pixels per CSS pixel (lines and glyphs grow with it).
///
/// # Errors
/// Bytes that are not a PNG, one larger than 2^27 pixels, or one that does not encode again.
pub fn draw_ids(png_bytes: &[u8], boxes: &[IdBox], scale: f64) -> Result<Vec<u8>, ImageError> {
    let bad = |e: &dyn fmt::Display| ImageError(e.to_string());
    let mut decoder = png::Decoder::new(std::io::Cursor::new(png_bytes));
    decoder.set_transformations(png::Transformations::EXPAND | png::Transformations::STRIP_16);
    let mut reader = decoder.read_info().map_err(|e| bad(&e))?;
    let (width, height) = (reader.info().width, reader.info().height);
    if u64::from(width) * u64::from(height) > MAX_PIXELS {
        return Err(ImageError(format!("{width}x{height} pixels is too large")));
    }
    let mut pixels = vec![
        0;
        reader
            .output_buffer_size()
            .ok_or_else(|| ImageError("too large".into()))?
    ];
    let frame = reader.next_frame(&mut pixels).map_err(|e| bad(&e))?;
    pixels.truncate(frame.buffer_size());
    let (color, channels) = match frame.color_type {
        png::ColorType::Rgb => (png::ColorType::Rgb, 3),
        png::ColorType::Rgba => (png::ColorType::Rgba, 4),
        other => {
            return Err(ImageError(format!(
                "a {other:?} PNG (expected RGB or RGBA)"
            )))
        }
    };
    let mut canvas = Canvas {
        pixels,
        width: width as usize,
        height: height as usize,
        channels,
    };
    #[allow(clippy::cast_possible_truncation)]
    let scale_px = (scale.round() as i64).clamp(1, 8);
    for b in boxes {
        let scaled = IdBox {
            id: b.id,
            x: b.x * scale,
            y: b.y * scale,
            width: b.width * scale,
            height: b.height * scale,
        };
        if scaled.x.is_finite()
            && scaled.y.is_finite()
            && scaled.width.is_finite()
            && scaled.height.is_finite()
        {
            canvas.draw(&scaled, scale_px);
        }
    }
    let mut out = Vec::with_capacity(png_bytes.len());
    {
        let mut encoder = png::Encoder::new(&mut out, width, height);
        encoder.set_color(color);
        encoder.set_depth(png::BitDepth::Eight);
        encoder.set_compression(png::Compression::Fast);
        let mut writer = encoder.write_header().map_err(|e| bad(&e))?;
        writer
            .write_image_data(&canvas.pixels)
            .map_err(|e| bad(&e))?;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn blank(width: u32, height: u32) -> Vec<u8> {
        let mut out = Vec::new();
        let mut encoder = png::Encoder::new(&mut out, width, height);
        encoder.set_color(png::ColorType::Rgb);
        encoder.set_depth(png::BitDepth::Eight);
        let mut writer = encoder.write_header().unwrap();
        writer
            .write_image_data(&vec![0xFF; (width * height * 3) as usize])
            .unwrap();
        drop(writer);
        out
    }

    fn pixels(png_bytes: &[u8]) -> (Vec<u8>, u32) {
        let mut reader = png::Decoder::new(std::io::Cursor::new(png_bytes))
            .read_info()
            .unwrap();
        let mut buf = vec![0; reader.output_buffer_size().unwrap()];
        let info = reader.next_frame(&mut buf).unwrap();
        (buf, info.width)
    }

    #[test]
    fn outlines_and_labels_are_drawn_where_the_boxes_are() {
        let image = blank(100, 60);
        let boxes = [IdBox {
            id: 42,
            x: 10.0,
            y: 10.0,
            width: 50.0,
            height: 30.0,
        }];
        let (px, width) = pixels(&draw_ids(&image, &boxes, 1.0).unwrap());
        let at = |x: u32, y: u32| {
            &px[((y * width + x) * 3) as usize..((y * width + x) * 3 + 3) as usize]
        };
        assert_eq!(at(59, 30), RED); // the right edge
        assert_eq!(at(30, 39), RED); // the bottom edge
        assert_eq!(at(30, 25), [0xFF; 3]); // inside: untouched
        assert_eq!(at(5, 5), [0xFF; 3]); // outside
                                         // The tab holds white glyph pixels on red.
        let tab: Vec<&[u8]> = (10..24)
            .flat_map(|x| (10..19).map(move |y| (x, y)))
            .map(|(x, y)| at(x, y))
            .collect();
        assert!(tab.contains(&&WHITE[..]) && tab.contains(&&RED[..]));
    }

    #[test]
    fn boxes_off_the_image_and_bad_input_are_harmless() {
        let image = blank(20, 20);
        let boxes = [
            IdBox {
                id: -7,
                x: -50.0,
                y: 15.0,
                width: 1e9,
                height: 1e9,
            },
            IdBox {
                id: 1,
                x: f64::NAN,
                y: 0.0,
                width: 1.0,
                height: 1.0,
            },
        ];
        assert!(draw_ids(&image, &boxes, 3.0).is_ok());
        assert!(draw_ids(b"not a png", &boxes, 1.0).is_err());
        assert!(draw_ids(&image[..image.len() / 2], &boxes, 1.0).is_err());
    }
}

//! LOLWUT, as redis-server 7.0 answers it: `LOLWUT VERSION 5` draws Georg Nees's "Schotter"
//! in braille characters, `VERSION 6` a skyline in terminal colours, anything else (the
//! default: this server's version) a line naming the version. The pictures come from C's
//! rand() with glibc's generator and the same float arithmetic as lolwut5.c/lolwut6.c, so a
//! given generator state draws redis-server's picture; the state is seeded from the time and
//! the process id at first use, as Redis seeds rand() at startup.

use crate::cmd::base::args::{self, is};
use crate::cmd::runtime::state::Ctx;
use crate::cmd::runtime::table::Row;
use crate::reply::{CmdResult, Reply};
use bytes::Bytes;
use parking_lot::Mutex;

use std::f64::consts::PI;

pub const COMMANDS: &[Row] = &[Row::new("lolwut", lolwut)];

/// glibc's rand() (random_r's TYPE_3 additive feedback generator: 31 words, the front
/// pointer three ahead of the rear one).
pub struct CRand {
    state: [u32; 31],
    f: usize,
    r: usize,
}

impl CRand {
    /// srand(seed).
    pub fn new(seed: u32) -> CRand {
        let seed = if seed == 0 { 1 } else { seed };
        let mut state = [0u32; 31];
        state[0] = seed;
        let mut word = seed as i32 as i64;
        for s in state.iter_mut().skip(1) {
            let hi = word / 127_773;
            let lo = word % 127_773;
            word = 16_807 * lo - 2_836 * hi;
            if word < 0 {
                word += 2_147_483_647;
            }
            *s = word as u32;
        }
        let mut g = CRand { state, f: 3, r: 0 };
        for _ in 0..310 {
            g.rand();
        }
        g
    }

    /// rand(): 0..=RAND_MAX.
    pub fn rand(&mut self) -> i32 {
        let v = self.state[self.f].wrapping_add(self.state[self.r]);
        self.state[self.f] = v;
        self.f = (self.f + 1) % 31;
        self.r = (self.r + 1) % 31;
        (v >> 1) as i32
    }
}

const RAND_MAX: i32 = 2_147_483_647;

/// A grid of pixels (colours 0..=3), out-of-bounds writes ignored and reads 0.
struct Canvas {
    width: i32,
    height: i32,
    pixels: Vec<u8>,
}

impl Canvas {
    fn new(width: i32, height: i32, bg: u8) -> Canvas {
        Canvas {
            width,
            height,
            pixels: vec![bg; (width as usize) * (height.max(0) as usize)],
        }
    }
    fn set(&mut self, x: i32, y: i32, color: u8) {
        if x < 0 || x >= self.width || y < 0 || y >= self.height {
            return;
        }
        self.pixels[(x + y * self.width) as usize] = color;
    }
    fn get(&self, x: i32, y: i32) -> u8 {
        if x < 0 || x >= self.width || y < 0 || y >= self.height {
            return 0;
        }
        self.pixels[(x + y * self.width) as usize]
    }
    /// Bresenham, as lwDrawLine.
    fn line(&mut self, mut x1: i32, mut y1: i32, x2: i32, y2: i32, color: u8) {
        let dx = (x2 - x1).abs();
        let dy = (y2 - y1).abs();
        let sx = if x1 < x2 { 1 } else { -1 };
        let sy = if y1 < y2 { 1 } else { -1 };
        let mut err = dx - dy;
        loop {
            self.set(x1, y1, color);
            if x1 == x2 && y1 == y2 {
                break;
            }
            let e2 = err * 2;
            if e2 > -dy {
                err -= dy;
                x1 += sx;
            }
            if e2 < dx {
                err += dx;
                y1 += sy;
            }
        }
    }
    /// lwDrawSquare: a square of side `size` centred at x,y rotated by `angle`, with C's
    /// float/double conversions.
    fn square(&mut self, x: i32, y: i32, size: f32, angle: f32, color: u8) {
        // Redis divides by this truncated literal, not by sqrt(2): the same digits draw the
        // same squares.
        #[allow(clippy::approx_constant)]
        let mut size = (size as f64 / 1.414_213_562_3) as f32;
        size = (size as f64).round() as f32;
        let mut k = (PI / 4.0 + angle as f64) as f32;
        let mut px = [0i32; 4];
        let mut py = [0i32; 4];
        for j in 0..4 {
            px[j] = ((k as f64).sin() * size as f64 + x as f64).round() as i32;
            py[j] = ((k as f64).cos() * size as f64 + y as f64).round() as i32;
            k = (k as f64 + PI / 2.0) as f32;
        }
        for j in 0..4 {
            self.line(px[j], py[j], px[(j + 1) % 4], py[(j + 1) % 4], color);
        }
    }
}

/// lwDrawSchotter: `squares_per_row` by `squares_per_col` squares over `cols` terminal
/// columns, more disordered row after row.
fn schotter(rand: &mut CRand, cols: i32, squares_per_row: i32, squares_per_col: i32) -> Canvas {
    let canvas_width = cols * 2;
    let padding = if canvas_width > 4 { 2 } else { 0 };
    let square_side = (canvas_width - padding * 2) as f32 / squares_per_row as f32;
    let canvas_height = (square_side * squares_per_col as f32 + (padding * 2) as f32) as i32;
    let mut canvas = Canvas::new(canvas_width, canvas_height, 0);
    for y in 0..squares_per_col {
        for x in 0..squares_per_row {
            let mut sx = (x as f32 * square_side + square_side / 2.0 + padding as f32) as i32;
            let mut sy = (y as f32 * square_side + square_side / 2.0 + padding as f32) as i32;
            let mut angle = 0.0f32;
            if y > 1 {
                let unit = |r: &mut CRand| {
                    r.rand() as f32 / RAND_MAX as f32 / squares_per_col as f32 * y as f32
                };
                let mut r1 = unit(rand);
                let mut r2 = unit(rand);
                let mut r3 = unit(rand);
                if rand.rand() % 2 != 0 {
                    r1 = -r1;
                }
                if rand.rand() % 2 != 0 {
                    r2 = -r2;
                }
                if rand.rand() % 2 != 0 {
                    r3 = -r3;
                }
                angle = r1;
                sx = (sx as f32 + r2 * square_side / 3.0) as i32;
                sy = (sy as f32 + r3 * square_side / 3.0) as i32;
            }
            canvas.square(sx, sy, square_side, angle, 1);
        }
    }
    canvas
}

/// Version 5's rendering: each 2x4 block of pixels is one braille character.
fn render_braille(canvas: &Canvas) -> Vec<u8> {
    let mut out = Vec::new();
    let mut y = 0;
    while y < canvas.height {
        let mut x = 0;
        while x < canvas.width {
            let bits = [
                (0, 0),
                (0, 1),
                (0, 2),
                (1, 0),
                (1, 1),
                (1, 2),
                (0, 3),
                (1, 3),
            ];
            let mut byte = 0u32;
            for (bit, (dx, dy)) in bits.iter().enumerate() {
                if canvas.get(x + dx, y + dy) != 0 {
                    byte |= 1 << bit;
                }
            }
            let code = 0x2800 + byte;
            out.push(0xE0 | (code >> 12) as u8);
            out.push(0x80 | ((code >> 6) & 0x3F) as u8);
            out.push(0x80 | (code & 0x3F) as u8);
            x += 2;
        }
        if y != canvas.height - 1 {
            out.push(b'\n');
        }
        y += 4;
    }
    out
}

/// Redis's getLongFromObjectOrReply limits, applied.
fn clamp(v: i64, lo: i64, hi: i64) -> i32 {
    v.clamp(lo, hi) as i32
}

/// `LOLWUT VERSION 5 [columns [squares-per-row [squares-per-col]]]` (defaults 66, 8, 12).
pub fn version5(rand: &mut CRand, cols: i64, per_row: i64, per_col: i64, version: &str) -> Vec<u8> {
    let canvas = schotter(
        rand,
        clamp(cols, 1, 1000),
        clamp(per_row, 1, 200),
        clamp(per_col, 1, 200),
    );
    let mut out = render_braille(&canvas);
    out.extend_from_slice(b"\nGeorg Nees - schotter, plotter on paper, 1968. Redis ver. ");
    out.extend_from_slice(version.as_bytes());
    out.push(b'\n');
    out
}

/// generateSkyscraper: one building from the bottom row up, windows in random grays.
fn skyscraper(
    canvas: &mut Canvas,
    rand: &mut CRand,
    xoff: i32,
    width: i32,
    height: i32,
    windows: bool,
    color: u8,
) {
    let starty = canvas.height - 1;
    let endy = starty - height + 1;
    let mut y = starty;
    while y >= endy {
        for x in xoff..xoff + width {
            if y == endy && (x <= xoff + 1 || x >= xoff + width - 2) {
                continue;
            }
            let mut c = color;
            if windows && x > xoff + 1 && x < xoff + width - 2 && y > endy + 1 && y < starty - 1 {
                let relx = x - (xoff + 1);
                let rely = y - (endy + 1);
                if (relx / 2) % 2 != 0 && rely % 2 != 0 {
                    loop {
                        c = (1 + rand.rand() % 2) as u8;
                        if c != color {
                            break;
                        }
                    }
                    if relx % 2 != 0 {
                        c = canvas.get(x - 1, y);
                    }
                }
            }
            canvas.set(x, y, c);
        }
        y -= 1;
    }
}

/// generateSkyline: two rows of background buildings, then the foreground with windows.
fn skyline(canvas: &mut Canvas, rand: &mut CRand) {
    let h = canvas.height;
    for color in [2u8, 1] {
        let mut offset = -10;
        while offset < canvas.width {
            offset += rand.rand() % 8;
            let xoff = offset;
            let width = 10 + rand.rand() % 9;
            let height = if color == 2 {
                h / 2 + rand.rand() % h / 2
            } else {
                h / 2 + rand.rand() % h / 3
            };
            skyscraper(canvas, rand, xoff, width, height, false, color);
            offset += if color == 2 { width / 2 } else { width + 1 };
        }
    }
    let mut offset = -10;
    while offset < canvas.width {
        offset += rand.rand() % 8;
        let xoff = offset;
        let mut width = 5 + rand.rand() % 14;
        if width % 4 != 0 {
            width += width % 3;
        }
        let height = h / 3 + rand.rand() % h / 2;
        skyscraper(canvas, rand, xoff, width, height, true, 0);
        offset += width + 5;
    }
}

/// `LOLWUT VERSION 6 [columns [rows]]` (defaults 80, 20).
pub fn version6(rand: &mut CRand, cols: i64, rows: i64, version: &str) -> Vec<u8> {
    let mut canvas = Canvas::new(clamp(cols, 1, 1000), clamp(rows, 1, 1000), 3);
    skyline(&mut canvas, rand);
    let mut out = Vec::new();
    for y in 0..canvas.height {
        for x in 0..canvas.width {
            let ce: &[u8] = match canvas.get(x, y) {
                1 => b"0;90;100m",
                2 => b"0;37;47m",
                3 => b"0;97;107m",
                _ => b"0;30;40m",
            };
            out.extend_from_slice(b"\x1b[");
            out.extend_from_slice(ce);
            out.extend_from_slice(b" \x1b[0m");
        }
        if y != canvas.height - 1 {
            out.push(b'\n');
        }
    }
    out.extend_from_slice(b"\nDedicated to the 8 bit game developers of past and present.\nOriginal 8 bit image from Plaguemon by hikikomori. Redis ver. ");
    out.extend_from_slice(version.as_bytes());
    out.push(b'\n');
    out
}

/// The server's rand() state, as Redis's process-wide one.
static RAND: Mutex<Option<CRand>> = Mutex::new(None);

fn with_rand<R>(f: impl FnOnce(&mut CRand) -> R) -> R {
    let mut g = RAND.lock();
    let r = g.get_or_insert_with(|| {
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        CRand::new((t as u32) ^ std::process::id())
    });
    f(r)
}

/// `LOLWUT [VERSION version] [arguments of that version]`.
fn lolwut(_: &mut Ctx, a: &[Bytes]) -> CmdResult {
    let own = crate::version::REDIS_VERSION;
    let mut args = &a[1..];
    let mut version = own.to_string();
    if a.len() >= 3 && is(&a[1], "version") {
        let v = args::int(&a[2])?;
        // Redis prints the number with %u after a cast to unsigned int.
        version = format!("{}.0.0", v as u32);
        args = &a[3..];
    }
    let v = version.as_bytes();
    let long = |i: usize, default: i64| -> Result<i64, crate::error::RedisError> {
        args.get(i).map_or(Ok(default), |s| args::int(s))
    };
    // "5.x" but not "5.9", and "4.9", draw version 5; "6.x" but not "6.9", and "5.9",
    // version 6 (lolwutCommand's test of the version string).
    let nine = v[2] == b'9';
    let text = if v[1] == b'.' && matches!((v[0], nine), (b'5', false) | (b'4', true)) {
        let (cols, per_row, per_col) = (long(0, 66)?, long(1, 8)?, long(2, 12)?);
        with_rand(|r| version5(r, cols, per_row, per_col, own))
    } else if v[1] == b'.' && matches!((v[0], nine), (b'6', false) | (b'5', true)) {
        let (cols, rows) = (long(0, 80)?, long(1, 20)?);
        with_rand(|r| version6(r, cols, rows, own))
    } else {
        format!("Redis ver. {own}\n").into_bytes()
    };
    Ok(Reply::Verbatim(Bytes::from(text)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rand_is_glibc_rand() {
        let mut r = CRand::new(1);
        let got: Vec<i32> = (0..5).map(|_| r.rand()).collect();
        assert_eq!(
            got,
            [1804289383, 846930886, 1681692777, 1714636915, 1957747793]
        );
    }

    fn sha1(b: &[u8]) -> String {
        sha1_smol::Sha1::from(b).digest().to_string()
    }

    /// Digests of what lolwut5.c/lolwut6.c draw after srand(seed) with glibc, recorded.
    #[test]
    fn pictures_match_redis_drawing_for_a_seed() {
        let v5 = version5(&mut CRand::new(1), 66, 8, 12, "7.0.15");
        assert_eq!(sha1(&v5), "37460a267f076395db1dc0c8bee82aedbc48a631");
        let v5 = version5(&mut CRand::new(7), 20, 3, 5, "7.0.15");
        assert_eq!(sha1(&v5), "a4d214cc6ef711c260013f113f3e0ae46c77ba97");
        let v6 = version6(&mut CRand::new(1), 80, 20, "7.0.15");
        assert_eq!(sha1(&v6), "dacebc6c1a47f15252f9b7ba0dfc2cd4b6f2f353");
    }

    #[test]
    fn the_first_two_rows_of_schotter_are_not_random() {
        let a = version5(&mut CRand::new(1), 10, 3, 2, "7.0.15");
        let b = version5(&mut CRand::new(2), 10, 3, 2, "7.0.15");
        assert_eq!(a, b);
        assert_eq!(
            String::from_utf8(a).unwrap(),
            "⢰⠒⠒⢲⠒⠒⣶⠒⠒⡆\n⢸⣀⣀⣸⣀⣀⣿⣀⣀⡇\n⢸⠀⠀⢸⠀⠀⣿⠀⠀⡇\n⠘⠒⠒⠚⠒⠒⠛⠒⠒⠃\n\nGeorg Nees - schotter, plotter on paper, 1968. Redis ver. 7.0.15\n"
        );
    }
}

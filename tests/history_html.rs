//! The timeline page in a real browser: headless Chromium (Debian's `chromium` package) loads
//! the file with the network off, and the screenshot must show the violation in the
//! violation red (and the clean run none of it, with the green verdict); the DOM Chromium
//! built must hold a bar per lease and the story. Without Chromium installed the tests say so
//! and pass: .ci/run installs it, so CI always runs them.

use resplock::history::{html, CheckOptions, History};
use std::path::{Path, PathBuf};
use std::process::Command;

fn chromium() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("RESPLOCK_CHROMIUM") {
        return Some(PathBuf::from(p));
    }
    [
        "/usr/bin/chromium",
        "/usr/bin/chromium-browser",
        "/usr/bin/google-chrome",
    ]
    .iter()
    .map(PathBuf::from)
    .find(|p| p.exists())
}

fn skip_note() {
    eprintln!(
        "SKIPPED: Chromium is not installed (apt-get install chromium chromium-driver, or set \
         RESPLOCK_CHROMIUM); the timeline was not rendered in a browser"
    );
}

/// Runs headless Chromium on `page` with the flags that work on a closed network.
fn chrome(bin: &Path, dir: &Path, extra: &[&str], page: &Path) -> std::process::Output {
    let profile = dir.join(format!("profile-{}", fastrand_u64()));
    let mut cmd = Command::new(bin);
    cmd.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--hide-scrollbars",
        "--force-device-scale-factor=1",
        // Nothing may be fetched: every host resolves nowhere.
        "--host-resolver-rules=MAP * ~NOTFOUND",
    ])
    .arg(format!("--user-data-dir={}", profile.display()))
    .args(extra)
    .arg(format!("file://{}", page.display()));
    let out = cmd.output().expect("chromium runs");
    let _ = std::fs::remove_dir_all(profile);
    out
}

fn fastrand_u64() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0)
        ^ u64::from(std::process::id())
}

/// The screenshot's pixels (RGBA) and width.
fn screenshot(bin: &Path, dir: &Path, page: &Path, name: &str) -> (Vec<u8>, usize, usize) {
    let png_path = dir.join(format!("{name}.png"));
    let out = chrome(
        bin,
        dir,
        &[
            "--window-size=1700,900",
            &format!("--screenshot={}", png_path.display()),
        ],
        page,
    );
    assert!(
        png_path.exists(),
        "no screenshot; chromium said:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let decoder = png::Decoder::new(std::fs::File::open(&png_path).expect("png"));
    let mut reader = decoder.read_info().expect("png header");
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).expect("png frame");
    buf.truncate(info.buffer_size());
    let channels = match info.color_type {
        png::ColorType::Rgba => 4,
        png::ColorType::Rgb => 3,
        other => panic!("unexpected PNG colour type {other:?}"),
    };
    let rgba: Vec<u8> = buf
        .chunks(channels)
        .flat_map(|p| [p[0], p[1], p[2], if channels == 4 { p[3] } else { 255 }])
        .collect();
    (rgba, info.width as usize, info.height as usize)
}

fn count_color(rgba: &[u8], (r, g, b): (u8, u8, u8)) -> usize {
    rgba.chunks(4)
        .filter(|p| {
            p[0].abs_diff(r) <= 6 && p[1].abs_diff(g) <= 6 && p[2].abs_diff(b) <= 6 && p[3] > 200
        })
        .count()
}

/// Pixels that are neither white nor grey: bars, marks, text colours.
fn colored(rgba: &[u8]) -> usize {
    rgba.chunks(4)
        .filter(|p| {
            let (mx, mn) = (p[0].max(p[1]).max(p[2]), p[0].min(p[1]).min(p[2]));
            mx - mn > 40
        })
        .count()
}

/// Five Redlock nodes: a restart loses client 1's write on n3, n4's clock jumps, client 2
/// gets a majority.
const REDLOCK: &str = r#"{"ev":"meta","nodes":["n1","n2","n3","n4","n5"],"dropped":0}
{"ev":"key","node":"n1","seq":1,"t":1750000000001000,"real":1750000000001000,"key":"lock:res","state":"string","owner":"c1-token","ttl":10000,"client":{"id":7,"name":"c1"},"cmd":"set"}
{"ev":"key","node":"n2","seq":1,"t":1750000000002000,"real":1750000000002000,"key":"lock:res","state":"string","owner":"c1-token","ttl":10000,"client":{"id":7,"name":"c1"},"cmd":"set"}
{"ev":"key","node":"n3","seq":1,"t":1750000000003000,"real":1750000000003000,"key":"lock:res","state":"string","owner":"c1-token","ttl":10000,"client":{"id":7,"name":"c1"},"cmd":"set"}
{"ev":"key","node":"n4","seq":1,"t":1750000000004000,"real":1750000000004000,"key":"lock:res","state":"string","owner":"c1-token","ttl":10000,"client":{"id":7,"name":"c1"},"cmd":"set"}
{"ev":"restart","node":"n3","seq":2,"t":1750000001000000,"real":1750000001000000,"mode":"from before-c1"}
{"ev":"key","node":"n3","seq":3,"t":1750000001000000,"real":1750000001000000,"key":"lock:res","state":"gone","cause":"restart"}
{"ev":"clock","node":"n4","seq":2,"t":1750000022000000,"real":1750000002000000,"from":1750000002000000,"to":1750000022000000,"frozen":false,"how":"advance"}
{"ev":"key","node":"n4","seq":3,"t":1750000022000000,"real":1750000002000000,"key":"lock:res","state":"gone","cause":"clock"}
{"ev":"key","node":"n3","seq":4,"t":1750000002500000,"real":1750000002500000,"key":"lock:res","state":"string","owner":"c2-token","ttl":10000,"client":{"id":9,"name":"c2"},"cmd":"set"}
{"ev":"key","node":"n4","seq":4,"t":1750000022501000,"real":1750000002501000,"key":"lock:res","state":"string","owner":"c2-token","ttl":10000,"client":{"id":9,"name":"c2"},"cmd":"set"}
{"ev":"key","node":"n5","seq":1,"t":1750000002502000,"real":1750000002502000,"key":"lock:res","state":"string","owner":"c2-token","ttl":10000,"client":{"id":9,"name":"c2"},"cmd":"set"}
"#;

/// The same nodes, every clock moved together, releases by the owners.
const CLEAN: &str = r#"{"ev":"meta","nodes":["n1","n2","n3"],"dropped":0}
{"ev":"key","node":"n1","seq":1,"t":1750000000001000,"real":1750000000001000,"key":"lock:res","state":"string","owner":"c1-token","ttl":10000,"client":{"id":7,"name":"c1"},"cmd":"set"}
{"ev":"key","node":"n2","seq":1,"t":1750000000002000,"real":1750000000002000,"key":"lock:res","state":"string","owner":"c1-token","ttl":10000,"client":{"id":7,"name":"c1"},"cmd":"set"}
{"ev":"key","node":"n1","seq":2,"t":1750000001000000,"real":1750000001000000,"key":"lock:res","state":"gone","proof":"token","client":{"id":7,"name":"c1"},"cmd":"del"}
{"ev":"key","node":"n2","seq":2,"t":1750000001001000,"real":1750000001001000,"key":"lock:res","state":"gone","proof":"token","client":{"id":7,"name":"c1"},"cmd":"del"}
{"ev":"key","node":"n2","seq":3,"t":1750000001500000,"real":1750000001500000,"key":"lock:res","state":"string","owner":"c2-token","ttl":10000,"client":{"id":9,"name":"c2"},"cmd":"set"}
{"ev":"key","node":"n3","seq":1,"t":1750000001501000,"real":1750000001501000,"key":"lock:res","state":"string","owner":"c2-token","ttl":10000,"client":{"id":9,"name":"c2"},"cmd":"set"}
{"ev":"fault","node":"n1","seq":3,"t":1750000001600000,"real":1750000001600000,"text":"PAUSE 500"}
"#;

fn page(dir: &Path, name: &str, text: &str) -> (PathBuf, resplock::history::Report) {
    let h = History::from_json_lines(text.as_bytes()).expect("history");
    let report = h.check(&CheckOptions::default());
    let path = dir.join(format!("{name}.html"));
    std::fs::write(&path, html::render(&h, &report)).expect("write page");
    (path, report)
}

fn workdir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("resplock-html-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&d).expect("temp dir");
    d
}

#[test]
fn the_timeline_shows_the_violation_in_red_in_a_real_browser() {
    let Some(bin) = chromium() else {
        return skip_note();
    };
    let dir = workdir("shot");
    let (bad, report) = page(&dir, "redlock", REDLOCK);
    assert!(!report.is_clean());
    let (good, report) = page(&dir, "clean", CLEAN);
    assert!(report.is_clean(), "{report}");

    let (px, w, h) = screenshot(&bin, &dir, &bad, "redlock");
    assert_eq!((w, h), (1700, 900));
    let red = count_color(&px, html::VIOLATION_RED);
    // The verdict banner alone is some 1,600 px wide and 30 high; the marks add more.
    assert!(
        red > 30_000,
        "too little violation red in the screenshot: {red} px"
    );
    // The red must be in the top banner and inside the timeline (below it).
    let red_in_rows =
        |y0: usize, y1: usize| count_color(&px[y0 * w * 4..y1 * w * 4], html::VIOLATION_RED);
    assert!(red_in_rows(50, 100) > 20_000, "no red verdict banner");
    assert!(red_in_rows(140, 330) > 500, "no red marks on the timeline");
    assert!(colored(&px) > 40_000, "the lease bars are missing");
    assert_eq!(count_color(&px, html::CLEAN_GREEN), 0);

    let (px, _, _) = screenshot(&bin, &dir, &good, "clean");
    assert_eq!(
        count_color(&px, html::VIOLATION_RED),
        0,
        "red on a clean run"
    );
    assert!(
        count_color(&px, html::CLEAN_GREEN) > 20_000,
        "no green verdict"
    );
    assert!(colored(&px) > 30_000, "the lease bars are missing");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn the_browser_builds_a_bar_per_lease_and_the_story_offline() {
    let Some(bin) = chromium() else {
        return skip_note();
    };
    let dir = workdir("dom");
    let (bad, report) = page(&dir, "redlock", REDLOCK);
    let text = std::fs::read_to_string(&bad).unwrap();
    for banned in [
        "http://", "https://", "<script", "<link", "<img", "@import", "url(",
    ] {
        assert!(!text.contains(banned), "the page refers to {banned}");
    }
    let out = chrome(
        &bin,
        &dir,
        &["--dump-dom", "--virtual-time-budget=2000"],
        &bad,
    );
    let dom = String::from_utf8_lossy(&out.stdout);
    assert!(
        dom.contains("<svg"),
        "no SVG in the DOM:\n{}",
        &dom[..dom.len().min(2000)]
    );
    // Seven leases: c1 on n1..n4, c2 on n3, n4, n5; each a <g> with its story as title.
    let bars = dom.matches("held by client").count();
    assert_eq!(
        bars,
        7 + report
            .first()
            .unwrap()
            .story
            .matches("held by client")
            .count()
    );
    assert!(
        dom.contains("Why: on n3 the first holder"),
        "no story beside the timeline"
    );
    assert!(dom.contains("restart from before-c1"));
    assert!(dom.contains("clock +20.000s"));
    let _ = std::fs::remove_dir_all(dir);
}

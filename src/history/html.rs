//! The timeline: one self-contained HTML file (inline SVG and CSS, no script, nothing fetched)
//! a person reads at a glance. One row per lock and node, a bar per holder's lease (dashed
//! where its holder could still believe it held a lease that ended early), marks for expiry,
//! restarts, clock jumps and faults, the clients' operations and resource uses, fenced
//! writes, and each violation in red with its story beside the picture.

use super::check::story::{clock_text, quote, Words};
use super::check::{Report, Violation};
use super::event::{History, OpKind, RecKind, Sym};
use super::lease::{End, Lease};
use std::collections::HashMap;
use std::fmt::Write;

/// The red of violations (and nothing else): the screenshot test looks for it.
pub const VIOLATION_RED: (u8, u8, u8) = (0xd4, 0x00, 0x00);
/// The green of a clean verdict.
pub const CLEAN_GREEN: (u8, u8, u8) = (0x1a, 0x7f, 0x37);

const LABEL_W: f64 = 200.0;
const PLOT_W: f64 = 1000.0;
const ROW_H: f64 = 30.0;
const MAX_ROWS: usize = 80;
const MAX_BARS: usize = 20_000;

fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '&' => o.push_str("&amp;"),
            '"' => o.push_str("&quot;"),
            c => o.push(c),
        }
    }
    o
}

fn hex((r, g, b): (u8, u8, u8)) -> String {
    format!("#{r:02x}{g:02x}{b:02x}")
}

/// A colour per owner, never red (hues 40..320): owners in order of appearance step round
/// the wheel by the golden angle, so neighbours differ.
fn owner_color(colors: &HashMap<Sym, usize>, owner: Sym) -> String {
    let i = colors.get(&owner).copied().unwrap_or(0);
    let hue = 40.0 + (i as f64 * 137.508) % 280.0;
    let light = [62, 52, 70][i % 3];
    format!("hsl({hue:.0},60%,{light}%)")
}

#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum RowKey {
    /// (lock, node)
    Lease(u32, u16),
    /// A lock's client ops.
    Ops(u32),
    /// A fenced resource (by name), on a node.
    Resource(Sym, u16),
}

/// Draws `history` and what `report` found as one HTML page.
///
/// ```
/// use resplock::history::{html, CheckOptions, History};
/// let h = History::from_json_lines(br#"
/// {"ev":"key","t":0,"real":0,"key":"l","owner":"a","ttl":10000,"client":{"id":1}}
/// {"ev":"key","t":5000,"real":5000,"key":"l","state":"gone","client":{"id":2}}
/// "#).unwrap();
/// let page = html::render(&h, &h.check(&CheckOptions::default()));
/// assert!(page.starts_with("<!DOCTYPE html>"));
/// assert!(page.contains("did not act for its owner"));
/// assert!(!page.contains("http://") && !page.contains("https://"));
/// ```
pub fn render(history: &History, report: &Report) -> String {
    let built;
    let (leases, t0) = match &report.leases_built {
        Some(b) => (&b.0, b.1),
        None => {
            built = super::check::check(history, &Default::default());
            let b = built.leases_built.as_ref().expect("built");
            (&b.0, b.1)
        }
    };
    let h = history;
    let w = Words { h, t0 };
    let mut colors: HashMap<Sym, usize> = HashMap::new();
    let mut owners: Vec<(i64, Sym)> = leases
        .leases
        .iter()
        .map(|l| (l.start_real, l.owner))
        .collect();
    owners.extend(h.ops.iter().map(|o| (o.invoke, o.token)));
    owners.sort_unstable();
    for (_, o) in owners {
        let n = colors.len();
        colors.entry(o).or_insert(n);
    }
    // The window: everything, or around the first violation when there is too much.
    let t_end = h
        .recs
        .iter()
        .map(|r| r.real)
        .chain(h.ops.iter().map(|o| o.invoke))
        .chain(
            h.ops
                .iter()
                .filter(|o| o.complete != i64::MAX)
                .map(|o| o.complete),
        )
        .chain(
            leases
                .leases
                .iter()
                .flat_map(|l| [l.end_real, l.nominal_real])
                .filter(|&t| t != i64::MAX),
        )
        .max()
        .unwrap_or(t0 + 1);
    let mut from = t0;
    let mut to = t_end.max(t0 + 1000);
    let total_bars = leases.leases.len() + h.ops.len();
    let mut note = String::new();
    if total_bars > MAX_BARS {
        let mut starts: Vec<i64> = leases.leases.iter().map(|l| l.start_real).collect();
        starts.extend(h.ops.iter().map(|o| o.invoke));
        starts.sort_unstable();
        match report.first() {
            Some(v) => {
                let center = v.mark.to_real;
                let i = starts.partition_point(|&s| s < center);
                from = starts[i.saturating_sub(MAX_BARS / 2)].min(v.mark.from_real);
                to = starts[(i + MAX_BARS / 2).min(starts.len() - 1)].max(center + 1000);
            }
            None => {
                to = starts[MAX_BARS - 1];
            }
        }
        note = format!(
            "Showing {} to {} of {} to {} ({} leases and client ops in all).",
            w.at(from),
            w.at(to),
            w.at(t0),
            w.at(t_end),
            total_bars
        );
    }
    let pad = ((to - from) / 40).max(1000);
    let (from, to) = (from - pad, to + pad);
    let x = |t: i64| LABEL_W + (t.clamp(from, to) - from) as f64 * PLOT_W / (to - from) as f64;

    // Rows: locks in violations first, then by activity.
    let mut activity: HashMap<RowKey, usize> = HashMap::new();
    for l in &leases.leases {
        if l.end_real >= from && l.start_real <= to {
            *activity.entry(RowKey::Lease(l.lock, l.node)).or_default() += 1;
        }
    }
    for o in &h.ops {
        if o.complete >= from && o.invoke <= to {
            *activity.entry(RowKey::Ops(o.lock)).or_default() += 1;
        }
    }
    for r in &h.recs {
        if let RecKind::Fenced { resource, .. } = r.kind {
            if r.real >= from && r.real <= to {
                *activity
                    .entry(RowKey::Resource(resource, r.node))
                    .or_default() += 1;
            }
        }
    }
    let hot: Vec<u32> = report
        .violations
        .iter()
        .filter_map(|v| v.mark.lock)
        .collect();
    let hot_res: Vec<Sym> = report
        .violations
        .iter()
        .filter_map(|v| v.mark.resource)
        .collect();
    let mut rows: Vec<RowKey> = activity.keys().copied().collect();
    let lock_of = |k: &RowKey| match *k {
        RowKey::Lease(l, _) | RowKey::Ops(l) => Some(l),
        RowKey::Resource(..) => None,
    };
    let rank = |k: &RowKey| -> usize {
        let in_violation = match *k {
            RowKey::Lease(l, _) | RowKey::Ops(l) => hot.iter().position(|&x| x == l),
            RowKey::Resource(r, _) => hot_res.iter().position(|&x| x == r),
        };
        in_violation.unwrap_or(usize::MAX)
    };
    // Group a lock's rows together, the lock's rank from its busiest row.
    let mut lock_weight: HashMap<Option<u32>, usize> = HashMap::new();
    for k in &rows {
        *lock_weight.entry(lock_of(k)).or_default() += activity[k];
    }
    rows.sort_by(|a, b| {
        let ka = (
            rank(a),
            std::cmp::Reverse(lock_weight[&lock_of(a)]),
            lock_of(a),
            *a,
        );
        let kb = (
            rank(b),
            std::cmp::Reverse(lock_weight[&lock_of(b)]),
            lock_of(b),
            *b,
        );
        ka.cmp(&kb)
    });
    let hidden_rows = rows.len().saturating_sub(MAX_ROWS);
    rows.truncate(MAX_ROWS);
    let row_of: HashMap<RowKey, usize> = rows.iter().enumerate().map(|(i, k)| (*k, i)).collect();
    let top = 40.0;
    let y = |i: usize| top + i as f64 * ROW_H;
    let height = top + rows.len().max(1) as f64 * ROW_H + 30.0;
    let width = LABEL_W + PLOT_W + 20.0;
    let red = hex(VIOLATION_RED);

    let mut svg = String::new();
    let _ = write!(
        svg,
        r#"<svg width="{width}" height="{height}" font-family="monospace" font-size="11">"#
    );
    // Axis.
    let span = (to - from) as f64;
    let step = nice_step(span / 10.0);
    let first_tick = ((from - t0) as f64 / step).ceil() as i64;
    let mut k = first_tick;
    loop {
        let t = t0 + (k as f64 * step) as i64;
        if t > to {
            break;
        }
        let xx = x(t);
        let _ = write!(
            svg,
            r##"<line x1="{xx:.1}" y1="{}" x2="{xx:.1}" y2="{}" stroke="#e4e4e4"/><text x="{xx:.1}" y="{}" text-anchor="middle" fill="#555">{}</text>"##,
            top - 6.0,
            height - 24.0,
            top - 10.0,
            esc(&w.at(t))
        );
        k += 1;
    }
    // Row backgrounds and labels.
    for (i, key) in rows.iter().enumerate() {
        let yy = y(i);
        let fill = if i % 2 == 0 { "#fafafa" } else { "#f2f2f2" };
        let _ = write!(
            svg,
            r#"<rect x="0" y="{yy}" width="{width}" height="{ROW_H}" fill="{fill}"/>"#
        );
        let label = match *key {
            RowKey::Lease(l, n) => {
                if h.nodes.len() > 1 {
                    format!("{} @ {}", w.lock(l), w.node(n))
                } else {
                    w.lock(l)
                }
            }
            RowKey::Ops(l) => format!("{} clients", w.lock(l)),
            RowKey::Resource(r, n) => {
                let base = format!("resource {}", quote(h.strings.get(r)));
                if h.nodes.len() > 1 {
                    format!("{base} @ {}", w.node(n))
                } else {
                    base
                }
            }
        };
        let short: String = if label.chars().count() > 32 {
            label.chars().take(31).collect::<String>() + "…"
        } else {
            label.clone()
        };
        let _ = write!(
            svg,
            r##"<text x="6" y="{}" fill="#222"><title>{}</title>{}</text>"##,
            yy + ROW_H / 2.0 + 4.0,
            esc(&label),
            esc(&short)
        );
    }
    // Node-wide marks: restarts, clock jumps, faults.
    for (i, r) in h.recs.iter().enumerate() {
        if r.real < from || r.real > to {
            continue;
        }
        let node_rows: Vec<usize> = rows
            .iter()
            .enumerate()
            .filter(|(_, k)| match k {
                RowKey::Lease(_, n) | RowKey::Resource(_, n) => *n == r.node,
                RowKey::Ops(_) => false,
            })
            .map(|(i, _)| i)
            .collect();
        let (color, label) = match &r.kind {
            RecKind::Restart { mode } => (
                "#e07b00",
                format!("restart {}", String::from_utf8_lossy(h.strings.get(*mode))),
            ),
            RecKind::Clock {
                from: f, to: t2, ..
            } if f != t2 => {
                let d = t2 - f;
                (
                    "#7b3fbf",
                    format!(
                        "clock {}{:.3}s",
                        if d >= 0 { "+" } else { "-" },
                        d.abs() as f64 / 1e6
                    ),
                )
            }
            RecKind::Fault { text } => (
                "#0077aa",
                format!("fault {}", String::from_utf8_lossy(h.strings.get(*text))),
            ),
            _ => continue,
        };
        let xx = x(r.real);
        let (y1, y2) = match (node_rows.first(), node_rows.last()) {
            (Some(&a), Some(&b)) => (y(a), y(b) + ROW_H),
            _ => (top, top + rows.len() as f64 * ROW_H),
        };
        let _ = write!(
            svg,
            r#"<g><title>{}</title><line x1="{xx:.1}" y1="{y1}" x2="{xx:.1}" y2="{y2}" stroke="{color}" stroke-width="2" stroke-dasharray="5,3"/><text x="{:.1}" y="{}" fill="{color}" font-size="10">{}</text></g>"#,
            esc(&w.rec(i)),
            xx + 3.0,
            y1 + 9.0,
            esc(&label)
        );
    }
    // Leases.
    for l in &leases.leases {
        let Some(&row) = row_of.get(&RowKey::Lease(l.lock, l.node)) else {
            continue;
        };
        if l.end_real < from || l.start_real > to {
            continue;
        }
        lease_bar(&mut svg, h, &colors, &w, l, y(row), &x, to);
    }
    // Where a holder could still count on a lease that ended early: a dashed band at the top
    // of the row, over whatever came next.
    for l in &leases.leases {
        let Some(&row) = row_of.get(&RowKey::Lease(l.lock, l.node)) else {
            continue;
        };
        if !(l.nominal_real > l.end_real && l.end_why.early() && l.granted) {
            continue;
        }
        if l.end_real > to || l.nominal_real < from {
            continue;
        }
        let (gx1, gx2) = (x(l.end_real), x(l.nominal_real.min(to)));
        let _ = write!(
            svg,
            r##"<g><title>{}</title><rect x="{gx1:.1}" y="{}" width="{:.1}" height="5" fill="{}" stroke="#222" stroke-width="1" stroke-dasharray="4,3"/></g>"##,
            esc(&format!(
                "{} could still count on it until {}",
                quote(h.strings.get(l.owner)),
                w.at(l.nominal_real)
            )),
            y(row) + 1.0,
            (gx2 - gx1).max(1.0),
            owner_color(&colors, l.owner)
        );
    }
    // Client ops and uses.
    for (i, o) in h.ops.iter().enumerate() {
        let Some(&row) = row_of.get(&RowKey::Ops(o.lock)) else {
            continue;
        };
        if o.complete < from || o.invoke > to {
            continue;
        }
        let (x1, x2) = (x(o.invoke), x(o.complete.min(to)));
        let yy = y(row);
        let color = owner_color(&colors, o.token);
        let (yo, hh, fill, stroke) = match o.op {
            OpKind::Use => (yy + 15.0, 10.0, color.clone(), "#333"),
            _ => (yy + 4.0, 9.0, "none".to_string(), "#333"),
        };
        let dash = match o.ok {
            Some(true) => "",
            Some(false) => r#" stroke-dasharray="2,2""#,
            None => r#" stroke-dasharray="6,2""#,
        };
        let _ = write!(
            svg,
            r#"<rect x="{x1:.1}" y="{yo}" width="{:.1}" height="{hh}" fill="{fill}" stroke="{stroke}" stroke-width="1"{dash}><title>{}</title></rect>"#,
            (x2 - x1).max(1.5),
            esc(&w.op(o))
        );
        if o.op != OpKind::Use && x2 - x1 > 30.0 {
            let _ = write!(
                svg,
                r##"<text x="{:.1}" y="{}" font-size="8" fill="#333">{} {}</text>"##,
                x1 + 2.0,
                yy + 11.0,
                esc(&String::from_utf8_lossy(h.strings.get(o.client))),
                o.op.as_str()
            );
        }
        let _ = i;
    }
    // Fenced writes.
    for (i, r) in h.recs.iter().enumerate() {
        let RecKind::Fenced {
            resource,
            token,
            accepted,
            client,
            ..
        } = r.kind
        else {
            continue;
        };
        let Some(&row) = row_of.get(&RowKey::Resource(resource, r.node)) else {
            continue;
        };
        if r.real < from || r.real > to {
            continue;
        }
        let owner = client
            .map(|c| h.clients[c as usize].1.name.clone())
            .unwrap_or_default();
        let color = if accepted { "#2b8a3e" } else { "#999" };
        let xx = x(r.real);
        let _ = write!(
            svg,
            r#"<g><title>{}</title><circle cx="{xx:.1}" cy="{}" r="5" fill="{color}"/><text x="{:.1}" y="{}" font-size="9">{}{}</text></g>"#,
            esc(&w.rec(i)),
            y(row) + ROW_H / 2.0,
            xx + 7.0,
            y(row) + ROW_H / 2.0 + 3.0,
            token,
            if owner.is_empty() {
                String::new()
            } else {
                format!(" {}", esc(&owner))
            }
        );
    }
    // Violations on top.
    for (n, v) in report.violations.iter().enumerate().take(50) {
        violation_mark(&mut svg, v, n + 1, &rows, &x, &y, &red, h);
    }
    svg.push_str("</svg>");

    // The page.
    let mut page = String::new();
    let verdict = match report.first() {
        Some(v) => format!(
            r#"<div class="verdict bad">VIOLATION: {}</div>"#,
            esc(&v.summary)
        ),
        None => r#"<div class="verdict good">No violation: no two holders, no stale token, every release and extension by its owner.</div>"#.to_string(),
    };
    let stories: String = report
        .violations
        .iter()
        .enumerate()
        .take(10)
        .map(|(i, v)| {
            format!(
                r#"<section class="story"><h2><span class="badge">{}</span> {}</h2><pre>{}</pre></section>"#,
                i + 1,
                esc(v.kind.title()),
                esc(&v.story)
            )
        })
        .collect();
    let more = if report.violations.len() > 10 {
        format!(
            "<p>{} more violations; <code>resplock check</code> lists them.</p>",
            report.violations.len() - 10
        )
    } else {
        String::new()
    };
    let start_clock = clock_text(t0);
    let _ = write!(
        page,
        r#"<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>resplock lock history</title>
<style>
body {{ font-family: sans-serif; margin: 16px; color: #222; background: #fff; }}
h1 {{ font-size: 18px; margin: 0 0 6px 0; }}
.summary {{ font-size: 12px; color: #555; margin-bottom: 8px; }}
.verdict {{ padding: 8px 12px; color: #fff; font-weight: bold; margin-bottom: 10px; }}
.verdict.bad {{ background: {red}; }}
.verdict.good {{ background: {green}; }}
.layout {{ display: flex; flex-wrap: wrap; align-items: flex-start; gap: 16px; }}
.timeline {{ overflow-x: auto; border: 1px solid #ddd; flex: 0 0 auto; }}
.stories {{ flex: 1 1 0; min-width: 380px; }}
.story h2 {{ font-size: 14px; margin: 4px 0; }}
.story pre {{ font-size: 11px; white-space: pre-wrap; background: #fbf3f3; border-left: 4px solid {red}; padding: 8px; margin: 0 0 12px 0; }}
.badge {{ display: inline-block; background: {red}; color: #fff; border-radius: 9px; padding: 0 6px; }}
.legend {{ font-size: 11px; color: #444; margin: 6px 0; }}
.legend span {{ margin-right: 14px; }}
</style></head><body>
<h1>resplock lock history</h1>
<div class="summary">{summary}. Times are real time since the first event ({start_clock} UTC). {note}{hidden}</div>
{verdict}
<div class="legend"><span>▮ a lease (one colour per owner)</span><span>╌ dashed band: its holder could still count on it</span><span>× TTL ran out</span><span style="color:#e07b00">┆ restart</span><span style="color:#7b3fbf">┆ clock jump</span><span style="color:#0077aa">┆ fault</span><span>▭ client op (dotted: refused, dashed: unknown)</span><span>▬ resource use</span><span style="color:#2b8a3e">● fenced write (grey: rejected)</span></div>
<div class="layout"><div class="timeline">{svg}</div><div class="stories">{stories}{more}</div></div>
</body></html>
"#,
        red = red,
        green = hex(CLEAN_GREEN),
        summary = esc(&report.summary()),
        hidden = if hidden_rows > 0 {
            format!(" {hidden_rows} quieter rows are not drawn.")
        } else {
            String::new()
        },
    );
    page
}

fn nice_step(raw: f64) -> f64 {
    let raw = raw.max(1.0);
    let mag = 10f64.powf(raw.log10().floor());
    for m in [1.0, 2.0, 5.0, 10.0] {
        if raw <= m * mag {
            return m * mag;
        }
    }
    10.0 * mag
}

#[allow(clippy::too_many_arguments)]
fn lease_bar(
    svg: &mut String,
    h: &History,
    colors: &HashMap<Sym, usize>,
    w: &Words<'_>,
    l: &Lease,
    yy: f64,
    x: &dyn Fn(i64) -> f64,
    to: i64,
) {
    let color = owner_color(colors, l.owner);
    let end = l.end_real.min(to);
    let (x1, x2) = (x(l.start_real), x(end));
    let title = esc(&w.lease_line(l));
    let _ = write!(
        svg,
        r##"<g><title>{title}</title><rect x="{x1:.1}" y="{}" width="{:.1}" height="{}" fill="{color}" stroke="#444" stroke-width="0.5"/>"##,
        yy + 5.0,
        (x2 - x1).max(1.5),
        ROW_H - 10.0
    );
    if x2 - x1 > 40.0 {
        let name = String::from_utf8_lossy(h.strings.get(l.owner));
        let max_chars = ((x2 - x1) / 7.0) as usize;
        let shown: String = if name.chars().count() > max_chars {
            name.chars()
                .take(max_chars.saturating_sub(1))
                .collect::<String>()
                + "…"
        } else {
            name.into_owned()
        };
        let _ = write!(
            svg,
            r##"<text x="{:.1}" y="{}" fill="#111" font-size="10">{}</text>"##,
            x1 + 3.0,
            yy + ROW_H / 2.0 + 3.5,
            esc(&shown)
        );
    }
    if matches!(l.end_why, End::Expired | End::ClockJump) && l.end_real <= to {
        let _ = write!(
            svg,
            r##"<text x="{:.1}" y="{}" fill="#333" font-size="12">×</text>"##,
            x2 - 3.5,
            yy + 4.5
        );
    }
    svg.push_str("</g>");
}

#[allow(clippy::too_many_arguments)]
fn violation_mark(
    svg: &mut String,
    v: &Violation,
    n: usize,
    rows: &[RowKey],
    x: &dyn Fn(i64) -> f64,
    y: &dyn Fn(usize) -> f64,
    red: &str,
    h: &History,
) {
    let m = &v.mark;
    let hit: Vec<usize> = rows
        .iter()
        .enumerate()
        .filter(|(_, k)| match **k {
            RowKey::Lease(l, node) => {
                m.lock == Some(l) && (m.nodes.is_empty() || m.nodes.contains(&node))
            }
            RowKey::Ops(l) => m.lock == Some(l) && !m.ops.is_empty(),
            RowKey::Resource(r, _) => m.resource == Some(r),
        })
        .map(|(i, _)| i)
        .collect();
    let (Some(&a), Some(&b)) = (hit.first(), hit.last()) else {
        return;
    };
    let (y1, y2) = (y(a), y(b) + ROW_H);
    let (x1, x2) = (x(m.from_real), x(m.to_real));
    let title = esc(&v.summary);
    // The events of its story, ringed on their rows.
    for &i in &m.recs {
        let r = &h.recs[i];
        let row = rows.iter().position(|k| match (*k, &r.kind) {
            (RowKey::Lease(l, n), RecKind::Key { lock, .. }) => l == *lock && n == r.node,
            (RowKey::Resource(res, n), RecKind::Fenced { resource, .. }) => {
                res == *resource && n == r.node
            }
            (RowKey::Lease(_, n), RecKind::Clock { .. } | RecKind::Restart { .. }) => {
                n == r.node && m.nodes.contains(&n)
            }
            _ => false,
        });
        if let Some(row) = row {
            let _ = write!(
                svg,
                r#"<circle cx="{:.1}" cy="{:.1}" r="6" fill="none" stroke="{red}" stroke-width="2"/>"#,
                x(r.real),
                y(row) + ROW_H / 2.0
            );
        }
    }
    let _ = write!(
        svg,
        r##"<g><title>{title}</title><rect x="{x1:.1}" y="{y1}" width="{:.1}" height="{:.1}" fill="{red}" fill-opacity="0.12" stroke="{red}" stroke-width="1.5"/><line x1="{x2:.1}" y1="{y1}" x2="{x2:.1}" y2="{y2}" stroke="{red}" stroke-width="3"/><circle cx="{x2:.1}" cy="{}" r="8" fill="{red}"/><text x="{x2:.1}" y="{}" fill="#fff" font-size="10" text-anchor="middle" font-weight="bold">{n}</text></g>"##,
        (x2 - x1).max(2.0),
        y2 - y1,
        y1 + 2.0,
        y1 + 5.5
    );
}

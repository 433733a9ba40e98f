//! RESP2/RESP3 frames as the tester sees them: their length in a buffer, a tree that keeps
//! every byte (so a normalized reply encodes back exactly), and a visible form for messages.

/// Length of the first complete RESP2/RESP3 frame in `b`, if complete. Unlike the shared
/// helper it accepts any bytes on a status or error line (Redis sends arguments raw there).
pub fn frame_len(b: &[u8]) -> Option<usize> {
    fn one(b: &[u8], pos: usize) -> Option<usize> {
        let t = *b.get(pos)?;
        let eol = pos + b[pos..].windows(2).position(|w| w == b"\r\n")?;
        let next = eol + 2;
        let num = || -> Option<i64> { std::str::from_utf8(&b[pos + 1..eol]).ok()?.parse().ok() };
        match t {
            b'+' | b'-' | b':' | b'_' | b',' | b'#' | b'(' => Some(next),
            b'$' | b'=' | b'!' => {
                let n = num()?;
                if n < 0 {
                    return Some(next);
                }
                let end = next + n as usize + 2;
                (b.len() >= end).then_some(end)
            }
            b'*' | b'~' | b'>' | b'%' | b'|' => {
                let n = num()?;
                let n = if t == b'%' || t == b'|' { n * 2 } else { n };
                let mut p = next;
                for _ in 0..n.max(0) {
                    p = one(b, p)?;
                }
                Some(p)
            }
            _ => None,
        }
    }
    one(b, 0)
}

/// One frame. Lines keep their text, aggregates their children (a map's as key, value, key,
/// value...), so `encode(parse(b)) == b`.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum V {
    /// `+ - : _ , # (` and their text.
    Line(u8, Vec<u8>),
    /// `$ = !` and the payload (None: `$-1`).
    Bulk(u8, Option<Vec<u8>>),
    /// `* ~ > % |` and the children (None: `*-1`).
    Agg(u8, Option<Vec<V>>),
}

impl V {
    pub fn ty(&self) -> u8 {
        match self {
            V::Line(t, _) | V::Bulk(t, _) | V::Agg(t, _) => *t,
        }
    }

    pub fn is_error(&self) -> bool {
        matches!(self, V::Line(b'-', _) | V::Bulk(b'!', _))
    }

    /// The bytes of a bulk or line payload.
    pub fn text(&self) -> Option<&[u8]> {
        match self {
            V::Line(_, t) => Some(t),
            V::Bulk(_, Some(t)) => Some(t),
            _ => None,
        }
    }

    pub fn items(&self) -> Option<&[V]> {
        match self {
            V::Agg(_, Some(c)) => Some(c),
            _ => None,
        }
    }

    pub fn items_mut(&mut self) -> Option<&mut Vec<V>> {
        match self {
            V::Agg(_, Some(c)) => Some(c),
            _ => None,
        }
    }

    pub fn bulk(s: &[u8]) -> V {
        V::Bulk(b'$', Some(s.to_vec()))
    }

    /// A map (RESP3 `%`) or, in RESP2, a flat array of pairs: the value after `key`.
    pub fn field(&self, key: &[u8]) -> Option<&V> {
        let items = self.items()?;
        items
            .chunks(2)
            .find(|p| p[0].text() == Some(key))
            .and_then(|p| p.get(1))
    }

    pub fn field_mut(&mut self, key: &[u8]) -> Option<&mut V> {
        let items = self.items_mut()?;
        let i = items.chunks(2).position(|p| p[0].text() == Some(key))?;
        items.get_mut(i * 2 + 1)
    }
}

/// The frame at the start of `b` and its length.
pub fn parse_at(b: &[u8], pos: usize) -> Option<(V, usize)> {
    let t = *b.get(pos)?;
    let eol = pos + b[pos..].windows(2).position(|w| w == b"\r\n")?;
    let text = &b[pos + 1..eol];
    let next = eol + 2;
    let num = || -> Option<i64> { std::str::from_utf8(text).ok()?.parse().ok() };
    match t {
        b'+' | b'-' | b':' | b'_' | b',' | b'#' | b'(' => Some((V::Line(t, text.to_vec()), next)),
        b'$' | b'=' | b'!' => {
            let n = num()?;
            if n < 0 {
                return Some((V::Bulk(t, None), next));
            }
            let end = next + n as usize;
            let payload = b.get(next..end)?.to_vec();
            Some((V::Bulk(t, Some(payload)), end + 2))
        }
        b'*' | b'~' | b'>' | b'%' | b'|' => {
            let n = num()?;
            if n < 0 {
                return Some((V::Agg(t, None), next));
            }
            let n = if t == b'%' || t == b'|' { n * 2 } else { n };
            let mut p = next;
            let mut items = Vec::with_capacity(n as usize);
            for _ in 0..n {
                let (v, q) = parse_at(b, p)?;
                items.push(v);
                p = q;
            }
            Some((V::Agg(t, Some(items)), p))
        }
        _ => None,
    }
}

/// `b` as one frame (None if it is not exactly one).
pub fn parse(b: &[u8]) -> Option<V> {
    match parse_at(b, 0) {
        Some((v, n)) if n == b.len() => Some(v),
        _ => None,
    }
}

/// Every frame in `b`, in order (stops at the first incomplete one).
pub fn parse_all(b: &[u8]) -> Vec<V> {
    let mut out = Vec::new();
    let mut p = 0;
    while p < b.len() {
        match parse_at(b, p) {
            Some((v, q)) => {
                out.push(v);
                p = q;
            }
            None => break,
        }
    }
    out
}

pub fn encode_into(v: &V, out: &mut Vec<u8>) {
    match v {
        V::Line(t, s) => {
            out.push(*t);
            out.extend_from_slice(s);
            out.extend_from_slice(b"\r\n");
        }
        V::Bulk(t, None) => {
            out.push(*t);
            out.extend_from_slice(b"-1\r\n");
        }
        V::Bulk(t, Some(s)) => {
            out.push(*t);
            out.extend_from_slice(format!("{}\r\n", s.len()).as_bytes());
            out.extend_from_slice(s);
            out.extend_from_slice(b"\r\n");
        }
        V::Agg(t, None) => {
            out.push(*t);
            out.extend_from_slice(b"-1\r\n");
        }
        V::Agg(t, Some(items)) => {
            out.push(*t);
            let n = if *t == b'%' || *t == b'|' {
                items.len() / 2
            } else {
                items.len()
            };
            out.extend_from_slice(format!("{n}\r\n").as_bytes());
            for i in items {
                encode_into(i, out);
            }
        }
    }
}

pub fn encode(v: &V) -> Vec<u8> {
    let mut out = Vec::new();
    encode_into(v, &mut out);
    out
}

/// Visible one-line form of bytes.
pub fn show(b: &[u8]) -> String {
    let mut s = String::new();
    for &c in b {
        match c {
            b'\r' => s.push_str("\\r"),
            b'\n' => s.push_str("\\n"),
            b'"' => s.push_str("\\\""),
            b'\\' => s.push_str("\\\\"),
            0x20..=0x7e => s.push(c as char),
            _ => s.push_str(&format!("\\x{c:02x}")),
        }
    }
    s
}

/// A command as `"ARG" "ARG"`.
pub fn show_cmd(args: &[Vec<u8>]) -> String {
    args.iter()
        .map(|a| format!("\"{}\"", show(a)))
        .collect::<Vec<_>>()
        .join(" ")
}

/// A command as a `.case` file writes it (redis-cli's quoting): bare words where possible.
pub fn case_cmd(args: &[Vec<u8>]) -> String {
    args.iter()
        .map(|a| {
            let bare = !a.is_empty()
                && a.iter()
                    .all(|&c| c.is_ascii_graphic() && !matches!(c, b'"' | b'\'' | b'\\'));
            if bare {
                String::from_utf8_lossy(a).into_owned()
            } else {
                format!("\"{}\"", show(a))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// The integer of a `:` line (or a bulk holding one).
pub fn int_of(v: &V) -> Option<i64> {
    std::str::from_utf8(v.text()?).ok()?.parse().ok()
}

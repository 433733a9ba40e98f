//! LCS: the longest common subsequence of two strings, by Redis's dynamic-programming table
//! (so the same match ranges come out for ties), with LEN, IDX, MINMATCHLEN and WITHMATCHLEN.

use crate::cmd::base::args::{self, is, Args};
use crate::cmd::families::strings::note_read;
use crate::cmd::runtime::state::Ctx;
use crate::cmd::runtime::table::Row;
use crate::error::{self, RedisError};
use crate::keyspace::Value;
use crate::reply::{CmdResult, Reply};
use bytes::Bytes;

pub const COMMANDS: &[Row] = &[Row::new("lcs", lcs)];

/// The string at `key` for LCS: Ok(None) if missing, Err(()) if another type.
fn lookup(ctx: &Ctx, key: &[u8]) -> Result<Option<Bytes>, ()> {
    let found = ctx
        .db()
        .lock(key)
        .get(key, ctx.now)
        .map(|e| match &e.value {
            Value::Str(s) => Ok(s.clone()),
            _ => Err(()),
        });
    note_read(ctx, key, found.is_some());
    found.transpose()
}

fn lcs(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    // Both keys are looked up first; the type check covers both at once.
    let sa = lookup(ctx, &a[1]);
    let sb = lookup(ctx, &a[2]);
    let (Ok(sa), Ok(sb)) = (sa, sb) else {
        return Err(RedisError::new(error::LCS_NOT_STRINGS));
    };
    let (sa, sb) = (sa.unwrap_or_default(), sb.unwrap_or_default());
    let (mut getlen, mut getidx, mut withmatchlen) = (false, false, false);
    let mut minmatchlen: i64 = 0;
    let mut args = Args::new(a, 3);
    while let Some(opt) = args.next() {
        if is(opt, "idx") {
            getidx = true;
        } else if is(opt, "len") {
            getlen = true;
        } else if is(opt, "withmatchlen") {
            withmatchlen = true;
        } else if let Some(n) = args.value_of(opt, "minmatchlen") {
            minmatchlen = args::int(n)?.max(0);
        } else {
            return Err(RedisError::new(error::SYNTAX));
        }
    }
    if getlen && getidx {
        return Err(RedisError::new(error::LCS_LEN_AND_IDX));
    }
    if sa.len() as u64 >= u32::MAX as u64 - 1 || sb.len() as u64 >= u32::MAX as u64 - 1 {
        return Err(RedisError::new(error::LCS_TOO_LONG));
    }
    let (alen, blen) = (sa.len(), sb.len());
    let cells = (alen as u64 + 1) * (blen as u64 + 1);
    if cells.saturating_mul(4) > ctx.state.config.read().proto_max_bulk_len {
        return Err(RedisError::new(error::LCS_TABLE_TOO_BIG));
    }
    let table = Table::build(&sa, &sb).ok_or(RedisError::new(error::LCS_ALLOC_FAILED))?;
    let total = table.at(alen, blen);
    if getlen {
        return Ok(Reply::Int(total as i64));
    }
    let (result, matches) = table.walk(&sa, &sb, getidx, minmatchlen as u64, withmatchlen);
    if !getidx {
        return Ok(Reply::Bulk(Bytes::from(result)));
    }
    Ok(Reply::Map(vec![
        (Reply::bulk_str("matches"), Reply::Array(matches)),
        (Reply::bulk_str("len"), Reply::Int(total as i64)),
    ]))
}

/// LCS(i, j): the length of the LCS of the first i bytes of A and the first j of B.
struct Table {
    cells: Vec<u32>,
    width: usize,
}

impl Table {
    /// None if the table cannot be allocated (Redis's ztrymalloc failing).
    fn build(a: &[u8], b: &[u8]) -> Option<Table> {
        let width = b.len() + 1;
        let n = (a.len() + 1) * width;
        let mut cells = Vec::new();
        cells.try_reserve_exact(n).ok()?;
        cells.resize(n, 0u32);
        for i in 1..=a.len() {
            for j in 1..=b.len() {
                cells[i * width + j] = if a[i - 1] == b[j - 1] {
                    cells[(i - 1) * width + j - 1] + 1
                } else {
                    cells[(i - 1) * width + j].max(cells[i * width + j - 1])
                };
            }
        }
        Some(Table { cells, width })
    }

    fn at(&self, i: usize, j: usize) -> u32 {
        self.cells[i * self.width + j]
    }

    /// Walk back from the end as Redis does: the LCS itself, and the IDX match ranges (from
    /// the end of the strings backwards) when asked.
    fn walk(
        &self,
        a: &[u8],
        b: &[u8],
        getidx: bool,
        minmatchlen: u64,
        withmatchlen: bool,
    ) -> (Vec<u8>, Vec<Reply>) {
        let (alen, blen) = (a.len(), b.len());
        let mut idx = self.at(alen, blen) as usize;
        let mut result = vec![0u8; idx];
        let mut matches = Vec::new();
        // `alen` as the start means "no range open".
        let (mut a_start, mut a_end, mut b_start, mut b_end) = (alen, 0usize, 0usize, 0usize);
        let (mut i, mut j) = (alen, blen);
        while i > 0 && j > 0 {
            let mut emit = false;
            if a[i - 1] == b[j - 1] {
                result[idx - 1] = a[i - 1];
                if a_start == alen {
                    (a_start, a_end, b_start, b_end) = (i - 1, i - 1, j - 1, j - 1);
                } else if a_start == i && b_start == j {
                    a_start -= 1;
                    b_start -= 1;
                } else {
                    emit = true;
                }
                if a_start == 0 || b_start == 0 {
                    emit = true;
                }
                idx -= 1;
                i -= 1;
                j -= 1;
            } else {
                if self.at(i - 1, j) > self.at(i, j - 1) {
                    i -= 1;
                } else {
                    j -= 1;
                }
                if a_start != alen {
                    emit = true;
                }
            }
            if emit {
                let len = (a_end - a_start + 1) as u64;
                if getidx && (minmatchlen == 0 || len >= minmatchlen) {
                    let range = |s: usize, e: usize| {
                        Reply::Array(vec![Reply::Int(s as i64), Reply::Int(e as i64)])
                    };
                    let mut m = vec![range(a_start, a_end), range(b_start, b_end)];
                    if withmatchlen {
                        m.push(Reply::Int(len as i64));
                    }
                    matches.push(Reply::Array(m));
                }
                a_start = alen;
            }
        }
        (result, matches)
    }
}

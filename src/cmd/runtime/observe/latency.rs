//! Latency events as Redis's latency.c keeps them: per event class (`command`,
//! `fast-command`, `expire-cycle`, `expire-del`), the samples of the last seconds and the
//! worst ever. Sampled by `observe::add_sample_if_needed`; the LATENCY command reads them
//! (`families/latency.rs`).

use std::collections::BTreeMap;

/// Samples kept per event (Redis's LATENCY_TS_LEN).
pub const TS_LEN: usize = 160;

/// One event's samples: (unix seconds, ms), oldest first; and its all-time worst.
#[derive(Default)]
pub struct Series {
    pub samples: Vec<(i64, u64)>,
    pub max: u64,
}

/// Every event class seen since the last reset.
pub type Events = BTreeMap<String, Series>;

//! Test controls: what a test (over the wire through the `RESPLOCK.*` family, or through the
//! embedding API) does to a server beyond commands: commands run without a client
//! (`direct`), the clock moved, snapshots and restarts, faults acted on, the lock history
//! read and the fenced resource written (`history`), and an in-process cluster's slots
//! migrated, masters failed and nodes partitioned (`cluster`).

pub mod cluster;
pub mod dataset;
pub mod direct;
pub mod faults;
pub mod history;

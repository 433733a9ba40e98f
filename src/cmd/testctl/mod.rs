//! Test controls: what a test (over the wire through the `RESPLOCK.*` family, or through the
//! embedding API) does to a server beyond commands: commands run without a client
//! (`direct`), the clock moved, snapshots and restarts, faults acted on.

pub mod dataset;
pub mod direct;
pub mod faults;

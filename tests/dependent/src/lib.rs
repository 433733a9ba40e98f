//! Nothing: this crate exists for its tests (tests/lock.rs).

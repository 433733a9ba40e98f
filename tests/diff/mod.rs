//! The differential tester's parts (see `tests/differential.rs` for the modes and how to run
//! them).
#![allow(dead_code)]

pub mod acl;
pub mod classic;
pub mod conn;
pub mod gen;
pub mod norm;
pub mod proc;
pub mod resp;
pub mod run;
pub mod scenario;
pub mod spec;

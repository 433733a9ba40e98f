//! Cluster mode: a node of `--cluster N` (`ServerState::cluster` is Some). The state a node
//! keeps and what the nodes share (`registry`), the keys a command is routed by (`keys`),
//! where a request runs (`route`), the replication feed (`feed` on the master, `follow` on
//! the replica), the operations across nodes (`ops`), and what the command path calls
//! (`hooks`: every command on a node, the checks of a script's `redis.call`s, PUBLISH to
//! the other nodes).
//!
//! Outside cluster mode none of this runs: `call` and the request path test
//! `ServerState::cluster` once.

pub mod feed;
pub mod follow;
pub mod hooks;
pub mod keys;
pub mod ops;
pub mod registry;
pub mod route;

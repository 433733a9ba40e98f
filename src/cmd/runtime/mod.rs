//! What every command runs on: the rows and the table (`table`), the server's state and a
//! command's view of it (`state`: `ServerState`, `Ctx`), clients (`client`), [`call::call`],
//! typed access to values (`typed`), the server lock (`lock`), and the server's
//! subsystems: ACL, blocked clients, WATCH, client tracking, CLIENT PAUSE, eviction,
//! keyspace events, observation (statistics, slow log, latency, MONITOR), the fault table and
//! the lock history's recording, and
//! cluster mode.
//!
//! `ServerState` holds every subsystem's state, and a subsystem's operations take the
//! `ServerState`; so the state a subsystem keeps is a type that names nothing else of this
//! layer but leaves (see ARCHITECTURE.md), and tests/layers.rs refuses circles of more than
//! two files.

pub mod acl;
pub mod blocking;
pub mod call;
pub mod client;
pub mod client_limits;
pub mod client_mem;
pub mod clients;
pub mod cluster;
pub mod cron;
pub mod debug_conn;
pub mod evict;
pub mod fault_table;
pub mod handoff;
pub mod keyspace_events;
pub mod lazyfree;
pub mod listeners;
pub mod lock;
pub mod lock_history;
pub mod migrate;
pub mod observe;
pub mod oom;
pub mod pause;
pub mod persist;
pub mod proc_title;
pub mod propagate;
pub mod replication;
pub mod restart_delay;
pub mod script_flags;
pub mod script_runner;
pub mod shutdown;
pub mod startup;
pub mod state;
pub mod table;
pub mod tracking;
pub mod typed;
pub mod watch;

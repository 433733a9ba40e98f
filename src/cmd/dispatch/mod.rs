//! A request's way in from a connection, one job per file: Redis's processCommand checks in
//! order (`execute`), fault injection (`fault_injection`), MULTI queuing (`multi_queue`),
//! taking the server lock (`acquire`), and script rows (`scripts`); then the command through
//! `runtime::call`.

pub mod acquire;
pub mod cluster;
pub mod execute;
pub mod fault_injection;
pub mod multi_queue;
pub mod network;
pub mod scripts;

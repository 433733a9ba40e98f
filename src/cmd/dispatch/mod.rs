//! A request's way in from a connection: Redis's processCommand checks in order, MULTI
//! queuing, fault injection, the server lock, then the command through `runtime::call`.

pub mod cluster;
pub mod execute;

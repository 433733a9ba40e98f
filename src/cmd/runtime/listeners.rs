//! The seam between CONFIG SET `port`/`tls-port`/`bind` and the listening sockets, which
//! belong to `server/` (above the commands): the server installs a [`Listeners`] when it
//! starts, and CONFIG SET asks it to listen again, as Redis's changeListenPort and
//! changeBindAddr do, synchronously under the server lock. A server without one (a state
//! driven without sockets) refuses every change as Redis refuses one it cannot apply.

use crate::config::Config;

/// Which listeners a configuration change moves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Change {
    /// `port`: the TCP listeners, on every bind address (port 0: none).
    Port,
    /// `tls-port`: the TLS listeners, on every bind address (port 0: none).
    TlsPort,
    /// `bind`: both the TCP and the TLS listeners, on the new addresses.
    Bind,
}

/// The new sockets could not be opened (the log says why, as Redis's does).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CannotListen;

/// What CONFIG SET needs of the sockets.
pub trait Listeners: Send + Sync {
    /// Close the listeners `change` names and open them again as `config` says. On `Err`
    /// nothing listens for them (Redis closes first too); the caller then restores the old
    /// configuration by calling this again with it.
    fn relisten(&self, change: Change, config: &Config) -> Result<(), CannotListen>;

    /// Stop listening on every socket at once (the server shuts down): the port refuses
    /// connections from then on, even while other servers of the process keep running.
    fn close_all(&self);
}

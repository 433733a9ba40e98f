//! The server's side of the process title (`crate::proctitle` writes it): what
//! `proc-title-template` gives for this server, shown at start and again when the template
//! changes (CONFIG SET), as redis-server's redisSetProcTitle.

use crate::cmd::runtime::state::ServerState;

/// Show the title the configuration gives now (nothing unless the process took its command
/// line over, see `crate::proctitle::enable`).
pub fn refresh(state: &ServerState) {
    let argv0 = crate::proctitle::argv0().unwrap_or("resplock");
    let cluster = state.cluster.is_some();
    if let Some(title) = state.config.read().proc_title(argv0, cluster) {
        crate::proctitle::set(&title);
    }
}

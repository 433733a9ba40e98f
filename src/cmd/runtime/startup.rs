//! What a server wires up once its state exists: the aclfile's users, shutdown's wake-ups,
//! and the keyspace's event hook (expired keys -> notifications, tracking, WATCH; new keys;
//! keys ready for blocked clients).

use crate::cmd::runtime::acl;
use crate::cmd::runtime::blocking;
use crate::cmd::runtime::keyspace_events as notify;
use crate::cmd::runtime::lock_history;
use crate::cmd::runtime::state::ServerState;
use crate::cmd::runtime::tracking;
use crate::cmd::runtime::watch;
use crate::keyspace::KeyEvent;
use bytes::Bytes;

/// Wire up a new server: every subsystem that keeps server-wide state registers it here.
pub fn on_server_start(state: &std::sync::Arc<ServerState>) {
    // Background saves and rewrites run on threads that hold the server.
    let _ = state.persist.server.set(std::sync::Arc::downgrade(state));
    // The process's OOM score, when the configuration adjusts it (setOOMScoreAdj at start).
    if let Err(e) = crate::cmd::runtime::oom::apply(&state.config.read()) {
        crate::log::warning(&e);
    }
    // The configuration's `user` lines, then the aclfile's users, as redis-server loads them
    // at start.
    if let Err(e) = acl::load_configured_users(state) {
        crate::log::warning(&e);
    }
    if let Err(e) = acl::load_file(state, None) {
        crate::log::warning(&e.to_string());
    }
    // Shutdown wakes every connection through its doorbell (connections wait on nothing
    // shared, see `crate::wake`); a connection made later sees the flag before it waits.
    let weak = std::sync::Arc::downgrade(state);
    state.shutdown.on_cancel(Box::new(move || {
        if let Some(s) = weak.upgrade() {
            for c in s.clients.lock().values() {
                c.kill.bell().ring();
            }
        }
    }));
    // Active and lazy expiry report removed keys here: publish `expired` events. Weak, so the
    // keyspace's hook does not keep its own server alive.
    let weak = std::sync::Arc::downgrade(state);
    state
        .keyspace
        .set_event_hook(Box::new(move |db, key: &Bytes, event| {
            if let Some(s) = weak.upgrade() {
                match event {
                    KeyEvent::Expired => {
                        crate::cmd::runtime::propagate::expired(&s, db, key);
                        notify::keyspace_event(&s, notify::EXPIRED, "expired", key, db);
                        crate::cmd::runtime::cluster::feed::expired(&s, db, key);
                        tracking::key_modified(&s, 0, key);
                        watch::key_expired(&s, db, key);
                        if lock_history::on(&s) {
                            lock_history::removed(&s, db, key, false);
                        }
                        // An expired stream fails its blocked group readers, as a deleted
                        // one does (deleteExpiredKeyAndPropagate signals the key).
                        blocking::key_ready(&s, db, key);
                    }
                    KeyEvent::New => notify::keyspace_event(&s, notify::NEW, "new", key, db),
                    KeyEvent::Ready => blocking::key_ready(&s, db, key),
                }
            }
        }));
    // `replicaof` in the configuration: the link to the master starts now.
    crate::cmd::runtime::replication::role::start_from_config(state);
}

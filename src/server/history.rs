//! The lock history from the embedding API: turn recording on, read what was recorded (one
//! history for a `start_many` group), start over. See `resplock::history` for checking it.

use super::backend::Backend;
use crate::history::History;

impl Backend {
    /// The lock history recorded so far, as `resplock check` reads it: this server's, or
    /// every node's of a [`start_many`](super::start_many) group (named by their addresses). Recording
    /// runs while the configuration's `lock_history` is on (or [`Backend::record_history`]).
    ///
    /// ```
    /// # let server = resplock::BlockingServer::start(resplock::Config {
    /// #     lock_history: true, ..resplock::Config::ephemeral() }).unwrap();
    /// server.db(0).command(&["SET", "lock:a", "t1", "NX", "PX", "30000"]);
    /// server.db(0).command(&["DEL", "lock:a"]);
    /// let history = server.history();
    /// assert_eq!(history.len(), 2);
    /// assert!(history.check(&Default::default()).is_clean());
    /// ```
    pub fn history(&self) -> History {
        crate::cmd::testctl::history::export(self.server_state())
    }

    /// Start (or stop) recording the lock history, as `CONFIG SET lock-history yes|no`.
    ///
    /// ```
    /// let server = resplock::BlockingServer::start(resplock::Config::ephemeral()).unwrap();
    /// server.db(0).command(&["SET", "lock:a", "t1", "NX"]);
    /// assert!(server.history().is_empty());
    /// server.record_history(true);
    /// server.db(0).command(&["SET", "lock:b", "t1", "NX"]);
    /// assert_eq!(server.history().len(), 1);
    /// ```
    pub fn record_history(&self, on: bool) {
        let state = self.server_state();
        state.config.write().lock_history = on;
        state.config_changed();
    }

    /// Forget the history recorded so far (of this server only).
    ///
    /// ```
    /// # let server = resplock::BlockingServer::start(resplock::Config {
    /// #     lock_history: true, ..resplock::Config::ephemeral() }).unwrap();
    /// server.db(0).command(&["SET", "lock:a", "t1", "NX"]);
    /// server.clear_history();
    /// assert!(server.history().is_empty());
    /// ```
    pub fn clear_history(&self) {
        crate::cmd::testctl::history::reset(self.server_state());
    }
}

//! Recording what a test's clients did to their locks, in the client-ops format: lock
//! libraries do not tell the server when a critical section starts and ends, so the test
//! does, around each call.

use super::event::{ClientOp, History, OpKind};
use parking_lot::Mutex;
use std::sync::Arc;

fn now_us() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_micros() as i64)
        .unwrap_or(0)
}

/// Collects client operations from any number of threads or tasks; clones share one log.
///
/// ```
/// use resplock::history::{ClientRecorder, OpKind};
/// let rec = ClientRecorder::new();
/// let call = rec.begin("worker-1", OpKind::Acquire, "lock:a").token("t1").ttl_ms(30_000);
/// let acquired = true; // ... SET lock:a t1 NX PX 30000 ...
/// call.end(Some(acquired));
/// rec.begin("worker-1", OpKind::Release, "lock:a").token("t1").end(Some(true));
/// assert_eq!(rec.len(), 2);
/// assert!(rec.history().check(&Default::default()).is_clean());
/// ```
#[derive(Clone, Default, Debug)]
pub struct ClientRecorder {
    ops: Arc<Mutex<Vec<ClientOp>>>,
}

/// An operation under way: its invoke time is taken; [`OpCall::end`] takes the completion
/// time and the result. Dropped without `end`, it is recorded as never returned (a crashed
/// client).
///
/// ```
/// use resplock::history::{ClientRecorder, OpKind};
/// let rec = ClientRecorder::new();
/// drop(rec.begin("w", OpKind::Acquire, "l").ttl_ms(100)); // the client died mid-call
/// assert_eq!(rec.ops()[0].complete_us, None);
/// ```
#[derive(Debug)]
pub struct OpCall {
    rec: ClientRecorder,
    op: Option<ClientOp>,
}

impl ClientRecorder {
    /// An empty recorder.
    ///
    /// ```
    /// assert!(resplock::history::ClientRecorder::new().is_empty());
    /// ```
    pub fn new() -> ClientRecorder {
        ClientRecorder::default()
    }

    /// Starts an operation of `client` on `lock` now.
    ///
    /// ```
    /// use resplock::history::{ClientRecorder, OpKind};
    /// let rec = ClientRecorder::new();
    /// rec.begin("w", OpKind::Use, "l").resource("file").fence(34).end(Some(true));
    /// assert_eq!(rec.ops()[0].fence, Some(34));
    /// ```
    pub fn begin(&self, client: &str, op: OpKind, lock: impl AsRef<[u8]>) -> OpCall {
        OpCall {
            rec: self.clone(),
            op: Some(ClientOp {
                client: client.to_string(),
                lock: lock.as_ref().to_vec(),
                op,
                invoke_us: now_us(),
                ..ClientOp::default()
            }),
        }
    }

    /// Adds a finished operation as it is.
    ///
    /// ```
    /// use resplock::history::{ClientOp, ClientRecorder};
    /// let rec = ClientRecorder::new();
    /// rec.record(ClientOp { client: "w".into(), lock: b"l".to_vec(), ..Default::default() });
    /// assert_eq!(rec.len(), 1);
    /// ```
    pub fn record(&self, op: ClientOp) {
        self.ops.lock().push(op);
    }

    /// The operations so far, in the order they ended.
    ///
    /// ```
    /// assert!(resplock::history::ClientRecorder::new().ops().is_empty());
    /// ```
    pub fn ops(&self) -> Vec<ClientOp> {
        self.ops.lock().clone()
    }

    /// How many operations it holds.
    ///
    /// ```
    /// assert_eq!(resplock::history::ClientRecorder::new().len(), 0);
    /// ```
    pub fn len(&self) -> usize {
        self.ops.lock().len()
    }

    /// Whether it holds none.
    ///
    /// ```
    /// assert!(resplock::history::ClientRecorder::default().is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The operations as a history of their own (add the server's events with
    /// [`History::add_json_lines`] or [`History::push`]).
    ///
    /// ```
    /// use resplock::history::{ClientRecorder, OpKind};
    /// let rec = ClientRecorder::new();
    /// rec.begin("w", OpKind::Acquire, "l").ttl_ms(10).end(Some(true));
    /// assert_eq!(rec.history().op_count(), 1);
    /// ```
    pub fn history(&self) -> History {
        let mut h = History::new();
        for op in self.ops() {
            h.push_op(op);
        }
        h
    }

    /// The operations as JSON lines (the file `resplock check` takes as CLIENT-OPS).
    ///
    /// ```
    /// use resplock::history::{ClientRecorder, OpKind};
    /// let rec = ClientRecorder::new();
    /// rec.begin("w", OpKind::Release, "l").end(Some(false));
    /// let text = String::from_utf8(rec.to_json_lines()).unwrap();
    /// assert!(text.starts_with("{\"op\":\"release\",\"client\":\"w\",\"lock\":\"l\""));
    /// ```
    pub fn to_json_lines(&self) -> Vec<u8> {
        self.history().to_json_lines()
    }
}

impl OpCall {
    fn op(&mut self) -> &mut ClientOp {
        self.op.as_mut().expect("an unfinished op")
    }

    /// The client's owner token for the lock.
    ///
    /// ```
    /// # use resplock::history::{ClientRecorder, OpKind};
    /// let rec = ClientRecorder::new();
    /// rec.begin("w", OpKind::Acquire, "l").token("3f9c1").end(None);
    /// assert_eq!(rec.ops()[0].token, b"3f9c1");
    /// ```
    pub fn token(mut self, token: impl AsRef<[u8]>) -> OpCall {
        self.op().token = token.as_ref().to_vec();
        self
    }

    /// The lease asked for, ms.
    ///
    /// ```
    /// # use resplock::history::{ClientRecorder, OpKind};
    /// let rec = ClientRecorder::new();
    /// rec.begin("w", OpKind::Extend, "l").ttl_ms(5_000).end(Some(true));
    /// assert_eq!(rec.ops()[0].ttl_ms, Some(5_000));
    /// ```
    pub fn ttl_ms(mut self, ms: i64) -> OpCall {
        self.op().ttl_ms = Some(ms);
        self
    }

    /// An extension that adds `ms` to the remaining lease.
    ///
    /// ```
    /// # use resplock::history::{ClientRecorder, OpKind};
    /// let rec = ClientRecorder::new();
    /// rec.begin("w", OpKind::Extend, "l").add_ms(1_000).end(Some(true));
    /// assert_eq!(rec.ops()[0].add_ms, Some(1_000));
    /// ```
    pub fn add_ms(mut self, ms: i64) -> OpCall {
        self.op().add_ms = Some(ms);
        self
    }

    /// The nodes of a Redlock.
    ///
    /// ```
    /// # use resplock::history::{ClientRecorder, OpKind};
    /// let rec = ClientRecorder::new();
    /// rec.begin("w", OpKind::Acquire, "l").nodes(&["n0", "n1", "n2"]).end(Some(true));
    /// assert_eq!(rec.ops()[0].nodes.len(), 3);
    /// ```
    pub fn nodes(mut self, nodes: &[&str]) -> OpCall {
        self.op().nodes = nodes.iter().map(|n| n.to_string()).collect();
        self
    }

    /// The resource a use touches.
    ///
    /// ```
    /// # use resplock::history::{ClientRecorder, OpKind};
    /// let rec = ClientRecorder::new();
    /// rec.begin("w", OpKind::Use, "l").resource("file").end(Some(true));
    /// assert_eq!(rec.ops()[0].resource, b"file");
    /// ```
    pub fn resource(mut self, r: impl AsRef<[u8]>) -> OpCall {
        self.op().resource = r.as_ref().to_vec();
        self
    }

    /// The fencing token a use presents.
    ///
    /// ```
    /// # use resplock::history::{ClientRecorder, OpKind};
    /// let rec = ClientRecorder::new();
    /// rec.begin("w", OpKind::Use, "l").fence(7).end(Some(true));
    /// assert_eq!(rec.ops()[0].fence, Some(7));
    /// ```
    pub fn fence(mut self, token: i64) -> OpCall {
        self.op().fence = Some(token);
        self
    }

    /// Ends it now: `Some(true)` it worked, `Some(false)` the lock said no, `None` unknown
    /// (an error or timeout that may have taken effect).
    ///
    /// ```
    /// # use resplock::history::{ClientRecorder, OpKind};
    /// let rec = ClientRecorder::new();
    /// rec.begin("w", OpKind::Acquire, "l").end(None);
    /// assert_eq!(rec.ops()[0].ok, None);
    /// assert!(rec.ops()[0].complete_us.is_some());
    /// ```
    pub fn end(mut self, ok: Option<bool>) {
        let mut op = self.op.take().expect("an unfinished op");
        op.complete_us = Some(now_us().max(op.invoke_us));
        op.ok = ok;
        self.rec.record(op);
    }
}

impl Drop for OpCall {
    fn drop(&mut self) {
        if let Some(op) = self.op.take() {
            self.rec.record(op);
        }
    }
}

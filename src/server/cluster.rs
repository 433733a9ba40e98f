//! A Redis Cluster in one process, for tests: [`start_cluster`] starts N masters with R
//! replicas each, the 16,384 slots split as `redis-cli --cluster create` splits them, every
//! node a full server on its own port answering as a redis-server 7.0.15 cluster node
//! (MOVED, ASK, CROSSSLOT, CLUSTER SLOTS/SHARDS/NODES ...); replicas follow their masters.
//! [`Cluster`] holds the nodes and the test controls (move slots, fail a master, cut a node
//! off, bring it back); [`BlockingCluster`] is the same on its own runtime thread.

use super::{listen, serve_bound, ServerHandle};
use crate::cluster::{key_slot, Membership, Topology};
use crate::cmd::runtime::cluster::ops::{self, Takeover};
use crate::cmd::runtime::cluster::registry::{ClusterNode, Shared};
use crate::cmd::testctl::cluster as ctl;
use crate::cmd::ServerState;
use crate::config::Config;
use std::io;
use std::net::SocketAddr;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

/// A running in-process cluster (see the module documentation). Dropping it stops every
/// node.
///
/// ```
/// # #[tokio::main(flavor = "multi_thread", worker_threads = 2)] async fn main() -> std::io::Result<()> {
/// let cluster = resplock::start_cluster(resplock::Config::ephemeral(), 3, 1).await?;
/// assert_eq!(cluster.nodes().len(), 6);
/// let seeds: Vec<String> = cluster.addrs().iter().map(|a| format!("redis://{a}")).collect();
/// // a key lives on the master serving its slot
/// cluster.master_for("user:1").db(0).set("user:1", "ada");
/// assert_eq!(cluster.master_for("user:1").db(0).get("user:1").as_deref(), Some(&b"ada"[..]));
/// # assert_eq!(seeds.len(), 6);
/// # Ok(()) }
/// ```
pub struct Cluster {
    nodes: Vec<ServerHandle>,
    shared: Arc<Shared>,
}

/// Start `masters` masters with `replicas` replicas each, on ports `config.port`.. (masters
/// first, then replicas in the order redis-cli assigns them), or on free ports when
/// `config.port` is 0; each node's configuration is a copy of `config` with
/// `cluster-enabled yes`. Returns once every replica has its master's (empty) data.
///
/// ```
/// # #[tokio::main(flavor = "multi_thread", worker_threads = 2)] async fn main() -> std::io::Result<()> {
/// let cluster = resplock::start_cluster(resplock::Config::ephemeral(), 3, 0).await?;
/// assert_eq!(cluster.masters().len(), 3);
/// # Ok(()) }
/// ```
pub async fn start_cluster(config: Config, masters: usize, replicas: usize) -> io::Result<Cluster> {
    if masters == 0 {
        return Err(io::Error::other("a cluster needs at least one master"));
    }
    let total = masters * (1 + replicas);
    let mut bound = Vec::with_capacity(total);
    for i in 0..total {
        let mut c = config.clone();
        if c.port != 0 {
            c.port = u16::try_from(u32::from(config.port) + i as u32)
                .map_err(|_| io::Error::other("port range past 65535"))?;
        }
        c.enable_cluster();
        c.number_files(i + 1);
        let l = listen::bind_all(&c)?;
        let addr = l
            .first_tcp_addr()
            .ok_or_else(|| io::Error::other("a cluster node needs a TCP port"))?;
        bound.push((c, l, addr));
    }
    let announced = config
        .get("cluster-announce-ip")
        .filter(|ip| !ip.is_empty());
    let addrs: Vec<(String, u16)> = bound
        .iter()
        .map(|(_, _, a)| {
            let ip = match &announced {
                Some(ip) => ip.clone(),
                None if a.ip().is_unspecified() => "127.0.0.1".to_string(),
                None => a.ip().to_string(),
            };
            (ip, a.port())
        })
        .collect();
    let ids = (0..total).map(|_| random_id()).collect();
    let topology = Topology::create(&addrs, ids, masters, replicas);
    let now_ms = crate::clock::system_us() / 1000;
    let shared = Shared::new(
        Membership::new(topology),
        now_ms,
        tokio::runtime::Handle::current(),
    );
    let mut nodes = Vec::with_capacity(total);
    let mut states = Vec::with_capacity(total);
    for (i, (c, l, _)) in bound.into_iter().enumerate() {
        let node = ClusterNode::new(i, shared.clone());
        let commands = crate::cmd::commands_for(&c);
        let state = ServerState::new_node(c, commands, Some(node.clone()));
        // WAIT on this node counts the replicas following its in-process feed.
        crate::cmd::runtime::cluster::hooks::count_feed_acks(&state, node);
        states.push(Arc::downgrade(&state));
        nodes.push(serve_bound(l, state, None)?);
    }
    shared.set_servers(states);
    {
        let _ops = shared.ops.lock().await;
        ops::reconcile(&shared, &[]).await;
    }
    let cluster = Cluster { nodes, shared };
    cluster.wait_for_replicas(Duration::from_secs(5)).await;
    Ok(cluster)
}

/// 40 lowercase hex characters, as Redis's getRandomHexChars names a node.
fn random_id() -> String {
    (0..40)
        .map(|_| char::from_digit(fastrand::u32(0..16), 16).expect("hex digit"))
        .collect()
}

/// A test control's refusal as an I/O error (its text is Redis-style).
fn refused(e: crate::error::RedisError) -> io::Error {
    io::Error::other(e.text().into_owned())
}

impl Cluster {
    /// Every node, masters first (in the order they were started; a failover changes
    /// roles, not this order).
    ///
    /// ```
    /// # #[tokio::main(flavor = "multi_thread", worker_threads = 2)] async fn main() -> std::io::Result<()> {
    /// let cluster = resplock::start_cluster(resplock::Config::ephemeral(), 3, 1).await?;
    /// cluster.nodes()[0].db(0).assert_missing("k"); // each node has the Backend controls
    /// # Ok(()) }
    /// ```
    pub fn nodes(&self) -> &[ServerHandle] {
        &self.nodes
    }

    /// The address of every node, in [`Cluster::nodes`] order: seeds for a cluster client.
    ///
    /// ```
    /// # #[tokio::main(flavor = "multi_thread", worker_threads = 2)] async fn main() -> std::io::Result<()> {
    /// let cluster = resplock::start_cluster(resplock::Config::ephemeral(), 3, 0).await?;
    /// assert!(cluster.addrs().iter().all(|a| a.ip().is_loopback()));
    /// # Ok(()) }
    /// ```
    pub fn addrs(&self) -> Vec<SocketAddr> {
        self.nodes.iter().map(|n| n.local_addr()).collect()
    }

    /// The node id of node `i` (CLUSTER MYID).
    ///
    /// ```
    /// # #[tokio::main(flavor = "multi_thread", worker_threads = 2)] async fn main() -> std::io::Result<()> {
    /// let cluster = resplock::start_cluster(resplock::Config::ephemeral(), 3, 0).await?;
    /// assert_eq!(cluster.node_id(0).len(), 40);
    /// # Ok(()) }
    /// ```
    pub fn node_id(&self, i: usize) -> String {
        self.shared.membership.truth().nodes[i].id.clone()
    }

    /// The nodes that are masters now, by index into [`Cluster::nodes`].
    ///
    /// ```
    /// # #[tokio::main(flavor = "multi_thread", worker_threads = 2)] async fn main() -> std::io::Result<()> {
    /// let cluster = resplock::start_cluster(resplock::Config::ephemeral(), 3, 1).await?;
    /// assert_eq!(cluster.masters(), vec![0, 1, 2]);
    /// # Ok(()) }
    /// ```
    pub fn masters(&self) -> Vec<usize> {
        let t = self.shared.membership.truth();
        (0..t.nodes.len())
            .filter(|&i| t.nodes[i].master.is_none())
            .collect()
    }

    /// The replicas of master `i` now.
    ///
    /// ```
    /// # #[tokio::main(flavor = "multi_thread", worker_threads = 2)] async fn main() -> std::io::Result<()> {
    /// let cluster = resplock::start_cluster(resplock::Config::ephemeral(), 3, 1).await?;
    /// assert_eq!(cluster.replicas_of(0), vec![4]); // as redis-cli assigns them
    /// # Ok(()) }
    /// ```
    pub fn replicas_of(&self, i: usize) -> Vec<usize> {
        self.shared.membership.truth().replicas_of(i)
    }

    /// The hash slot of `key` (CLUSTER KEYSLOT).
    ///
    /// ```
    /// assert_eq!(resplock::Cluster::slot_of("foo"), 12182);
    /// assert_eq!(resplock::Cluster::slot_of("{user1000}.following"), 3443);
    /// ```
    pub fn slot_of(key: impl AsRef<[u8]>) -> u16 {
        key_slot(key.as_ref())
    }

    /// The index of the master serving `slot` now (None: unassigned).
    ///
    /// ```
    /// # #[tokio::main(flavor = "multi_thread", worker_threads = 2)] async fn main() -> std::io::Result<()> {
    /// let cluster = resplock::start_cluster(resplock::Config::ephemeral(), 3, 0).await?;
    /// assert_eq!(cluster.owner(0), Some(0));
    /// assert_eq!(cluster.owner(16383), Some(2));
    /// # Ok(()) }
    /// ```
    pub fn owner(&self, slot: u16) -> Option<usize> {
        self.shared.membership.truth().owner(slot)
    }

    /// The master serving `key` now: its [`super::Backend`] writes and reads that node's
    /// data directly.
    ///
    /// ```
    /// # #[tokio::main(flavor = "multi_thread", worker_threads = 2)] async fn main() -> std::io::Result<()> {
    /// let cluster = resplock::start_cluster(resplock::Config::ephemeral(), 3, 0).await?;
    /// cluster.master_for("foo").db(0).set("foo", "bar");
    /// cluster.nodes()[2].db(0).assert_value("foo", "bar"); // slot 12182 is node 2's
    /// # Ok(()) }
    /// ```
    pub fn master_for(&self, key: impl AsRef<[u8]>) -> &ServerHandle {
        let owner = self.owner(key_slot(key.as_ref())).unwrap_or(0);
        &self.nodes[owner]
    }

    /// Move `slots` with their keys to master `to`, as `redis-cli --cluster reshard` moves
    /// them (MIGRATING/IMPORTING, the keys, SETSLOT NODE with a new epoch): clients see ASK
    /// meanwhile and MOVED after. Returns how many keys moved.
    ///
    /// ```
    /// # #[tokio::main(flavor = "multi_thread", worker_threads = 2)] async fn main() -> std::io::Result<()> {
    /// let cluster = resplock::start_cluster(resplock::Config::ephemeral(), 3, 1).await?;
    /// cluster.master_for("foo").db(0).set("foo", "bar");
    /// let slot = resplock::Cluster::slot_of("foo");
    /// assert_eq!(cluster.migrate(slot..=slot, 0).await?, 1);
    /// assert_eq!(cluster.owner(slot), Some(0));
    /// cluster.nodes()[0].db(0).assert_value("foo", "bar");
    /// # Ok(()) }
    /// ```
    pub async fn migrate(
        &self,
        slots: std::ops::RangeInclusive<u16>,
        to: usize,
    ) -> io::Result<usize> {
        let slots: Vec<u16> = slots.collect();
        ctl::migrate(&self.shared, &slots, to)
            .await
            .map_err(refused)
    }

    /// Fail master `i` as after cluster-node-timeout: it is cut off from the other nodes and
    /// its clients, and its replica (which first gets everything it acknowledged) takes
    /// over. Returns the index of the new master. [`Cluster::heal`] brings `i` back as a
    /// replica of it.
    ///
    /// ```
    /// # #[tokio::main(flavor = "multi_thread", worker_threads = 2)] async fn main() -> std::io::Result<()> {
    /// let cluster = resplock::start_cluster(resplock::Config::ephemeral(), 3, 1).await?;
    /// assert_eq!(cluster.fail_master(0).await?, 4);
    /// assert_eq!(cluster.owner(0), Some(4));
    /// cluster.heal(0).await?;
    /// assert_eq!(cluster.replicas_of(4), vec![0]);
    /// # Ok(()) }
    /// ```
    pub async fn fail_master(&self, i: usize) -> io::Result<usize> {
        ctl::fail_master(&self.shared, i).await.map_err(refused)
    }

    /// A manual failover, as CLUSTER FAILOVER sent to replica `i` (its master stops taking
    /// writes until the replica has them all); waits until it is done.
    ///
    /// ```
    /// # #[tokio::main(flavor = "multi_thread", worker_threads = 2)] async fn main() -> std::io::Result<()> {
    /// let cluster = resplock::start_cluster(resplock::Config::ephemeral(), 3, 1).await?;
    /// cluster.failover(4).await?;
    /// assert_eq!(cluster.masters(), vec![1, 2, 4]);
    /// assert_eq!(cluster.replicas_of(4), vec![0]);
    /// # Ok(()) }
    /// ```
    pub async fn failover(&self, i: usize) -> io::Result<()> {
        let _ops = self.shared.ops.lock().await;
        if ops::failover(&self.shared, i, Takeover::Manual).await {
            Ok(())
        } else {
            Err(io::Error::other(
                "the failover did not happen: is the node a replica of a reachable master?",
            ))
        }
    }

    /// Cut node `i` off from the other nodes and, with `clients`, from its clients
    /// (connections closed, its port closed so new ones are refused, until it heals). A master's replica still connected takes over,
    /// as the majority side of a real cluster elects it; a master with none leaves its slots
    /// down until [`Cluster::heal`] (see also [`Cluster::fail_master`]).
    ///
    /// ```
    /// # #[tokio::main(flavor = "multi_thread", worker_threads = 2)] async fn main() -> std::io::Result<()> {
    /// let cluster = resplock::start_cluster(resplock::Config::ephemeral(), 3, 1).await?;
    /// cluster.partition(5, true).await?; // a replica
    /// assert!(std::net::TcpStream::connect(cluster.addrs()[5]).map_or(true, |s| {
    ///     use std::io::{Read, Write};
    ///     let _ = (&s).write_all(b"PING\r\n");
    ///     let mut b = [0u8; 1];
    ///     matches!((&s).read(&mut b), Ok(0) | Err(_)) // refused: closed, no reply
    /// }));
    /// cluster.heal(5).await?;
    /// # Ok(()) }
    /// ```
    pub async fn partition(&self, i: usize, clients: bool) -> io::Result<()> {
        ctl::partition(&self.shared, i, clients)
            .await
            .map_err(refused)
    }

    /// Bring node `i` back after [`Cluster::partition`] or [`Cluster::fail_master`]: it takes
    /// the cluster's configuration, resyncs from its master if it is a replica, and accepts
    /// clients again.
    ///
    /// ```
    /// # #[tokio::main(flavor = "multi_thread", worker_threads = 2)] async fn main() -> std::io::Result<()> {
    /// let cluster = resplock::start_cluster(resplock::Config::ephemeral(), 3, 0).await?;
    /// cluster.partition(1, false).await?;
    /// cluster.heal(1).await?;
    /// # Ok(()) }
    /// ```
    pub async fn heal(&self, i: usize) -> io::Result<()> {
        ctl::heal(&self.shared, i).await.map_err(refused)?;
        self.wait_for_replicas(Duration::from_secs(5)).await;
        Ok(())
    }

    /// Wait (at most `limit`) until every replica that can reach its master has everything
    /// the master sent. True if they all did.
    ///
    /// ```
    /// # #[tokio::main(flavor = "multi_thread", worker_threads = 2)] async fn main() -> std::io::Result<()> {
    /// let cluster = resplock::start_cluster(resplock::Config::ephemeral(), 3, 1).await?;
    /// cluster.master_for("k").db(0).set("k", "v");
    /// assert!(cluster.wait_for_replicas(std::time::Duration::from_secs(1)).await);
    /// let replica = cluster.replicas_of(cluster.owner(resplock::Cluster::slot_of("k")).unwrap())[0];
    /// cluster.nodes()[replica].db(0).assert_value("k", "v");
    /// # Ok(()) }
    /// ```
    pub async fn wait_for_replicas(&self, limit: Duration) -> bool {
        let truth = self.shared.membership.truth();
        let mut all = true;
        for (i, n) in truth.nodes.iter().enumerate() {
            let Some(m) = n.master else { continue };
            if self.shared.membership.is_partitioned(i) || self.shared.membership.is_partitioned(m)
            {
                continue;
            }
            let (Some(ms), Some(rs)) = (self.shared.server(m), self.shared.server(i)) else {
                continue;
            };
            let offset = ms
                .cluster
                .as_deref()
                .map_or(0, |c| c.feed.offset.load(Ordering::Acquire));
            all &= crate::cmd::runtime::cluster::follow::caught_up(&rs, offset, limit).await;
        }
        all
    }

    /// Stop every node and wait until they are gone.
    ///
    /// ```
    /// # #[tokio::main(flavor = "multi_thread", worker_threads = 2)] async fn main() -> std::io::Result<()> {
    /// let cluster = resplock::start_cluster(resplock::Config::ephemeral(), 3, 0).await?;
    /// let addr = cluster.addrs()[0];
    /// cluster.shutdown().await;
    /// assert!(std::net::TcpStream::connect(addr).is_err());
    /// # Ok(()) }
    /// ```
    pub async fn shutdown(self) {
        for n in self.nodes {
            n.shutdown().await;
        }
    }

    /// Wait until every node stops (SHUTDOWN sent to each, or a signal in the binary).
    pub(crate) async fn wait(self) {
        for n in self.nodes {
            n.wait().await;
        }
    }

    /// The servers' states (for the process's signal handler).
    pub(crate) fn states(&self) -> Vec<Arc<ServerState>> {
        self.nodes.iter().map(|n| n.state().clone()).collect()
    }
}

/// A [`Cluster`] on a runtime of its own, for blocking tests; its controls block until
/// done. Dropping it stops every node.
///
/// ```
/// let cluster = resplock::BlockingCluster::start(resplock::Config::ephemeral(), 3, 1).unwrap();
/// cluster.master_for("foo").db(0).set("foo", "bar");
/// let slot = resplock::Cluster::slot_of("foo");
/// cluster.migrate(slot..=slot, 0).unwrap();
/// cluster.nodes()[0].db(0).assert_value("foo", "bar");
/// ```
pub struct BlockingCluster {
    cluster: Option<Cluster>,
    rt: Option<tokio::runtime::Runtime>,
}

impl std::ops::Deref for BlockingCluster {
    type Target = Cluster;
    fn deref(&self) -> &Cluster {
        self.cluster.as_ref().expect("running")
    }
}

impl BlockingCluster {
    /// [`start_cluster`] on a new two-worker runtime.
    ///
    /// ```
    /// let cluster = resplock::BlockingCluster::start(resplock::Config::ephemeral(), 3, 0)?;
    /// assert_eq!(cluster.addrs().len(), 3);
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn start(config: Config, masters: usize, replicas: usize) -> io::Result<BlockingCluster> {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_stack_size(crate::cmd::WORKER_STACK_BYTES)
            .enable_all()
            .build()?;
        let cluster = rt.block_on(start_cluster(config, masters, replicas))?;
        Ok(BlockingCluster {
            cluster: Some(cluster),
            rt: Some(rt),
        })
    }

    fn run<F: std::future::Future>(&self, f: F) -> F::Output {
        self.rt.as_ref().expect("running").block_on(f)
    }

    /// [`Cluster::migrate`], blocking.
    ///
    /// ```
    /// let cluster = resplock::BlockingCluster::start(resplock::Config::ephemeral(), 3, 0).unwrap();
    /// assert_eq!(cluster.migrate(0..=9, 1).unwrap(), 0);
    /// assert_eq!(cluster.owner(9), Some(1));
    /// ```
    pub fn migrate(&self, slots: std::ops::RangeInclusive<u16>, to: usize) -> io::Result<usize> {
        self.run(Cluster::migrate(self, slots, to))
    }

    /// [`Cluster::fail_master`], blocking.
    ///
    /// ```
    /// let cluster = resplock::BlockingCluster::start(resplock::Config::ephemeral(), 3, 1).unwrap();
    /// assert_eq!(cluster.fail_master(1).unwrap(), 5);
    /// ```
    pub fn fail_master(&self, i: usize) -> io::Result<usize> {
        self.run(Cluster::fail_master(self, i))
    }

    /// [`Cluster::failover`], blocking.
    ///
    /// ```
    /// let cluster = resplock::BlockingCluster::start(resplock::Config::ephemeral(), 3, 1).unwrap();
    /// cluster.failover(3).unwrap();
    /// assert_eq!(cluster.owner(16383), Some(3));
    /// ```
    pub fn failover(&self, i: usize) -> io::Result<()> {
        self.run(Cluster::failover(self, i))
    }

    /// [`Cluster::partition`], blocking.
    ///
    /// ```
    /// let cluster = resplock::BlockingCluster::start(resplock::Config::ephemeral(), 3, 0).unwrap();
    /// cluster.partition(2, false).unwrap();
    /// cluster.heal(2).unwrap();
    /// ```
    pub fn partition(&self, i: usize, clients: bool) -> io::Result<()> {
        self.run(Cluster::partition(self, i, clients))
    }

    /// [`Cluster::heal`], blocking.
    ///
    /// ```
    /// let cluster = resplock::BlockingCluster::start(resplock::Config::ephemeral(), 3, 1).unwrap();
    /// cluster.fail_master(0).unwrap();
    /// cluster.heal(0).unwrap();
    /// assert_eq!(cluster.replicas_of(4), vec![0]);
    /// ```
    pub fn heal(&self, i: usize) -> io::Result<()> {
        self.run(Cluster::heal(self, i))
    }

    /// [`Cluster::wait_for_replicas`], blocking.
    ///
    /// ```
    /// let cluster = resplock::BlockingCluster::start(resplock::Config::ephemeral(), 3, 1).unwrap();
    /// assert!(cluster.wait_for_replicas(std::time::Duration::from_secs(1)));
    /// ```
    pub fn wait_for_replicas(&self, limit: Duration) -> bool {
        self.run(Cluster::wait_for_replicas(self, limit))
    }
}

impl Drop for BlockingCluster {
    fn drop(&mut self) {
        if let (Some(c), Some(rt)) = (self.cluster.take(), self.rt.take()) {
            rt.block_on(c.shutdown());
        }
    }
}

//! The in-process Redis Cluster (`start_cluster`, `resplock --cluster N`): routing and
//! redirections as a redis-server 7.0.15 node answers them, replicas, slot migration,
//! failover and partitions. Side by side with a real cluster: tests/cluster_compare.

mod common;

use common::Raw;
use resplock::{Cluster, Config};
use std::time::Duration;

async fn cluster(masters: usize, replicas: usize) -> Cluster {
    let mut config = Config::ephemeral();
    config.enable_test_commands = true;
    resplock::start_cluster(config, masters, replicas)
        .await
        .expect("cluster starts")
}

async fn raw(c: &Cluster, i: usize) -> Raw {
    Raw::connect(&c.nodes()[i]).await
}

fn s(reply: &[u8]) -> String {
    String::from_utf8_lossy(reply).into_owned()
}

/// The node serving `key`, and one that does not.
fn owner_and_other(c: &Cluster, key: &str) -> (usize, usize) {
    let owner = c.owner(Cluster::slot_of(key)).expect("assigned");
    let other = c
        .masters()
        .into_iter()
        .find(|&m| m != owner)
        .expect("another master");
    (owner, other)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slots_are_split_as_redis_cli_splits_them_with_real_addresses() {
    let c = cluster(3, 1).await;
    let mut r = raw(&c, 0).await;
    let info = s(&cmd!(r, "CLUSTER", "INFO"));
    assert!(
        info.contains("cluster_state:ok\r\ncluster_slots_assigned:16384"),
        "{info}"
    );
    assert!(
        info.contains("cluster_known_nodes:6\r\ncluster_size:3"),
        "{info}"
    );
    // As in Redis, a replica is listed once its master sent it something (offset not 0): a
    // fresh cluster's entries may or may not list them yet (a PING may have gone out on a slow
    // machine), so only the master part is checked here.
    let slots = s(&cmd!(r, "CLUSTER", "SLOTS"));
    for (i, (a, b)) in [(0, 5460), (5461, 10922), (10923, 16383)]
        .into_iter()
        .enumerate()
    {
        let port = c.addrs()[i].port();
        let head = format!(
            "\r\n:{a}\r\n:{b}\r\n*4\r\n$9\r\n127.0.0.1\r\n:{port}\r\n$40\r\n{}",
            c.node_id(i)
        );
        assert!(slots.contains(&head), "{slots}");
    }
    for key in ["a", "b", "c"] {
        let mut m = raw(&c, c.owner(Cluster::slot_of(key)).unwrap()).await;
        cmd!(m, "SET", key, "1");
    }
    assert!(c.wait_for_replicas(Duration::from_secs(5)).await);
    let slots = s(&cmd!(r, "CLUSTER", "SLOTS"));
    for (i, (a, b)) in [(0, 5460), (5461, 10922), (10923, 16383)]
        .into_iter()
        .enumerate()
    {
        let (port, replica) = (c.addrs()[i].port(), c.replicas_of(i)[0]);
        let rport = c.addrs()[replica].port();
        let entry = format!(
            "*4\r\n:{a}\r\n:{b}\r\n*4\r\n$9\r\n127.0.0.1\r\n:{port}\r\n$40\r\n{}\r\n*0\r\n*4\r\n$9\r\n127.0.0.1\r\n:{rport}\r\n$40\r\n{}\r\n*0\r\n",
            c.node_id(i),
            c.node_id(replica)
        );
        assert!(slots.contains(&entry), "{slots}");
    }
    // Every node's address answers.
    for i in 0..6 {
        let mut n = raw(&c, i).await;
        assert_eq!(
            s(&cmd!(n, "CLUSTER", "MYID")),
            format!("$40\r\n{}\r\n", c.node_id(i))
        );
    }
    assert_eq!(
        s(&cmd!(r, "CLUSTER", "KEYSLOT", "{user1000}.following")),
        ":3443\r\n"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_key_served_elsewhere_is_moved_to_its_master() {
    let c = cluster(3, 0).await;
    let (owner, other) = owner_and_other(&c, "foo");
    let mut r = raw(&c, other).await;
    let moved = format!("-MOVED 12182 127.0.0.1:{}\r\n", c.addrs()[owner].port());
    assert_eq!(s(&cmd!(r, "SET", "foo", "bar")), moved);
    assert_eq!(s(&cmd!(r, "GET", "foo")), moved);
    let mut o = raw(&c, owner).await;
    assert_eq!(s(&cmd!(o, "SET", "foo", "bar")), "+OK\r\n");
    c.nodes()[other].db(0).assert_missing("foo");
    // Keyless commands run anywhere.
    assert_eq!(s(&cmd!(r, "PING")), "+PONG\r\n");
    assert_eq!(s(&cmd!(r, "DBSIZE")), ":0\r\n");
}

/// The first line of `node`'s CLUSTER NODES about the node at `port`.
async fn nodes_line(r: &mut Raw, port: u16) -> String {
    let nodes = s(&cmd!(r, "CLUSTER", "NODES"));
    nodes
        .lines()
        .find(|l| l.contains(&format!(":{port}@")))
        .unwrap_or_default()
        .to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delslots_is_seen_only_by_the_node_that_ran_it() {
    let c = cluster(3, 0).await;
    let (owner, other) = owner_and_other(&c, "foo");
    let port = c.addrs()[owner].port();
    let mut o = raw(&c, owner).await;
    let mut r = raw(&c, other).await;
    assert_eq!(s(&cmd!(o, "SET", "foo", "bar")), "+OK\r\n");
    assert_eq!(s(&cmd!(o, "CLUSTER", "DELSLOTS", "12182")), "+OK\r\n");
    // The owner forgot the slot: it no longer serves it, and its cluster is down.
    assert_eq!(
        s(&cmd!(o, "GET", "foo")),
        "-CLUSTERDOWN Hash slot not served\r\n"
    );
    let info = s(&cmd!(o, "CLUSTER", "INFO"));
    assert!(
        info.contains("cluster_state:fail\r\ncluster_slots_assigned:16383\r\n"),
        "{info}"
    );
    assert!(
        nodes_line(&mut o, port)
            .await
            .ends_with(" connected 10923-12181 12183-16383"),
        "{}",
        nodes_line(&mut o, port).await
    );
    // The others still send clients to it.
    let moved = format!("-MOVED 12182 127.0.0.1:{port}\r\n");
    assert_eq!(s(&cmd!(r, "GET", "foo")), moved);
    let info = s(&cmd!(r, "CLUSTER", "INFO"));
    assert!(
        info.contains("cluster_state:ok\r\ncluster_slots_assigned:16384\r\n"),
        "{info}"
    );
    assert!(nodes_line(&mut r, port)
        .await
        .ends_with(" connected 10923-16383"));
    assert_eq!(
        s(&cmd!(r, "CLUSTER", "ADDSLOTS", "12182")),
        "-ERR Slot 12182 is already busy\r\n"
    );
    assert_eq!(c.owner(12182), None, "no master claims it");
    // Claiming it back is learnt by every node.
    assert_eq!(s(&cmd!(o, "CLUSTER", "ADDSLOTS", "12182")), "+OK\r\n");
    assert_eq!(s(&cmd!(o, "GET", "foo")), "$3\r\nbar\r\n");
    assert!(s(&cmd!(o, "CLUSTER", "INFO")).contains("cluster_state:ok\r\n"));
    assert_eq!(c.owner(12182), Some(owner));
    // A node that forgets a slot its owner still claims learns it back from the owner (at
    // once here; after the owner's next ping on a real cluster).
    assert_eq!(s(&cmd!(r, "CLUSTER", "DELSLOTS", "12182")), "+OK\r\n");
    assert_eq!(s(&cmd!(r, "GET", "foo")), moved);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slot_its_owner_forgot_is_served_by_the_next_node_that_adds_it() {
    let c = cluster(3, 0).await;
    let (owner, other) = owner_and_other(&c, "foo");
    let mut o = raw(&c, owner).await;
    let mut r = raw(&c, other).await;
    assert_eq!(s(&cmd!(o, "CLUSTER", "DELSLOTS", "12182")), "+OK\r\n");
    // The other node still binds it to the owner: it must forget it too before adding it.
    assert_eq!(s(&cmd!(r, "CLUSTER", "DELSLOTS", "12182")), "+OK\r\n");
    assert_eq!(s(&cmd!(r, "CLUSTER", "ADDSLOTS", "12182")), "+OK\r\n");
    // Its owner no longer claimed it: every node binds it to the node that does, whatever
    // the epochs.
    let moved = format!("-MOVED 12182 127.0.0.1:{}\r\n", c.addrs()[other].port());
    for i in c.masters() {
        if i != other {
            let mut x = raw(&c, i).await;
            assert_eq!(s(&cmd!(x, "GET", "foo")), moved, "node {i}");
        }
    }
    assert_eq!(s(&cmd!(r, "SET", "foo", "1")), "+OK\r\n");
    assert_eq!(c.owner(12182), Some(other));
    assert!(s(&cmd!(o, "CLUSTER", "INFO")).contains("cluster_state:ok\r\n"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn getkeysinslot_returns_at_most_count_keys() {
    // What resharding tools page through a slot with (GETKEYSINSLOT, then MIGRATE them).
    let c = cluster(3, 0).await;
    let slot = Cluster::slot_of("{g}");
    let owner = c.owner(slot).expect("assigned");
    let mut o = raw(&c, owner).await;
    for k in ["{g}a", "{g}b", "{g}c"] {
        assert_eq!(s(&cmd!(o, "SET", k, "1")), "+OK\r\n");
    }
    let slot = slot.to_string();
    assert_eq!(
        s(&cmd!(o, "CLUSTER", "GETKEYSINSLOT", &slot, "0")),
        "*0\r\n"
    );
    let one = s(&cmd!(o, "CLUSTER", "GETKEYSINSLOT", &slot, "1"));
    assert!(one.starts_with("*1\r\n$4\r\n{g}"), "{one:?}");
    let two = s(&cmd!(o, "CLUSTER", "GETKEYSINSLOT", &slot, "2"));
    assert!(two.starts_with("*2\r\n"), "{two:?}");
    let all = s(&cmd!(o, "CLUSTER", "GETKEYSINSLOT", &slot, "10"));
    assert!(all.starts_with("*3\r\n"), "{all:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keys_of_different_slots_are_crossslot_and_hash_tags_keep_them_together() {
    let c = cluster(3, 0).await;
    let (owner, _) = owner_and_other(&c, "{t}");
    let mut r = raw(&c, owner).await;
    let cross = "-CROSSSLOT Keys in request don't hash to the same slot\r\n";
    assert_eq!(s(&cmd!(r, "MSET", "{t}a", "1", "b", "2")), cross);
    assert_eq!(s(&cmd!(r, "MSET", "{t}a", "1", "{t}b", "2")), "+OK\r\n");
    assert_eq!(s(&cmd!(r, "EVAL", "return 1", "2", "{t}a", "x")), cross);
    assert_eq!(s(&cmd!(r, "ZUNIONSTORE", "{t}d", "2", "{t}a", "y")), cross);
    // A command redirected while queuing flags the transaction: EXEC aborts.
    let far = ["a", "b", "c", "d", "e", "f"]
        .into_iter()
        .find(|k| c.owner(Cluster::slot_of(k)) != Some(owner))
        .unwrap();
    assert_eq!(s(&cmd!(r, "MULTI")), "+OK\r\n");
    assert_eq!(s(&cmd!(r, "SET", "{t}a", "1")), "+QUEUED\r\n");
    assert!(s(&cmd!(r, "SET", far, "1")).starts_with("-MOVED "));
    assert_eq!(
        s(&cmd!(r, "EXEC")),
        "-EXECABORT Transaction discarded because of previous errors.\r\n"
    );
}

/// Two keys this node serves, in different slots.
fn two_slots_on(c: &Cluster, node: usize) -> (String, String) {
    let mut mine = (0..1000)
        .map(|i| format!("k{i}"))
        .filter(|k| c.owner(Cluster::slot_of(k)) == Some(node));
    let a = mine.next().unwrap();
    let b = mine
        .find(|k| Cluster::slot_of(k) != Cluster::slot_of(&a))
        .unwrap();
    (a, b)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_transaction_across_slots_of_this_node_fails_with_crossslot_at_exec() {
    let c = cluster(3, 0).await;
    let (a, b) = two_slots_on(&c, 2);
    let mut r = raw(&c, 2).await;
    cmd!(r, "MULTI");
    assert_eq!(s(&cmd!(r, "SET", &a, "1")), "+QUEUED\r\n");
    assert_eq!(s(&cmd!(r, "SET", &b, "2")), "+QUEUED\r\n");
    assert_eq!(
        s(&cmd!(r, "EXEC")),
        "-CROSSSLOT Keys in request don't hash to the same slot\r\n"
    );
    c.nodes()[2].db(0).assert_missing(&a);
    assert_eq!(s(&cmd!(r, "EXEC")), "-ERR EXEC without MULTI\r\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn select_beyond_db_0_and_other_databases_are_refused() {
    let c = cluster(3, 0).await;
    let mut r = raw(&c, 0).await;
    assert_eq!(s(&cmd!(r, "SELECT", "0")), "+OK\r\n");
    assert_eq!(
        s(&cmd!(r, "SELECT", "1")),
        "-ERR SELECT is not allowed in cluster mode\r\n"
    );
    assert_eq!(
        s(&cmd!(r, "SWAPDB", "0", "1")),
        "-ERR SWAPDB is not allowed in cluster mode\r\n"
    );
    assert_eq!(
        s(&cmd!(r, "REPLICAOF", "no", "one")),
        "-ERR REPLICAOF not allowed in cluster mode.\r\n"
    );
    let hello = s(&cmd!(r, "HELLO", "3"));
    assert!(hello.contains("$4\r\nmode\r\n$7\r\ncluster\r\n"), "{hello}");
    assert!(s(&cmd!(r, "INFO", "cluster")).contains("cluster_enabled:1"));
    assert!(s(&cmd!(r, "CONFIG", "GET", "cluster-enabled")).contains("yes"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replica_follows_its_master_serves_reads_after_readonly_and_redirects_writes() {
    let c = cluster(3, 1).await;
    let (owner, _) = owner_and_other(&c, "{r}");
    let replica = c.replicas_of(owner)[0];
    let mut m = raw(&c, owner).await;
    cmd!(m, "SET", "{r}a", "1");
    cmd!(
        m,
        "EVAL",
        "redis.call('rpush', KEYS[1], 'x', 'y'); return redis.call('spop', KEYS[2])",
        "2",
        "{r}l",
        "{r}s"
    );
    cmd!(m, "SADD", "{r}set", "a", "b", "c");
    cmd!(m, "SPOP", "{r}set");
    cmd!(m, "SET", "{r}ttl", "v", "EX", "100");
    assert!(c.wait_for_replicas(Duration::from_secs(5)).await);
    let rep = &c.nodes()[replica];
    rep.db(0).assert_value("{r}a", "1");
    assert_eq!(
        rep.db(0).command(&["SMEMBERS", "{r}set"]),
        c.nodes()[owner].db(0).command(&["SMEMBERS", "{r}set"])
    );
    assert_eq!(
        rep.db(0).command(&["LRANGE", "{r}l", "0", "-1"]),
        c.nodes()[owner]
            .db(0)
            .command(&["LRANGE", "{r}l", "0", "-1"])
    );
    assert_eq!(
        rep.db(0).command(&["PEXPIRETIME", "{r}ttl"]),
        c.nodes()[owner].db(0).command(&["PEXPIRETIME", "{r}ttl"])
    );
    let mut r = raw(&c, replica).await;
    let moved = format!(
        "-MOVED {} 127.0.0.1:{}\r\n",
        Cluster::slot_of("{r}a"),
        c.addrs()[owner].port()
    );
    assert_eq!(s(&cmd!(r, "GET", "{r}a")), moved);
    assert_eq!(s(&cmd!(r, "READONLY")), "+OK\r\n");
    assert_eq!(s(&cmd!(r, "GET", "{r}a")), "$1\r\n1\r\n");
    assert_eq!(s(&cmd!(r, "SET", "{r}a", "2")), moved);
    assert_eq!(
        s(&cmd!(r, "FLUSHALL")),
        "-READONLY You can't write against a read only replica.\r\n"
    );
    assert_eq!(s(&cmd!(r, "READWRITE")), "+OK\r\n");
    assert_eq!(s(&cmd!(r, "GET", "{r}a")), moved);
    let role = s(&cmd!(r, "ROLE"));
    assert!(
        role.starts_with(&format!(
            "*5\r\n$5\r\nslave\r\n$9\r\n127.0.0.1\r\n:{}\r\n$9\r\nconnected\r\n",
            c.addrs()[owner].port()
        )),
        "{role}"
    );
    // FLUSHALL on the master empties the replica too.
    cmd!(m, "FLUSHALL");
    assert!(c.wait_for_replicas(Duration::from_secs(5)).await);
    rep.db(0).assert_missing("{r}a");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_migrating_slot_answers_ask_and_tryagain_then_moved_once_it_moved() {
    let c = cluster(3, 0).await;
    let (src, dst) = owner_and_other(&c, "{m}");
    let slot = Cluster::slot_of("{m}");
    let (sid, did) = (c.node_id(src), c.node_id(dst));
    let mut a = raw(&c, src).await;
    let mut b = raw(&c, dst).await;
    cmd!(a, "SET", "{m}here", "1");
    cmd!(a, "SET", "{m}moving", "2");
    assert_eq!(
        s(&cmd!(
            b,
            "CLUSTER",
            "SETSLOT",
            slot.to_string(),
            "IMPORTING",
            &sid
        )),
        "+OK\r\n"
    );
    assert_eq!(
        s(&cmd!(
            a,
            "CLUSTER",
            "SETSLOT",
            slot.to_string(),
            "MIGRATING",
            &did
        )),
        "+OK\r\n"
    );
    let nodes = s(&cmd!(a, "CLUSTER", "NODES"));
    assert!(nodes.contains(&format!("[{slot}->-{did}]")), "{nodes}");
    let ask = format!("-ASK {slot} 127.0.0.1:{}\r\n", c.addrs()[dst].port());
    assert_eq!(s(&cmd!(a, "GET", "{m}here")), "$1\r\n1\r\n");
    assert_eq!(s(&cmd!(a, "GET", "{m}absent")), ask);
    assert_eq!(
        s(&cmd!(a, "RESPLOCK.CLUSTER", "MOVEKEYS", &did, "{m}moving")),
        "+OK\r\n"
    );
    assert_eq!(
        s(&cmd!(a, "MGET", "{m}here", "{m}moving")),
        "-TRYAGAIN Multiple keys request during rehashing of slot\r\n"
    );
    let moved = format!("-MOVED {slot} 127.0.0.1:{}\r\n", c.addrs()[src].port());
    assert_eq!(s(&cmd!(b, "GET", "{m}moving")), moved);
    assert_eq!(s(&cmd!(b, "ASKING")), "+OK\r\n");
    assert_eq!(s(&cmd!(b, "GET", "{m}moving")), "$1\r\n2\r\n");
    assert_eq!(
        s(&cmd!(b, "GET", "{m}moving")),
        moved,
        "ASKING lasts one command"
    );
    assert_eq!(
        s(&cmd!(a, "RESPLOCK.CLUSTER", "MOVEKEYS", &did, "{m}here")),
        "+OK\r\n"
    );
    assert_eq!(
        s(&cmd!(a, "CLUSTER", "COUNTKEYSINSLOT", slot.to_string())),
        ":0\r\n"
    );
    assert_eq!(
        s(&cmd!(
            b,
            "CLUSTER",
            "SETSLOT",
            slot.to_string(),
            "NODE",
            &did
        )),
        "+OK\r\n"
    );
    assert_eq!(
        s(&cmd!(
            a,
            "CLUSTER",
            "SETSLOT",
            slot.to_string(),
            "NODE",
            &did
        )),
        "+OK\r\n"
    );
    assert_eq!(c.owner(slot), Some(dst));
    let moved = format!("-MOVED {slot} 127.0.0.1:{}\r\n", c.addrs()[dst].port());
    assert_eq!(s(&cmd!(a, "GET", "{m}here")), moved);
    assert_eq!(
        s(&cmd!(b, "MGET", "{m}here", "{m}moving")),
        "*2\r\n$1\r\n1\r\n$1\r\n2\r\n"
    );
    // The importing node took a new epoch without consensus.
    assert!(s(&cmd!(b, "CLUSTER", "INFO")).contains("cluster_current_epoch:4"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn migrating_a_slot_range_in_one_call_moves_its_keys_and_redirects_blocked_clients() {
    let c = cluster(3, 1).await;
    let (src, dst) = owner_and_other(&c, "{q}");
    let slot = Cluster::slot_of("{q}");
    c.nodes()[src].db(0).set("{q}k", "v");
    let mut blocked = raw(&c, src).await;
    blocked
        .send(b"*3\r\n$5\r\nBLPOP\r\n$8\r\n{q}queue\r\n$1\r\n0\r\n")
        .await;
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_eq!(c.migrate(slot..=slot, dst).await.unwrap(), 1);
    let moved = format!("-MOVED {slot} 127.0.0.1:{}\r\n", c.addrs()[dst].port());
    assert_eq!(s(&blocked.reply().await), moved);
    c.nodes()[dst].db(0).assert_value("{q}k", "v");
    c.nodes()[src].db(0).assert_missing("{q}k");
    assert!(c.wait_for_replicas(Duration::from_secs(5)).await);
    let dst_replica = c.replicas_of(dst)[0];
    c.nodes()[dst_replica].db(0).assert_value("{q}k", "v");
    c.nodes()[c.replicas_of(src)[0]]
        .db(0)
        .assert_missing("{q}k");
}

/// SET `{w}0`, `{w}1`, ... at `addr` until a reply is not OK (it must be MOVED) or `n` are
/// written; the keys acknowledged.
async fn write_until_moved(addr: std::net::SocketAddr, n: usize) -> Vec<String> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let mut buf = Vec::new();
    let mut ok = Vec::new();
    for i in 0..n {
        let key = format!("{{w}}{i}");
        let req = format!("*3\r\n$3\r\nSET\r\n${}\r\n{key}\r\n$1\r\nv\r\n", key.len());
        stream.write_all(req.as_bytes()).await.unwrap();
        let reply = loop {
            if let Some(len) = common::frame_len(&buf) {
                break buf.drain(..len).collect::<Vec<u8>>();
            }
            let mut chunk = [0u8; 512];
            let got = stream.read(&mut chunk).await.unwrap();
            assert!(got > 0, "closed");
            buf.extend_from_slice(&chunk[..got]);
        };
        if reply == b"+OK\r\n" {
            ok.push(key);
        } else {
            assert!(
                reply.starts_with(b"-MOVED"),
                "{}",
                String::from_utf8_lossy(&reply)
            );
            break;
        }
    }
    ok
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cluster_failover_promotes_the_replica_without_losing_an_acknowledged_write() {
    let c = cluster(3, 1).await;
    let master = c.owner(Cluster::slot_of("{w}")).unwrap();
    let replica = c.replicas_of(master)[0];
    let addr = c.addrs()[master];
    let acked = tokio::spawn(write_until_moved(addr, 2000));
    tokio::time::sleep(Duration::from_millis(20)).await;
    let mut r = raw(&c, replica).await;
    assert_eq!(s(&cmd!(r, "CLUSTER", "FAILOVER")), "+OK\r\n");
    let acked = acked.await.unwrap();
    for _ in 0..500 {
        if c.masters().contains(&replica) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(c.masters().contains(&replica));
    assert_eq!(c.replicas_of(replica), vec![master]);
    for k in &acked {
        c.nodes()[replica].db(0).assert_value(k, "v");
    }
    assert!(c.wait_for_replicas(Duration::from_secs(5)).await);
    for k in &acked {
        c.nodes()[master].db(0).assert_value(k, "v");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_master_is_replaced_by_its_replica_and_comes_back_as_its_replica() {
    let c = cluster(3, 1).await;
    let master = 1;
    let replica = c.replicas_of(master)[0];
    let keys: Vec<String> = (0..50).map(|i| format!("{{f}}{i}")).collect();
    let owner = c.owner(Cluster::slot_of("{f}")).unwrap();
    let mut w = raw(&c, owner).await;
    for k in &keys {
        assert_eq!(s(&cmd!(w, "SET", k, "v")), "+OK\r\n");
    }
    let owner_replica = c.replicas_of(owner)[0];
    assert_eq!(c.fail_master(owner).await.unwrap(), owner_replica);
    for k in &keys {
        c.nodes()[owner_replica].db(0).assert_value(k, "v");
    }
    let mut r = raw(&c, (owner + 1) % 3).await;
    let nodes = s(&cmd!(r, "CLUSTER", "NODES"));
    assert!(
        nodes.contains(&format!(
            "{} 127.0.0.1:{}@{} master,fail - ",
            c.node_id(owner),
            c.addrs()[owner].port(),
            c.addrs()[owner].port() + 10000
        )),
        "{nodes}"
    );
    assert!(s(&cmd!(r, "CLUSTER", "INFO")).contains("cluster_state:ok"));
    // Its port refuses connections, as a killed redis-server's does.
    let refused = tokio::net::TcpStream::connect(c.addrs()[owner]).await;
    assert_eq!(
        refused.map(|_| ()).map_err(|e| e.kind()),
        Err(std::io::ErrorKind::ConnectionRefused)
    );
    c.heal(owner).await.unwrap();
    assert_eq!(c.replicas_of(owner_replica), vec![owner]);
    // Healed, it listens on the same port again.
    let mut back = raw(&c, owner).await;
    assert_eq!(s(&cmd!(back, "PING")), "+PONG\r\n");
    for k in &keys {
        c.nodes()[owner].db(0).assert_value(k, "v");
    }
    let _ = (master, replica);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_partitioned_master_takes_its_slots_down_until_it_heals() {
    let c = cluster(3, 0).await;
    c.partition(1, false).await.unwrap();
    let mut cut = raw(&c, 1).await;
    let info = s(&cmd!(cut, "CLUSTER", "INFO"));
    assert!(info.contains("cluster_state:fail"), "{info}");
    let mut other = raw(&c, 0).await;
    assert!(s(&cmd!(other, "CLUSTER", "INFO")).contains("cluster_state:fail"));
    assert_eq!(
        s(&cmd!(other, "GET", "bar")),
        "-CLUSTERDOWN The cluster is down\r\n"
    );
    let fails = s(&cmd!(
        other,
        "CLUSTER",
        "COUNT-FAILURE-REPORTS",
        c.node_id(1)
    ));
    assert_eq!(fails, ":1\r\n");
    c.heal(1).await.unwrap();
    assert!(s(&cmd!(other, "CLUSTER", "INFO")).contains("cluster_state:ok"));
    assert_eq!(s(&cmd!(other, "PING")), "+PONG\r\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn publish_reaches_every_node_and_spublish_only_the_shard() {
    let c = cluster(3, 1).await;
    let mut subs = Vec::new();
    for i in 0..6 {
        let mut r = raw(&c, i).await;
        cmd!(r, "SUBSCRIBE", "news");
        subs.push(r);
    }
    let mut p = raw(&c, 2).await;
    assert_eq!(s(&cmd!(p, "PUBLISH", "news", "hi")), ":1\r\n");
    for r in &mut subs {
        assert_eq!(
            s(&r.reply().await),
            "*3\r\n$7\r\nmessage\r\n$4\r\nnews\r\n$2\r\nhi\r\n"
        );
    }
    let shard = c.owner(Cluster::slot_of("ch")).unwrap();
    let (_, other) = owner_and_other(&c, "ch");
    let mut o = raw(&c, other).await;
    let moved = format!(
        "-MOVED {} 127.0.0.1:{}\r\n",
        Cluster::slot_of("ch"),
        c.addrs()[shard].port()
    );
    assert_eq!(s(&cmd!(o, "SPUBLISH", "ch", "x")), moved);
    assert_eq!(s(&cmd!(o, "SSUBSCRIBE", "ch")), moved);
    let mut rs = raw(&c, c.replicas_of(shard)[0]).await;
    let mut sm = raw(&c, shard).await;
    cmd!(rs, "SSUBSCRIBE", "ch");
    cmd!(sm, "SSUBSCRIBE", "ch");
    let mut pub_ = raw(&c, shard).await;
    assert_eq!(s(&cmd!(pub_, "SPUBLISH", "ch", "x")), ":1\r\n");
    for r in [&mut rs, &mut sm] {
        assert_eq!(
            s(&r.reply().await),
            "*3\r\n$8\r\nsmessage\r\n$2\r\nch\r\n$1\r\nx\r\n"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_script_may_touch_only_keys_this_node_serves() {
    let c = cluster(3, 0).await;
    let (owner, _) = owner_and_other(&c, "{s}");
    let mut r = raw(&c, owner).await;
    let far = ["a", "b", "c", "d", "e", "f"]
        .into_iter()
        .find(|k| c.owner(Cluster::slot_of(k)) != Some(owner))
        .unwrap();
    let reply = s(&cmd!(
        r,
        "EVAL",
        format!("return redis.call('get', '{far}')"),
        "0"
    ));
    assert!(
        reply.starts_with("-ERR Script attempted to access a non local key in a cluster node"),
        "{reply}"
    );
    let reply = s(&cmd!(
        r,
        "EVAL",
        "#!lua\nredis.call('get', KEYS[1]); return redis.call('get', 'zz{s}')",
        "1",
        "{s}a"
    ));
    assert_eq!(reply, "$-1\r\n");
    assert_eq!(
        s(&cmd!(r, "EVAL", "#!lua flags=no-cluster\nreturn 1", "0")),
        "-ERR Can not run script on cluster, 'no-cluster' flag is set.\r\n"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_test_controls_run_over_the_wire_from_any_node() {
    let c = cluster(3, 1).await;
    let mut r = raw(&c, 0).await;
    c.master_for("foo").db(0).set("foo", "1");
    let slot = Cluster::slot_of("foo");
    assert_eq!(
        s(&cmd!(
            r,
            "RESPLOCK.CLUSTER",
            "MIGRATE",
            format!("{slot}-{slot}"),
            c.node_id(0)
        )),
        ":1\r\n"
    );
    assert_eq!(c.owner(slot), Some(0));
    let by = s(&cmd!(
        r,
        "RESPLOCK.CLUSTER",
        "FAIL",
        format!("127.0.0.1:{}", c.addrs()[1].port())
    ));
    assert_eq!(
        by,
        format!("$40\r\n{}\r\n", c.node_id(c.owner(6000).unwrap()))
    );
    assert_eq!(s(&cmd!(r, "RESPLOCK.CLUSTER", "HEAL", "ALL")), "+OK\r\n");
    assert_eq!(
        s(&cmd!(r, "RESPLOCK.CLUSTER", "FAIL", "nope")),
        "-ERR Unknown node nope\r\n"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wait_on_a_master_counts_its_replica_until_it_is_cut_off() {
    let c = cluster(3, 1).await;
    let (owner, _) = owner_and_other(&c, "{wt}");
    let replica = c.replicas_of(owner)[0];
    let mut w = raw(&c, owner).await;
    assert_eq!(s(&cmd!(w, "SET", "{wt}a", "1")), "+OK\r\n");
    assert_eq!(s(&cmd!(w, "WAIT", "1", "5000")), ":1\r\n");
    assert_eq!(s(&cmd!(w, "WAIT", "2", "100")), ":1\r\n");
    c.nodes()[replica].db(0).assert_value("{wt}a", "1");
    // A replica cut off acknowledges nothing more: WAIT times out with 0.
    c.partition(replica, false).await.unwrap();
    assert_eq!(s(&cmd!(w, "SET", "{wt}b", "1")), "+OK\r\n");
    assert_eq!(s(&cmd!(w, "WAIT", "1", "100")), ":0\r\n");
    c.heal(replica).await.unwrap();
    assert!(c.wait_for_replicas(Duration::from_secs(5)).await);
    assert_eq!(s(&cmd!(w, "SET", "{wt}c", "1")), "+OK\r\n");
    assert_eq!(s(&cmd!(w, "WAIT", "1", "5000")), ":1\r\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_partitioned_master_with_a_replica_is_replaced_and_heals_as_its_replica() {
    let c = cluster(3, 1).await;
    let (owner, other) = owner_and_other(&c, "{pt}");
    let replica = c.replicas_of(owner)[0];
    let mut w = raw(&c, owner).await;
    assert_eq!(s(&cmd!(w, "SET", "{pt}a", "1")), "+OK\r\n");
    assert_eq!(s(&cmd!(w, "WAIT", "1", "5000")), ":1\r\n");
    c.partition(owner, true).await.unwrap();
    assert!(c.masters().contains(&replica));
    let mut o = raw(&c, other).await;
    let moved = s(&cmd!(o, "GET", "{pt}a"));
    assert_eq!(
        moved,
        format!(
            "-MOVED {} 127.0.0.1:{}\r\n",
            Cluster::slot_of("{pt}a"),
            c.addrs()[replica].port()
        )
    );
    c.nodes()[replica].db(0).assert_value("{pt}a", "1");
    c.heal(owner).await.unwrap();
    assert_eq!(c.replicas_of(replica), vec![owner]);
    assert!(c.wait_for_replicas(Duration::from_secs(5)).await);
    c.nodes()[owner].db(0).assert_value("{pt}a", "1");
}

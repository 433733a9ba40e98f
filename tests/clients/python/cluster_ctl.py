"""Shared by the cluster scenarios: the cluster under test (RESPLOCK_NODES, every node's
address, from run-all.sh's cluster mode: `resplock --cluster 3 --replicas 1`, or a real Redis
Cluster of 6 redis-server nodes) driven by plain per-node connections, with the commands an
operator uses on a real cluster, so the same scenario runs against both:

- moving a slot: CLUSTER SETSLOT IMPORTING / MIGRATING, the keys moved (MIGRATE on
  redis-server; RESPLOCK.CLUSTER MOVEKEYS on resplock, whose nodes share one process), then
  CLUSTER SETSLOT NODE on every master, as `redis-cli --cluster reshard` does;
- a failover: CLUSTER FAILOVER on a replica, which waits for it to catch up first;
- a master that fails (not gracefully): RESPLOCK.CLUSTER FAIL on resplock; on redis-server
  its process killed with SIGKILL (its pid from INFO server), its replica elected once the
  others have flagged it fail (cluster-node-timeout, then the election).

CLUSTER_KIND (resplock or redis-server) says which of the two it is."""

import os
import signal
import time

import redis

NODES = [(h, int(p)) for h, p in (n.rsplit(":", 1) for n in os.environ["RESPLOCK_NODES"].split(","))]
KIND = os.environ.get("CLUSTER_KIND", "resplock")
# Ports of the nodes failed by fail_master (the address lists name a node 0.0.0.0 or
# 127.0.0.1): no longer asked anything.
GONE = set()


def up():
    """The first node not failed."""
    return next(a for a in NODES if a[1] not in GONE)


def node(addr):
    """A plain connection to one node (host, port)."""
    return redis.Redis(host=addr[0], port=addr[1], socket_timeout=5, decode_responses=True)


def topology():
    """The cluster as a node sees it: {id: {addr, master (bool), flags, of (its master's id),
    slots}}."""
    text = node(up()).execute_command("CLUSTER", "NODES")
    out = {}
    for line in text.splitlines():
        f = line.split()
        host, port = f[1].split("@")[0].rsplit(":", 1)
        slots = []
        for s in f[8:]:
            if s.startswith("["):
                continue
            a, _, b = s.partition("-")
            slots.append((int(a), int(b or a)))
        out[f[0]] = {"addr": (host, int(port)), "master": "master" in f[2], "flags": f[2], "of": f[3], "slots": slots}
    return out


def owner(slot):
    """The id of the master serving slot."""
    for nid, n in topology().items():
        if n["master"] and any(a <= slot <= b for a, b in n["slots"]):
            return nid
    raise AssertionError(f"no master serves slot {slot}")


def keyslot(key):
    return node(up()).execute_command("CLUSTER", "KEYSLOT", key)


def wait(cond, what, limit=30.0):
    deadline = time.monotonic() + limit
    while True:
        try:
            if cond():
                return
        except redis.exceptions.RedisError:
            pass
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out: {what}")
        time.sleep(0.05)


def begin_migration(slot, dst_id):
    """Mark slot as moving from its owner to dst_id; returns (src_id, dst_id)."""
    topo = topology()
    src_id = owner(slot)
    node(topo[dst_id]["addr"]).execute_command("CLUSTER", "SETSLOT", slot, "IMPORTING", src_id)
    node(topo[src_id]["addr"]).execute_command("CLUSTER", "SETSLOT", slot, "MIGRATING", dst_id)
    return src_id, dst_id


def move_keys(slot, src_id, dst_id, count):
    """Move up to count of slot's keys from src to dst; returns how many moved."""
    topo = topology()
    src = node(topo[src_id]["addr"])
    keys = src.execute_command("CLUSTER", "GETKEYSINSLOT", slot, count)
    if not keys:
        return 0
    host, port = topo[dst_id]["addr"]
    if KIND == "redis-server":
        src.execute_command("MIGRATE", host, port, "", 0, 5000, "KEYS", *keys)
    else:
        src.execute_command("RESPLOCK.CLUSTER", "MOVEKEYS", f"{host}:{port}", *keys)
    return len(keys)


def end_migration(slot, src_id, dst_id):
    """Give slot to dst_id on every master, then wait until every node says so."""
    topo = topology()
    order = [dst_id, src_id] + [i for i, n in topo.items() if n["master"] and i not in (src_id, dst_id)]
    for nid in order:
        node(topo[nid]["addr"]).execute_command("CLUSTER", "SETSLOT", slot, "NODE", dst_id)

    def everywhere():
        for addr in NODES:
            if addr[1] in GONE:
                continue
            for r in node(addr).execute_command("CLUSTER", "SLOTS"):
                if r[0] <= slot <= r[1] and (r[2][0], r[2][1]) != tuple(topo[dst_id]["addr"]):
                    return False
        return True

    wait(everywhere, f"every node to see slot {slot} on its new owner")


def failover(master_id):
    """CLUSTER FAILOVER on master_id's replica; returns the replica's id once it is master
    and every node sees it so."""
    topo = topology()
    replica_id = next(i for i, n in topo.items() if n["of"] == master_id)
    rep = node(topo[replica_id]["addr"])
    rep.execute_command("CLUSTER", "FAILOVER")
    wait(lambda: rep.execute_command("ROLE")[0] == "master", "the replica to take over")
    slots = topo[master_id]["slots"]

    def everywhere():
        for addr in NODES:
            if addr[1] in GONE:
                continue
            for r in node(addr).execute_command("CLUSTER", "SLOTS"):
                if r[0] == slots[0][0] and (r[2][0], r[2][1]) != tuple(topo[replica_id]["addr"]):
                    return False
        return True

    wait(everywhere, "every node to see the new master")
    return replica_id


def fail_master(master_id, how="fail"):
    """Fail master_id (not gracefully); returns its replica's id once it is master and every
    node still up sees it so. With how "partition" (resplock only), RESPLOCK.CLUSTER PARTITION
    cuts it off from the other nodes and its clients instead; its replica takes over the same
    way."""
    topo = topology()
    replica_id = next(i for i, n in topo.items() if n["of"] == master_id)
    addr = topo[master_id]["addr"]
    if how == "partition":
        other = next(a for a in NODES if a[1] != addr[1] and a[1] not in GONE)
        node(other).execute_command("RESPLOCK.CLUSTER", "PARTITION", master_id)
    elif KIND == "redis-server":
        os.kill(int(node(addr).info("server")["process_id"]), signal.SIGKILL)
    else:
        other = next(a for a in NODES if a[1] != addr[1] and a[1] not in GONE)
        node(other).execute_command("RESPLOCK.CLUSTER", "FAIL", master_id)
    GONE.add(addr[1])
    rep = node(topo[replica_id]["addr"])
    wait(lambda: rep.execute_command("ROLE")[0] == "master", "the replica to be elected", 60)
    first = topo[master_id]["slots"][0][0]

    def everywhere():
        for a in NODES:
            if a[1] in GONE:
                continue
            for r in node(a).execute_command("CLUSTER", "SLOTS"):
                if r[0] == first and (r[2][0], r[2][1]) != tuple(topo[replica_id]["addr"]):
                    return False
        return True

    wait(everywhere, "every node to see the new master")
    return replica_id


def topology_by_port():
    """topology() keyed by each node's port."""
    return {n["addr"][1]: n for n in topology().values()}


def heal_all():
    """RESPLOCK.CLUSTER HEAL ALL (resplock only): every node cut off comes back, a replaced
    master as a replica of its successor. Returns their addresses once they replicate again."""
    back = [a for a in NODES if a[1] in GONE]
    node(up()).execute_command("RESPLOCK.CLUSTER", "HEAL", "ALL")
    GONE.clear()
    for a in back:
        wait(lambda a=a: node(a).info("replication").get("master_link_status") == "up",
             f"{a[1]} to replicate again")
    return back

"""redis-py's RedisCluster against a cluster (resplock --cluster 3 --replicas 1, or a real
Redis Cluster): reads and writes across slots, a pipeline across slots, a slot migration
followed through ASK then MOVED, a failover under a stream of writes with no acknowledged
write lost, and a master that fails under writes (RESPLOCK.CLUSTER FAIL, or SIGKILL on a real
cluster), every write acknowledged by WAIT 1 read back from the new master. Started by
run-all.sh with every node's address in RESPLOCK_NODES."""

import sys
import threading
import time
import traceback

import redis
from redis.cluster import ClusterNode, RedisCluster

import cluster_ctl as ctl

LIBRARY = "redis-py-cluster"
results = {"passed": 0, "failed": 0}


def step(name, fn):
    started = time.monotonic()
    try:
        if fn() == "n/a":
            print(f"n/a  {LIBRARY}: {name}")
            sys.stdout.flush()
            return
    except Exception:  # noqa: BLE001 - every failure is reported the same way
        results["failed"] += 1
        print(f"FAIL {LIBRARY}: {name}")
        traceback.print_exc()
    else:
        results["passed"] += 1
        print(f"ok   {LIBRARY}: {name} ({time.monotonic() - started:.2f}s)")
    sys.stdout.flush()


def check(cond, what):
    if not cond:
        raise AssertionError(what)


rc = RedisCluster(startup_nodes=[ClusterNode(h, p) for h, p in ctl.NODES], decode_responses=True,
                  socket_timeout=5)


def across_slots():
    keys = [f"rw:{i}" for i in range(300)]
    check(len({ctl.keyslot(k) for k in keys[:30]}) == 30, "the keys spread over slots")
    for i, k in enumerate(keys):
        check(rc.set(k, i), f"SET {k}")
    for i, k in enumerate(keys):
        check(rc.get(k) == str(i), f"GET {k}")
    owners = {ctl.owner(ctl.keyslot(k)) for k in keys[:30]}
    check(len(owners) == 3, f"the keys live on the three masters ({len(owners)})")
    check(rc.incr("rw:{t}counter") == 1 and rc.incr("rw:{t}counter") == 2, "INCR")
    check(rc.mset({"{t}a": "1", "{t}b": "2"}) and rc.mget("{t}a", "{t}b") == ["1", "2"],
          "MSET/MGET within one hash tag")


def pipeline_across_slots():
    p = rc.pipeline()
    for i in range(200):
        p.set(f"pipe:{i}", i)
    for i in range(200):
        p.get(f"pipe:{i}")
    got = p.execute()
    check(got[:200] == [True] * 200, "every SET of the pipeline acknowledged")
    check(got[200:] == [str(i) for i in range(200)], "every GET of the pipeline read back")


def migration():
    tag = "{mig}"
    slot = ctl.keyslot(tag)
    keys = [f"{tag}k{i}" for i in range(40)]
    for k in keys:
        rc.set(k, k)
    src = ctl.owner(slot)
    dst = next(i for i, n in ctl.topology().items() if n["master"] and i != src)
    ctl.begin_migration(slot, dst)
    moved = ctl.move_keys(slot, src, dst, 20)
    check(moved == 20, f"half the keys moved ({moved})")
    # Half on each side: the client follows ASK for the moved ones.
    for k in keys:
        check(rc.get(k) == k, f"GET {k} mid-migration")
    rc.set(f"{tag}born", "during")
    while ctl.move_keys(slot, src, dst, 100):
        pass
    ctl.end_migration(slot, src, dst)
    # Now MOVED: the client learns the new owner and reads every key there.
    for k in keys + [f"{tag}born"]:
        check(rc.get(k) == (k if k != f"{tag}born" else "during"), f"GET {k} after the migration")
    check(ctl.owner(slot) == dst, "the slot has its new owner")
    check(rc.get_node_from_key(keys[0]).port == ctl.topology()[dst]["addr"][1],
          "the client's slot map follows the move")


def failover():
    key = "fo:{x}n"
    slot = ctl.keyslot(key)
    master = ctl.owner(slot)
    acked = []
    stop = threading.Event()
    errors = []

    def writer():
        i = 0
        while not stop.is_set():
            i += 1
            try:
                rc.set(f"fo:{{x}}{i}", i)
                acked.append(i)
            except redis.exceptions.RedisError as e:  # retried by the next write
                errors.append(repr(e))
                time.sleep(0.05)

    t = threading.Thread(target=writer)
    t.start()
    try:
        time.sleep(0.3)
        new = ctl.failover(master)
        time.sleep(0.3)
    finally:
        stop.set()
        t.join(30)
    check(len(acked) > 10, f"writes went on ({len(acked)} acknowledged, errors {errors[:3]})")
    lost = [i for i in acked if rc.get(f"fo:{{x}}{i}") != str(i)]
    check(not lost, f"no acknowledged write lost ({len(lost)} of {len(acked)}: {lost[:5]})")
    check(ctl.owner(slot) == new, "the replica serves the slot now")
    check(rc.set(key, "after") and rc.get(key) == "after", "writes after the failover")
    check(rc.get_node_from_key(key).port == ctl.topology()[new]["addr"][1],
          "the client's slot map follows the failover")


# A master fails under writes: at most WRITES writes, for at most FAIL_BUDGET seconds, over
# keys spread across every master. A write counts as acknowledged only when its SET answered
# and WAIT 1 on the connection that wrote it (the client's pool for the key's node, one writer
# thread: the same connection) answered 1. The client finds the new master by itself (its
# refresh on connection errors and MOVED); writes to the failed master's slots succeed again
# after the failover, their WAIT answering 0 there (the new master has no replica left).
WRITES = 20000
FAIL_BUDGET = 60.0
WAIT_MS = 300


def acked_set(k, v):
    """SET, then WAIT 1 on the connection that took it: WAIT's answer."""
    check(rc.set(k, v), f"SET {k}")
    return rc.execute_command("WAIT", 1, WAIT_MS, target_nodes=rc.get_node_from_key(k))


def master_fails(how="fail"):
    victim = ctl.owner(ctl.keyslot("mf:{victim}"))
    victim_slots = ctl.topology()[victim]["slots"]
    keys = [f"{how}:{i}" for i in range(WRITES)]
    on_victim = {k for k in keys if any(a <= rc.keyslot(k) <= b for a, b in victim_slots)}
    acked = {}
    errors = []
    state = {"failed": False, "before": 0, "after_on_victim": 0, "after_acked": 0}
    end = time.monotonic() + FAIL_BUDGET

    def writer():
        for i, k in enumerate(keys):
            if time.monotonic() > end or (
                state["failed"] and state["after_on_victim"] >= 20 and state["after_acked"] >= 20
            ):
                break
            try:
                replicas = acked_set(k, f"v{i}")
            except redis.exceptions.RedisError as e:  # not acknowledged; the next write retries
                errors.append(repr(e))
                time.sleep(0.05)
                continue
            if replicas >= 1:
                acked[k] = f"v{i}"
                if state["failed"]:
                    state["after_acked"] += 1
                elif k in on_victim:
                    state["before"] += 1
            if state["failed"] and k in on_victim:
                state["after_on_victim"] += 1

    t = threading.Thread(target=writer)
    t.start()
    try:
        time.sleep(0.5)
        new = ctl.fail_master(victim, how)
    finally:
        state["failed"] = True
        t.join(FAIL_BUDGET + 30)
    check(not t.is_alive(), "the writer finished")
    check(state["before"] > 0, f"writes acknowledged on the failing master first ({state['before']})")
    check(state["after_on_victim"] >= 20,
          f"the client writes to the new master by itself ({state['after_on_victim']}; errors {errors[-3:]})")
    check(state["after_acked"] >= 20, f"acknowledged writes went on after the failover ({state['after_acked']})")
    check(ctl.owner(ctl.keyslot("mf:{victim}")) == new, "the replica serves the slots now")
    topo = ctl.topology()
    lost = [k for k, v in acked.items()
            if rc.get(k) != v or ctl.node(topo[ctl.owner(ctl.keyslot(k))]["addr"]).get(k) != v]
    check(not lost, f"no acknowledged write lost ({len(lost)} of {len(acked)}: {lost[:5]})")
    print(f"     {len(acked)} writes acknowledged ({state['before']} on the failed master), "
          f"{len(errors)} errors while it failed")


def partition_and_heal():
    """resplock only: the failed master healed comes back as a replica of its successor; that
    successor, partitioned under writes (RESPLOCK.CLUSTER PARTITION), is replaced the same way
    with no acknowledged write lost, and healed comes back as a replica too."""
    if ctl.KIND != "resplock":
        return "n/a"
    old = ctl.heal_all()
    check(not ctl.topology_by_port()[old[0][1]]["master"], "the failed master came back as a replica")
    master_fails("partition")
    cut = ctl.heal_all()
    check(not ctl.topology_by_port()[cut[0][1]]["master"], "the partitioned master came back as a replica")
    return None


step("reads and writes across slots", across_slots)
step("a pipeline across slots", pipeline_across_slots)
step("a slot migration: ASK, then MOVED", migration)
step("a failover under writes: no acknowledged write lost", failover)
step("a master fails under writes: every write WAIT acknowledged survives", master_fails)
step("resplock only: the failed master healed, then its successor partitioned under writes and healed",
     partition_and_heal)
print(f"{LIBRARY}: {results['passed']} passed, {results['failed']} failed")
sys.exit(1 if results["failed"] else 0)

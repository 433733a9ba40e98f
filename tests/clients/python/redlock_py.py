"""redlock-py (the reference Redlock of redis.io's list: SET NX PX on each node, Lua
release, quorum of 3). It has no extend."""

import logging
import time

from redlock import Lock, MultipleRedlockException, Redlock

from harness import (Exclusion, NODE_NAMES, NODES, RECORDER, ROUNDS, WORKERS, advance_clock,
                     check, client, clients, finish, no_retry, pause, run_threads, stop, step,
                     unpause)

# redlock-py logs every failed unlock with its traceback: expected here (stopped node).
logging.disable(logging.CRITICAL)
nodes = [
    {"host": h, "port": p, "socket_timeout": 2, "socket_connect_timeout": 2, "retry": no_retry()}
    for h, p in NODES
]
dlm = Redlock(nodes, retry_count=1)
masters = clients()


def on_nodes():
    return sum(1 for m in masters if m.exists("res"))


def acquire():
    check(dlm.lock("res", 10_000), "first acquire")
    check(on_nodes() == 3, "held on every node")


def contention():
    check(dlm.lock("res", 10_000), "first acquire")
    check(not dlm.lock("res", 10_000), "second locker fails")
    check(on_nodes() == 3, "the failed attempt left the holder's keys")


def release():
    lock = dlm.lock("res", 10_000)
    check(lock, "acquire")
    dlm.unlock(lock)
    check(on_nodes() == 0, "released everywhere")


def release_by_non_owner():
    lock = dlm.lock("res", 10_000)
    check(lock, "acquire")
    dlm.unlock(Lock(lock.validity, "res", b"not-the-owner"))
    check(on_nodes() == 3, "still held")


def mutual_exclusion():
    excl = Exclusion(client(0, socket_timeout=5))

    def worker(i):
        me = f"worker-{i}"
        mine = Redlock(nodes, retry_count=1, retry_delay=0.001)
        for _ in range(ROUNDS):
            deadline = time.monotonic() + 60
            # The attempts until one succeeds are one acquire, as the caller sees it.
            with RECORDER.op(me, "acquire", "res", ttl_ms=10_000, nodes=NODE_NAMES) as got:
                while not (lock := mine.lock("res", 10_000)):
                    check(time.monotonic() < deadline, "starved")
                    time.sleep(0.002)
                got.ok = True
                got.token = lock.key
            with RECORDER.op(me, "use", "res", token=lock.key, nodes=NODE_NAMES,
                             resource="exclusion:counter"):
                excl.enter()
            with RECORDER.op(me, "release", "res", token=lock.key, nodes=NODE_NAMES) as done:
                mine.unlock(lock)
                done.ok = True

    run_threads(worker)
    check(excl.overlaps == 0, f"{excl.overlaps} overlaps")
    check(int(client(0).get("exclusion:counter")) == WORKERS * ROUNDS, "no lost update")


def expiry_by_clock():
    check(dlm.lock("res", 10_000), "acquire")
    check(not dlm.lock("res", 10_000), "held")
    advance_clock(10_001)
    check(dlm.lock("res", 10_000), "the lease ran out when the clock moved")


def quorum():
    stop(2)
    try:
        dlm.lock("res", 10_000)
    except MultipleRedlockException:
        # redlock-py reaches the quorum and still raises, reporting the stopped node.
        pass
    else:
        raise AssertionError("the stopped node's error was not reported")
    check(on_nodes_up(2) == 2, "held on the 2 live nodes: a quorum")
    # The test wipes the lock it has no handle for (redlock-py raised): a flush, which the
    # lock history takes as the test's reset, where a DEL of someone's lock is a violation.
    for m in masters[:2]:
        m.flushall()
    pause(1, 10_000)
    try:
        try:
            got = dlm.lock("res", 10_000)
        except MultipleRedlockException:
            got = False
        check(not got, "1 of 3 is no quorum")
    finally:
        unpause(1)


def on_nodes_up(n):
    return sum(1 for m in masters[:n] if m.exists("res"))


for name, fn in [
    ("acquire", acquire),
    ("contention", contention),
    ("release", release),
    ("release by a non-owner", release_by_non_owner),
    ("mutual exclusion, 20 workers", mutual_exclusion),
    ("expiry by moving the clock", expiry_by_clock),
    ("quorum with one node stopped and one paused", quorum),
]:
    step(name, fn)
print("n/a  redlock_py.py: extend (redlock-py has no extend)")
finish()

"""pottery's Redlock (SET NX PX and Lua release/extend on each master, quorum of 3)."""

from pottery import Redlock
from pottery.exceptions import ReleaseUnlockedLock

from harness import (Exclusion, NODE_NAMES, RECORDER, ROUNDS, WORKERS, advance_clock, check,
                     client, clients, eventually, finish, pause, run_threads, stop, step,
                     unpause)

masters = clients()


def lock(**kw):
    kw.setdefault("auto_release_time", 10)
    return Redlock(key="res", masters=masters, **kw)


def on_nodes():
    return sum(1 for m in masters if m.exists("redlock:res"))


def acquire():
    a = lock()
    check(a.acquire(blocking=False), "first acquire")
    eventually(lambda: on_nodes() == 3, "held on every master")


def contention():
    a = lock()
    check(a.acquire(blocking=False), "first acquire")
    b = lock()
    check(not b.acquire(blocking=False), "second locker fails at once")
    check(not b.acquire(timeout=0.3), "second locker waits, then fails")


def extend():
    a = lock()
    check(a.acquire(blocking=False), "acquire")
    advance_clock(6_000)
    check(all(m.pttl("redlock:res") <= 4000 for m in masters), "4 s left")
    a.extend()
    # pottery returns once a quorum extended; the last master may answer just after.
    eventually(lambda: all(m.pttl("redlock:res") > 8000 for m in masters), "a full lease again")


def release():
    a = lock()
    check(a.acquire(blocking=False), "acquire")
    a.release()
    eventually(lambda: on_nodes() == 0, "released everywhere")


def release_by_non_owner():
    a = lock()
    check(a.acquire(blocking=False), "acquire")
    try:
        lock().release()
    except ReleaseUnlockedLock:
        pass
    else:
        raise AssertionError("a non-owner released the lock")
    eventually(lambda: on_nodes() == 3, "still held")
    check(a.locked() > 0, "still the owner's")


def mutual_exclusion():
    excl = Exclusion(client(0, socket_timeout=5))

    def worker(i):
        me = f"worker-{i}"
        for _ in range(ROUNDS):
            mine = lock()
            # pottery names the key redlock:<key> and makes its token (_uuid) in acquire.
            with RECORDER.op(me, "acquire", "redlock:res", ttl_ms=10_000, nodes=NODE_NAMES) as got:
                got.ok = mine.acquire()
                got.token = mine._uuid
            check(got.ok, "acquired")
            with RECORDER.op(me, "use", "redlock:res", token=got.token, nodes=NODE_NAMES,
                             resource="exclusion:counter"):
                excl.enter()
            with RECORDER.op(me, "release", "redlock:res", token=got.token,
                             nodes=NODE_NAMES) as done:
                mine.release()
                done.ok = True

    run_threads(worker)
    check(excl.overlaps == 0, f"{excl.overlaps} overlaps")
    check(int(client(0).get("exclusion:counter")) == WORKERS * ROUNDS, "no lost update")


def expiry_by_clock():
    a = lock()
    check(a.acquire(blocking=False), "acquire")
    check(not lock().acquire(blocking=False), "held")
    advance_clock(10_001)
    check(lock().acquire(blocking=False), "the lease ran out when the clock moved")


def quorum():
    stop(2)
    a = lock()
    check(a.acquire(blocking=False), "2 of 3 masters are a quorum")
    a.release()
    pause(1, 10_000)
    try:
        check(not lock().acquire(blocking=False), "1 of 3 is no quorum")
    finally:
        unpause(1)


for name, fn in [
    ("acquire", acquire),
    ("contention", contention),
    ("extend", extend),
    ("release", release),
    ("release by a non-owner", release_by_non_owner),
    ("mutual exclusion, 20 workers", mutual_exclusion),
    ("expiry by moving the clock", expiry_by_clock),
    ("quorum with one master stopped and one paused", quorum),
]:
    step(name, fn)
finish()

"""redis-py's Lock (redis.lock.Lock: SET NX PX, Lua release and extend) against one node."""

from redis.exceptions import LockNotOwnedError

from harness import (Exclusion, RECORDER, ROUNDS, WORKERS, advance_clock, check, client, finish,
                     run_threads, step)

r = client(socket_timeout=5)


def acquire():
    lock = r.lock("res", timeout=10)
    check(lock.acquire(blocking=False), "first acquire")
    check(r.get("res") == lock.local.token, "the key holds the owner's token")
    check(r.pttl("res") > 9000, "a 10 s lease")


def contention():
    a = r.lock("res", timeout=10)
    check(a.acquire(blocking=False), "first acquire")
    b = r.lock("res", timeout=10)
    check(not b.acquire(blocking=False), "second locker fails at once")
    check(not b.acquire(blocking=True, blocking_timeout=0.3), "second locker waits, then fails")


def extend():
    lock = r.lock("res", timeout=10)
    check(lock.acquire(blocking=False), "acquire")
    check(lock.extend(20), "extend")
    check(r.pttl("res") > 29000, "10 s + 20 s left")
    check(lock.extend(5, replace_ttl=True) and r.pttl("res") <= 5000, "replace the lease")


def release():
    lock = r.lock("res", timeout=10)
    check(lock.acquire(blocking=False), "acquire")
    lock.release()
    check(r.exists("res") == 0, "released")
    check(r.lock("res", timeout=10).acquire(blocking=False), "free for the next one")


def release_by_non_owner():
    owner = r.lock("res", timeout=10)
    check(owner.acquire(blocking=False), "acquire")
    thief = r.lock("res", timeout=10)
    thief.local.token = b"not-the-owner"
    try:
        thief.release()
    except LockNotOwnedError:
        pass
    else:
        raise AssertionError("a non-owner released the lock")
    check(r.get("res") == owner.local.token, "still the owner's")


def mutual_exclusion():
    excl = Exclusion(r)

    def worker(i):
        me = f"worker-{i}"
        for _ in range(ROUNDS):
            lock = r.lock("res", timeout=10, blocking_timeout=60, sleep=0.005)
            with RECORDER.op(me, "acquire", "res", ttl_ms=10_000) as got:
                got.ok = lock.acquire()
                got.token = lock.local.token
            check(got.ok, "acquired within 60 s")
            with RECORDER.op(me, "use", "res", token=got.token, resource="exclusion:counter"):
                excl.enter()
            with RECORDER.op(me, "release", "res", token=got.token) as done:
                lock.release()
                done.ok = True

    run_threads(worker)
    check(excl.overlaps == 0, f"{excl.overlaps} overlaps")
    check(int(r.get("exclusion:counter")) == WORKERS * ROUNDS, "no lost update")


def expiry_by_clock():
    a = r.lock("res", timeout=10)
    check(a.acquire(blocking=False), "acquire")
    b = r.lock("res", timeout=10)
    check(not b.acquire(blocking=False), "held")
    advance_clock(10_001)
    check(b.acquire(blocking=False), "the lease ran out when the clock moved")
    try:
        a.release()
    except LockNotOwnedError:
        pass
    else:
        raise AssertionError("the expired owner released the new owner's lock")


for name, fn in [
    ("acquire", acquire),
    ("contention", contention),
    ("extend", extend),
    ("release", release),
    ("release by a non-owner", release_by_non_owner),
    ("mutual exclusion, 20 workers", mutual_exclusion),
    ("expiry by moving the clock", expiry_by_clock),
]:
    step(name, fn)
finish()

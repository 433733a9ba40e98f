"""python-redis-lock (redis_lock.Lock: SET NX EX, waiters blocked in BLPOP on a signal list
that the release script LPUSHes) against one node."""

import threading

import redis_lock

from harness import (Exclusion, RECORDER, ROUNDS, WORKERS, advance_clock, check, client, finish,
                     run_threads, step)

r = client(socket_timeout=15)


def acquire():
    lock = redis_lock.Lock(r, "res", expire=10)
    check(lock.acquire(blocking=False), "first acquire")
    check(r.get("lock:res") == lock.id.encode(), "the key holds the owner's id")


def contention():
    a = redis_lock.Lock(r, "res", expire=10)
    check(a.acquire(blocking=False), "first acquire")
    b = redis_lock.Lock(r, "res", expire=10)
    check(not b.acquire(blocking=False), "second locker fails at once")
    check(not b.acquire(timeout=1), "second locker waits in BLPOP, then fails")


def extend():
    lock = redis_lock.Lock(r, "res", expire=10)
    check(lock.acquire(blocking=False), "acquire")
    lock.extend(expire=30)
    check(r.ttl("lock:res") > 20, "extended to 30 s")


def release():
    lock = redis_lock.Lock(r, "res", expire=10)
    check(lock.acquire(blocking=False), "acquire")
    lock.release()
    check(r.exists("lock:res") == 0, "released")


def release_wakes_a_waiter():
    a = redis_lock.Lock(r, "res", expire=60)
    check(a.acquire(blocking=False), "acquire")
    got = threading.Event()

    def waiter():
        if redis_lock.Lock(r, "res", expire=60).acquire(timeout=10):
            got.set()

    t = threading.Thread(target=waiter, daemon=True)
    t.start()
    a.release()
    t.join(10)
    check(got.is_set(), "the waiter blocked in BLPOP got the lock")


def release_by_non_owner():
    owner = redis_lock.Lock(r, "res", expire=10)
    check(owner.acquire(blocking=False), "acquire")
    try:
        redis_lock.Lock(r, "res", id="not-the-owner").release()
    except redis_lock.NotAcquired:
        pass
    else:
        raise AssertionError("a non-owner released the lock")
    check(r.get("lock:res") == owner.id.encode(), "still the owner's")


def mutual_exclusion():
    excl = Exclusion(r)

    def worker(i):
        me = f"worker-{i}"
        for _ in range(ROUNDS):
            lock = redis_lock.Lock(r, "res", expire=10)
            with RECORDER.op(me, "acquire", "lock:res", token=lock.id, ttl_ms=10_000) as got:
                got.ok = lock.acquire()
            check(got.ok, "acquired")
            with RECORDER.op(me, "use", "lock:res", token=lock.id, resource="exclusion:counter"):
                excl.enter()
            with RECORDER.op(me, "release", "lock:res", token=lock.id) as done:
                lock.release()
                done.ok = True

    run_threads(worker)
    check(excl.overlaps == 0, f"{excl.overlaps} overlaps")
    check(int(r.get("exclusion:counter")) == WORKERS * ROUNDS, "no lost update")


def expiry_by_clock():
    a = redis_lock.Lock(r, "res", expire=10)
    check(a.acquire(blocking=False), "acquire")
    got = threading.Event()

    def waiter():
        # Blocks in BLPOP (timeout: the lease); moving the clock ends the wait and the lease.
        if redis_lock.Lock(r, "res", expire=10).acquire(blocking=True):
            got.set()

    t = threading.Thread(target=waiter, daemon=True)
    t.start()
    check(not got.wait(0.3), "held")
    advance_clock(10_001)
    t.join(10)
    check(got.is_set(), "the waiter got the lock when the clock moved past the lease")


for name, fn in [
    ("acquire", acquire),
    ("contention", contention),
    ("extend", extend),
    ("release", release),
    ("release wakes a waiter blocked in BLPOP", release_wakes_a_waiter),
    ("release by a non-owner", release_by_non_owner),
    ("mutual exclusion, 20 workers", mutual_exclusion),
    ("expiry by moving the clock", expiry_by_clock),
]:
    step(name, fn)
finish()

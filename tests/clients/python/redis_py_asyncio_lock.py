"""redis-py's asyncio Lock (redis.asyncio.lock.Lock) against one node."""

import asyncio

import redis.asyncio as aioredis
from redis.exceptions import LockNotOwnedError

from harness import NODES, RECORDER, ROUNDS, WORKERS, advance_clock, check, finish, step


def run(coro_fn):
    def go():
        async def main():
            h, p = NODES[0]
            r = aioredis.Redis(host=h, port=p, socket_timeout=5)
            try:
                await coro_fn(r)
            finally:
                await r.aclose()

        asyncio.run(asyncio.wait_for(main(), 120))

    return go


async def acquire(r):
    lock = r.lock("res", timeout=10)
    check(await lock.acquire(blocking=False), "first acquire")
    check(await r.get("res") == lock.local.token, "the key holds the owner's token")


async def contention(r):
    a = r.lock("res", timeout=10)
    check(await a.acquire(blocking=False), "first acquire")
    b = r.lock("res", timeout=10)
    check(not await b.acquire(blocking=False), "second locker fails at once")
    check(not await b.acquire(blocking_timeout=0.3), "second locker waits, then fails")


async def extend(r):
    lock = r.lock("res", timeout=10)
    check(await lock.acquire(blocking=False), "acquire")
    check(await lock.extend(20), "extend")
    check(await r.pttl("res") > 29000, "10 s + 20 s left")


async def release(r):
    lock = r.lock("res", timeout=10)
    check(await lock.acquire(blocking=False), "acquire")
    await lock.release()
    check(await r.exists("res") == 0, "released")


async def release_by_non_owner(r):
    owner = r.lock("res", timeout=10)
    check(await owner.acquire(blocking=False), "acquire")
    thief = r.lock("res", timeout=10)
    thief.local.token = b"not-the-owner"
    try:
        await thief.release()
    except LockNotOwnedError:
        pass
    else:
        raise AssertionError("a non-owner released the lock")
    check(await r.get("res") == owner.local.token, "still the owner's")


async def mutual_exclusion(r):
    state = {"inside": 0, "overlaps": 0}

    async def worker(i):
        me = f"worker-{i}"
        for _ in range(ROUNDS):
            lock = r.lock("res", timeout=10, blocking_timeout=60, sleep=0.005)
            with RECORDER.op(me, "acquire", "res", ttl_ms=10_000) as got:
                got.ok = await lock.acquire()
                got.token = lock.local.token
            check(got.ok, "acquired within 60 s")
            with RECORDER.op(me, "use", "res", token=got.token, resource="exclusion:counter"):
                state["inside"] += 1
                if state["inside"] > 1:
                    state["overlaps"] += 1
                n = int(await r.get("exclusion:counter") or 0)
                await asyncio.sleep(0.001)
                await r.set("exclusion:counter", n + 1)
                state["inside"] -= 1
            with RECORDER.op(me, "release", "res", token=got.token) as done:
                await lock.release()
                done.ok = True

    await asyncio.gather(*(worker(i) for i in range(WORKERS)))
    check(state["overlaps"] == 0, f"{state['overlaps']} overlaps")
    check(int(await r.get("exclusion:counter")) == WORKERS * ROUNDS, "no lost update")


async def expiry_by_clock(r):
    a = r.lock("res", timeout=10)
    check(await a.acquire(blocking=False), "acquire")
    b = r.lock("res", timeout=10)
    check(not await b.acquire(blocking=False), "held")
    advance_clock(10_001)
    check(await b.acquire(blocking=False), "the lease ran out when the clock moved")


for name, fn in [
    ("acquire", acquire),
    ("contention", contention),
    ("extend", extend),
    ("release", release),
    ("release by a non-owner", release_by_non_owner),
    ("mutual exclusion, 20 workers", mutual_exclusion),
    ("expiry by moving the clock", expiry_by_clock),
]:
    step(name, run(fn))
finish()

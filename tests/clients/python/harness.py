"""Shared by the Python lock-library scenarios: the resplock nodes under test (from
RESPLOCK_NODES, "host:port,host:port,host:port", started by run-all.sh with
--instances 3 --enable-test-commands yes), moving their clocks, pausing and stopping
them, a 20-worker mutual-exclusion run, and the step report run-all.sh counts."""

import os
import sys
import threading
import time
import traceback

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from lock_history import Recorder

NODES = [
    (h, int(p))
    for h, p in (n.rsplit(":", 1) for n in os.environ["RESPLOCK_NODES"].split(","))
]
LIBRARY = os.environ.get("SCENARIO", os.path.basename(sys.argv[0]))
# The clients' record of their lock operations (lock_history.py), written at the end to
# RESPLOCK_CLIENT_OPS for `resplock check` beside the server's history.
RECORDER = Recorder()
NODE_NAMES = [f"{h}:{p}" for h, p in NODES]
WORKERS = 20
ROUNDS = 5
_results = {"passed": 0, "failed": 0}


def client(i=0, **kw):
    """A redis-py client for node i; short timeouts, so a paused node fails within seconds."""
    h, p = NODES[i]
    kw.setdefault("socket_timeout", 2)
    kw.setdefault("socket_connect_timeout", 2)
    kw.setdefault("retry", no_retry())
    return redis.Redis(host=h, port=p, **kw)


def no_retry():
    """redis-py retries a failed command with backoff by default: against a stopped or
    paused node that turns each attempt into seconds. A lock library's own retry decides."""
    return Retry(NoBackoff(), 0)


def clients(**kw):
    return [client(i, **kw) for i in range(len(NODES))]


def control(i):
    """A connection for RESPLOCK.* commands. It sends nothing else (no CLIENT SETINFO
    handshake, no HELLO), since a paused node holds every other command, a new client's handshake
    included, and only RESPLOCK.* requests get through."""
    return client(i, lib_name=None, lib_version=None, protocol=2)


def advance_clock(ms, nodes=None):
    """Move the clock of every node (or of the given ones) by ms: leases run out now."""
    for i in nodes if nodes is not None else range(len(NODES)):
        control(i).execute_command("RESPLOCK.CLOCK", "ADVANCE", ms)


def pause(i, ms):
    control(i).execute_command("RESPLOCK.FAULT", "PAUSE", ms)


def unpause(i):
    control(i).execute_command("RESPLOCK.FAULT", "UNPAUSE")


def stop(i):
    """Stop node i for good (SHUTDOWN NOSAVE): connections are refused from now on."""
    try:
        client(i).shutdown(nosave=True)
    except redis.exceptions.ConnectionError:
        pass


def flush_all():
    for i in range(len(NODES)):
        try:
            client(i).flushall()
        except redis.exceptions.RedisError:
            pass


def step(name, fn):
    """Run one step of the scenario and report it; a failure does not stop the others."""
    flush_all()
    started = time.monotonic()
    try:
        fn()
    except Exception:  # noqa: BLE001 - every failure is reported the same way
        _results["failed"] += 1
        print(f"FAIL {LIBRARY}: {name}")
        traceback.print_exc()
    else:
        _results["passed"] += 1
        print(f"ok   {LIBRARY}: {name} ({time.monotonic() - started:.2f}s)")
    sys.stdout.flush()


def check(cond, what):
    if not cond:
        raise AssertionError(what)


def eventually(cond, what, limit=2.0):
    """cond() becomes true within limit seconds. For Redlock libraries that return once a
    quorum of masters answered and let the others finish in the background."""
    deadline = time.monotonic() + limit
    while not cond():
        if time.monotonic() > deadline:
            raise AssertionError(what)
        time.sleep(0.01)


class Exclusion:
    """The critical section the workers share: at most one inside at any time, and a
    read-modify-write of a counter key that loses updates unless the lock excludes."""

    def __init__(self, counter_client):
        self.inside = 0
        self.overlaps = 0
        self.guard = threading.Lock()
        self.r = counter_client

    def enter(self):
        with self.guard:
            self.inside += 1
            if self.inside > 1:
                self.overlaps += 1
        n = int(self.r.get("exclusion:counter") or 0)
        time.sleep(0.001)
        self.r.set("exclusion:counter", n + 1)
        with self.guard:
            self.inside -= 1


def run_threads(worker, count=WORKERS, limit=120):
    """Run count threads of worker(i) and wait (bounded) for all of them."""
    threads = [threading.Thread(target=worker, args=(i,), daemon=True) for i in range(count)]
    for t in threads:
        t.start()
    deadline = time.monotonic() + limit
    for t in threads:
        t.join(max(0.0, deadline - time.monotonic()))
    check(not any(t.is_alive() for t in threads), "workers still running after the time limit")


def finish():
    if os.environ.get("RESPLOCK_CLIENT_OPS"):
        RECORDER.save(os.environ["RESPLOCK_CLIENT_OPS"])
    p, f = _results["passed"], _results["failed"]
    print(f"{LIBRARY}: {p} passed, {f} failed")
    sys.exit(1 if f else 0)

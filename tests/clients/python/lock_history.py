"""Recording what a test's clients do to their locks, in resplock's client-ops format
(JSON lines that `resplock check HISTORY CLIENT-OPS` reads beside the server's history).

    rec = Recorder()
    with rec.op("worker-1", "acquire", "lock:a", token=tok, ttl_ms=30000) as r:
        r.ok = lock.acquire(blocking=False)
        r.token = lock.local.token      # a token the library made inside the call
    with rec.op("worker-1", "use", "lock:a", resource="counter", fence=n):
        ...
    rec.save("ops.jsonl")

A call that raises is recorded with an unknown result (it may have taken effect) and the
exception goes on; `ok` left unset is unknown too. Times are real time in microseconds.
Thread-safe. Bytes (keys, tokens) that are not UTF-8 are written the way resplock writes
them, as surrogate escapes.
"""

import contextlib
import json
import threading
import time


def now_us():
    return time.time_ns() // 1000


def _text(v):
    if isinstance(v, bytes):
        return v.decode("utf-8", "surrogateescape")
    return str(v)


class Result:
    """What the caller says about the operation: ok True (done), False (the lock said no),
    None (unknown); token, when the library makes the owner token inside the call."""

    def __init__(self):
        self.ok = None
        self.token = None


class Recorder:
    def __init__(self):
        self._ops = []
        self._mu = threading.Lock()

    @contextlib.contextmanager
    def op(self, client, op, lock, token=None, ttl_ms=None, add_ms=None, nodes=None,
           resource=None, fence=None, db=0):
        assert op in ("acquire", "release", "extend", "use"), op
        rec = {"op": op, "client": _text(client), "lock": _text(lock), "invoke": now_us()}
        result = Result()
        if op == "use":
            result.ok = True
        try:
            yield result
        except BaseException:
            result.ok = None
            raise
        finally:
            rec["complete"] = max(now_us(), rec["invoke"])
            rec["ok"] = result.ok
            if result.token is not None:
                token = result.token
            if token is not None:
                rec["token"] = _text(token)
            if ttl_ms is not None:
                rec["ttl"] = int(ttl_ms)
            if add_ms is not None:
                rec["add"] = int(add_ms)
            if nodes:
                rec["nodes"] = [_text(n) for n in nodes]
            if resource is not None:
                rec["resource"] = _text(resource)
            if fence is not None:
                rec["fence"] = int(fence)
            if db:
                rec["db"] = int(db)
            with self._mu:
                self._ops.append(rec)

    def ops(self):
        with self._mu:
            return list(self._ops)

    def lines(self):
        return "".join(
            json.dumps(o, ensure_ascii=False, separators=(",", ":")) + "\n" for o in self.ops()
        )

    def save(self, path):
        with open(path, "w", encoding="utf-8", errors="surrogateescape") as f:
            f.write(self.lines())

#!/usr/bin/env python3
"""Lock workloads against resplock and redis-server 7.0, side by side in one run.

    cargo build --release
    python3 benches/lock_compare.py [--bin target/release/resplock] [--rounds 3] [--scale 1]
                                    [--workers N] [--no-memory]

Each round starts a fresh redis-server (`--save '' --appendonly no`) and then a fresh resplock
on free loopback ports, the server pinned to CPU 1 and redis-benchmark to CPU 0 (taskset), and
runs the same workloads on both, alternating A B A B so that drift in the machine's speed
hits both. It prints per workload the median throughput of each, the ratio resplock/redis and
the server CPU microseconds per request (from /proc/PID/stat) and the median of the rounds' p99
latencies (redis-benchmark's, in microseconds), then memory per lock: a
million locks written through `redis-cli --pipe` into a fresh server of each kind, RSS growth
divided by the count. A ratio between about 0.85 and 1.15 means "equal" on a shared machine:
use more rounds to narrow it. Traffic stays on 127.0.0.1; every run is bounded by its count.
"""
import argparse
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time

UNLOCK = 'if redis.call("get",KEYS[1]) == ARGV[1] then return redis.call("del",KEYS[1]) else return 0 end'
# Redisson's reentrant acquire, as its RedissonLock sends it.
ACQUIRE = (
    "if (redis.call('exists', KEYS[1]) == 0) then redis.call('hincrby', KEYS[1], ARGV[2], 1); "
    "redis.call('pexpire', KEYS[1], ARGV[1]); return nil; end; "
    "if (redis.call('hexists', KEYS[1], ARGV[2]) == 1) then redis.call('hincrby', KEYS[1], ARGV[2], 1); "
    "redis.call('pexpire', KEYS[1], ARGV[1]); return nil; end; return redis.call('pttl', KEYS[1]);"
)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def cli(port, *args):
    return subprocess.run(["redis-cli", "-p", str(port), *args], capture_output=True, text=True).stdout.strip()


def wait_up(port):
    for _ in range(500):
        if cli(port, "PING") == "PONG":
            return
        time.sleep(0.01)
    sys.exit(f"server on {port} did not start")


class Server:
    """One server process pinned to CPU 1."""

    def __init__(self, kind, binary, workers):
        self.port = free_port()
        env = dict(os.environ)
        if kind == "redis":
            cmd = ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
                   "--appendonly", "no"]
        else:
            cmd = [os.path.abspath(binary), "--port", str(self.port), "--bind", "127.0.0.1", "--save", ""]
            if workers:
                env["RESPLOCK_WORKERS"] = str(workers)
        self.proc = subprocess.Popen(["taskset", "-c", "1", *cmd], stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL, env=env, cwd=tempfile.gettempdir())
        wait_up(self.port)

    def cpu_ticks(self):
        with open(f"/proc/{self.proc.pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return int(fields[11]) + int(fields[12])

    def rss(self):
        with open(f"/proc/{self.proc.pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
        return 0

    def stop(self):
        self.proc.terminate()
        self.proc.wait(timeout=30)


def workloads(sha_unlock, sha_acquire):
    """(name, clients, pipeline, requests, redis-benchmark arguments)."""
    r = ["-r", "1000000"]
    return [
        ("set_nx_px", 50, 1, 350000, r + ["SET", "lock:__rand_int__", "token", "NX", "PX", "30000"]),
        ("set_nx_px_p16", 50, 16, 1200000, r + ["SET", "lock:__rand_int__", "token", "NX", "PX", "30000"]),
        ("get", 50, 1, 350000, r + ["GET", "lock:__rand_int__"]),
        ("unlock_evalsha", 50, 1, 300000, r + ["EVALSHA", sha_unlock, "1", "lock:__rand_int__", "token"]),
        ("reentrant_acquire_evalsha", 50, 1, 200000,
         r + ["EVALSHA", sha_acquire, "1", "rlock:__rand_int__", "30000", "client-id:1"]),
        ("publish_0sub", 50, 1, 350000, ["PUBLISH", "chan", "msg"]),
        ("ping_mbulk_500c", 500, 1, 300000, ["-t", "ping_mbulk"]),
        ("ping_c1_mbulk", 1, 1, 100000, ["-t", "ping_mbulk"]),
    ]


def throughput(server, scale):
    """{workload: (requests per second, server CPU us per request, p99 latency us)}."""
    sha_u = cli(server.port, "SCRIPT", "LOAD", UNLOCK)
    sha_a = cli(server.port, "SCRIPT", "LOAD", ACQUIRE)
    out = {}
    hz = os.sysconf("SC_CLK_TCK")
    for name, c, p, n, args in workloads(sha_u, sha_a):
        n = max(1000, int(n * scale))
        cli(server.port, "FLUSHALL")
        k0 = server.cpu_ticks()
        res = subprocess.run(["taskset", "-c", "0", "redis-benchmark", "-p", str(server.port), "--csv",
                              "-c", str(c), "-P", str(p), "-n", str(n), *args],
                             capture_output=True, text=True, timeout=600)
        k1 = server.cpu_ticks()
        rows = [line.split('","') for line in res.stdout.splitlines()[1:] if line.count(",") >= 6]
        if not rows:
            print(f"# {name} failed: {res.stderr.strip()[:200]}", file=sys.stderr)
            continue
        rps = float(rows[0][1].strip('"'))
        # redis-benchmark's CSV: test, rps, avg, min, p50, p95, p99, max (latencies in ms).
        p99_us = 1000 * float(rows[0][6].strip('"'))
        out[name] = (rps, 1e6 * (k1 - k0) / hz / n, p99_us)
    return out


def lock_commands(kind, count):
    """RESP for `count` string locks (SET k uuid PX) or Redisson hash locks (HINCRBY + PEXPIRE)."""
    parts = []
    for i in range(count):
        if kind == "string_lock":
            k = f"lock:{i}"
            t = f"{i:08x}-4a5b-4c6d-8e9f-{i * 7919 % 10**12:012x}"
            parts.append(f"*5\r\n$3\r\nSET\r\n${len(k)}\r\n{k}\r\n${len(t)}\r\n{t}\r\n$2\r\nPX\r\n$6\r\n600000\r\n")
        else:
            k = f"rlock:{i}"
            parts.append(f"*4\r\n$7\r\nHINCRBY\r\n${len(k)}\r\n{k}\r\n$10\r\nclientid:1\r\n$1\r\n1\r\n"
                         f"*3\r\n$7\r\nPEXPIRE\r\n${len(k)}\r\n{k}\r\n$6\r\n600000\r\n")
    return "".join(parts).encode()


def memory_per_lock(server, kind, count):
    time.sleep(0.5)
    before = server.rss()
    subprocess.run(["redis-cli", "-p", str(server.port), "--pipe", "--pipe-timeout", "120"],
                   input=lock_commands(kind, count), capture_output=True, timeout=300)
    if cli(server.port, "DBSIZE") != str(count):
        print(f"# {kind}: DBSIZE is not {count}", file=sys.stderr)
    return (server.rss() - before) / count


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", default="target/release/resplock")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--scale", type=float, default=1.0, help="multiply every request count")
    ap.add_argument("--workers", type=int, default=0, help="RESPLOCK_WORKERS for resplock")
    ap.add_argument("--locks", type=int, default=1000000)
    ap.add_argument("--no-memory", action="store_true")
    a = ap.parse_args()
    if not os.access(a.bin, os.X_OK):
        sys.exit(f"no executable {a.bin} (cargo build --release first)")
    results = {"redis": [], "resplock": []}
    for r in range(a.rounds):
        for kind in ("redis", "resplock"):
            s = Server(kind, a.bin, a.workers)
            try:
                results[kind].append(throughput(s, a.scale))
            finally:
                s.stop()
    names = [w[0] for w in workloads("", "")]
    med = lambda kind, w, i: statistics.median(x[w][i] for x in results[kind] if w in x)
    print(f"{'workload':28} {'redis rps':>10} {'resplock rps':>13} {'ratio':>6} {'redis us/op':>12} {'resplock us/op':>15}"
          f" {'redis p99 us':>13} {'resplock p99 us':>16}")
    ratios = []
    for w in names:
        ra, rb = med("redis", w, 0), med("resplock", w, 0)
        ratios.append(rb / ra)
        print(f"{w:28} {ra:10.0f} {rb:13.0f} {rb / ra:6.2f} {med('redis', w, 1):12.2f} {med('resplock', w, 1):15.2f}"
              f" {med('redis', w, 2):13.0f} {med('resplock', w, 2):16.0f}")
    print(f"min throughput ratio resplock/redis: {min(ratios):.2f}")
    if not a.no_memory:
        for kind in ("string_lock", "redisson_hash_lock"):
            per = {}
            for server_kind in ("redis", "resplock"):
                s = Server(server_kind, a.bin, a.workers)
                try:
                    per[server_kind] = memory_per_lock(s, kind, a.locks)
                finally:
                    s.stop()
            print(f"memory {kind:20} redis {per['redis']:.0f} B/lock   resplock {per['resplock']:.0f} B/lock"
                  f"   ratio {per['resplock'] / per['redis']:.2f} (RSS growth over {a.locks} locks)")


if __name__ == "__main__":
    main()

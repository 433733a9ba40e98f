#!/usr/bin/env bash
# blocked_memory.sh [RESPLOCK_BIN] [N=10000]
# Memory per client blocked in BLPOP, side by side: start redis-server 7.0 and resplock on free
# loopback ports, open N connections to each, each sending `BLPOP wait:<i> 0` (a key of its
# own, so every client costs a registry entry too), check they are all blocked
# (INFO blocked_clients), and print the RSS growth per blocked client (KB) and in total (MB).
# Then one RPUSH per key wakes every client, to show none is lost, and the connections close.
# Needs `ulimit -n` above N (raised here when the hard limit allows). Loopback only; everything
# started here is stopped here.
set -u
BIN=${1:-target/release/resplock}
N=${2:-10000}
[ -x "$BIN" ] || { echo "no executable $BIN (cargo build --release first)"; exit 2; }
ulimit -n $((N + 200)) 2>/dev/null || { echo "cannot raise open-file limit to $((N + 200))"; exit 2; }
port() { python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])'; }
up() { for _ in $(seq 1 250); do redis-cli -p "$1" PING 2>/dev/null | grep -q PONG && return 0; sleep 0.02; done; return 1; }
measure() { # NAME PORT PID
  python3 - "$@" "$N" <<'PY'
import socket, sys, time
name, port, pid, n = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
rss = lambda: int(next(l.split()[1] for l in open(f"/proc/{pid}/status") if l.startswith("VmRSS:")))
def cmd(s, *args):
    s.sendall(b"".join([b"*%d\r\n" % len(args)] + [b"$%d\r\n%s\r\n" % (len(a), a) for a in args]))
admin = socket.create_connection(("127.0.0.1", port))
def info_blocked():
    cmd(admin, b"INFO", b"clients")
    data = b""
    while b"\r\n" not in data:
        data += admin.recv(65536)
    head, rest = data.split(b"\r\n", 1)
    while len(rest) < int(head[1:]) + 2:
        rest += admin.recv(65536)
    for line in rest.decode().split("\r\n"):
        if line.startswith("blocked_clients:"):
            return int(line.split(":")[1])
time.sleep(0.3); before = rss()
conns = []
for i in range(n):
    s = socket.create_connection(("127.0.0.1", port))
    cmd(s, b"BLPOP", b"wait:%d" % i, b"0")
    conns.append(s)
deadline = time.time() + 60
while info_blocked() != n:
    assert time.time() < deadline, "not every client blocked"
    time.sleep(0.1)
time.sleep(1.0); after = rss()
print(f"{name:9} {n} clients blocked in BLPOP: +{(after-before)/1024:.1f} MB RSS, {(after-before)/n:.2f} KB/blocked client")
for i in range(n):
    cmd(admin, b"RPUSH", b"wait:%d" % i, b"x")
    while not admin.recv(64).endswith(b"\r\n"):
        pass
for i, s in enumerate(conns):
    s.settimeout(10)
    want = b"*2\r\n$%d\r\nwait:%d\r\n$1\r\nx\r\n" % (len(b"wait:%d" % i), i)
    got = b""
    while len(got) < len(want):
        got += s.recv(256)
    assert got == want, (i, got)
    s.close()
print(f"{name:9} all {n} woken by one RPUSH each")
PY
}
P=$(port); D=$(mktemp -d)
redis-server --port "$P" --bind 127.0.0.1 --save '' --dir "$D" --appendonly no --maxclients $((N + 100)) --daemonize yes --pidfile "$D/r.pid" >/dev/null
up "$P" && measure redis "$P" "$(cat "$D/r.pid")"
redis-cli -p "$P" shutdown nosave >/dev/null 2>&1
P=$(port)
"$BIN" --port "$P" --bind 127.0.0.1 --save '' --dir "$D" --maxclients $((N + 100)) >"$D/resplock.log" 2>&1 & SP=$!
up "$P" && measure resplock "$P" "$SP"
kill "$SP" 2>/dev/null; wait "$SP" 2>/dev/null; rm -rf "$D"

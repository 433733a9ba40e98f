#!/usr/bin/env bash
# list_memory.sh [RESPLOCK_BIN] [LISTS=10000] [ELEMENTS=100]
# Memory per small list, side by side: start redis-server 7.0 and resplock on free loopback
# ports, create LISTS lists of ELEMENTS short strings each (`RPUSH list:<i> elem-0 ...`, sent
# pipelined), and print the RSS growth per list (bytes) for each server. Redis keeps such a
# list in one listpack node; so does resplock (types::list). Loopback only; everything started
# here is stopped here.
set -u
BIN=${1:-target/release/resplock}
LISTS=${2:-10000}
ELEMENTS=${3:-100}
[ -x "$BIN" ] || { echo "no executable $BIN (cargo build --release first)"; exit 2; }
port() { python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])'; }
up() { for _ in $(seq 1 250); do redis-cli -p "$1" PING 2>/dev/null | grep -q PONG && return 0; sleep 0.02; done; return 1; }
measure() { # NAME PORT PID
  python3 - "$@" "$LISTS" "$ELEMENTS" <<'PY'
import socket, sys, time
name, port, pid, lists, elements = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
rss = lambda: int(next(l.split()[1] for l in open(f"/proc/{pid}/status") if l.startswith("VmRSS:")))
s = socket.create_connection(("127.0.0.1", port))
def req(*args):
    return b"".join([b"*%d\r\n" % len(args)] + [b"$%d\r\n%s\r\n" % (len(a), a) for a in args])
time.sleep(0.3); before = rss()
items = [b"elem-%d" % j for j in range(elements)]
batch = 200
for start in range(0, lists, batch):
    n = min(batch, lists - start)
    s.sendall(b"".join(req(b"RPUSH", b"list:%d" % i, *items) for i in range(start, start + n)))
    want = b"".join(b":%d\r\n" % elements for _ in range(n))
    got = b""
    while len(got) < len(want):
        got += s.recv(1 << 16)
    assert got == want, got[:100]
time.sleep(1.0); after = rss()
print(f"{name:9} {lists} lists of {elements} short strings: +{(after-before)/1024:.1f} MB RSS, {(after-before)*1024/lists:.0f} B/list")
PY
}
P=$(port); D=$(mktemp -d)
redis-server --port "$P" --bind 127.0.0.1 --save '' --dir "$D" --appendonly no --daemonize yes --pidfile "$D/r.pid" >/dev/null
up "$P" && measure redis "$P" "$(cat "$D/r.pid")"
redis-cli -p "$P" shutdown nosave >/dev/null 2>&1
P=$(port)
"$BIN" --port "$P" --bind 127.0.0.1 --save '' --dir "$D" >"$D/resplock.log" 2>&1 & SP=$!
up "$P" && measure resplock "$P" "$SP"
kill "$SP" 2>/dev/null; wait "$SP" 2>/dev/null; rm -rf "$D"

#!/usr/bin/env bash
# streams_compare.sh [RESPLOCK_BIN] [ROUNDS=3]
# Stream throughput side by side with redis-server 7.0, as benches/lists_compare.sh does for
# lists: each round starts a fresh redis-server and then a fresh resplock, each pinned to
# CPU 1, with redis-benchmark pinned to CPU 0 (A B A B), 50 clients, N requests. Workloads:
#   set         SET, the reference: stream ratios are read against SET's ratio
#   xadd        XADD s * field value (IDs from the server clock, one stream)
#   xrange      XRANGE s - + COUNT 10 on that stream (ten entries per reply)
#   xreadgroup  XREADGROUP GROUP g c COUNT 1 STREAMS s > : each read delivers the next entry
#               and records it pending (the stream holds N entries from the xadd run)
# Prints the median requests/s of each server over the rounds and the ratio resplock/redis.
# The same server against itself gives ratios of about 0.85 to 1.15 on these shared 2-core
# machines; read a ratio inside that band as "equal". Loopback only.
set -u
BIN=${1:-target/release/resplock}
ROUNDS=${2:-3}
N=${N:-200000}
[ -x "$BIN" ] || { echo "no executable $BIN (cargo build --release first)"; exit 2; }
command -v redis-benchmark >/dev/null || { echo "redis-benchmark missing: apt-get install -y redis-tools"; exit 2; }
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
port() { python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])'; }
up() { for _ in $(seq 1 250); do redis-cli -p "$1" PING 2>/dev/null | grep -q PONG && return 0; sleep 0.02; done; return 1; }
start_server() {
  P=$(port)
  if [ "$1" = redis ]; then
    taskset -c 1 redis-server --port "$P" --bind 127.0.0.1 --save '' --dir "$OUT" --appendonly no --daemonize yes --pidfile "$OUT/redis.pid" >/dev/null
    up "$P" || { echo "redis-server did not start"; exit 1; }
  else
    taskset -c 1 "$BIN" --port "$P" --bind 127.0.0.1 --save '' --dir "$OUT" >"$OUT/resplock.log" 2>&1 &
    SP=$!
    up "$P" || { echo "resplock did not start"; kill $SP; exit 1; }
  fi
}
stop_server() {
  if [ "$1" = redis ]; then redis-cli -p "$P" shutdown nosave >/dev/null 2>&1; else kill $SP 2>/dev/null; wait $SP 2>/dev/null; fi
}
# rps FILE: the requests/s redis-benchmark -q printed last in FILE.
rps() { tr '\r' '\n' <"$1" | grep 'requests per second' | tail -1 | sed -E 's/.*: ([0-9.]+) requests per second.*/\1/'; }
bench() { # bench KIND ROUND NAME ARGS...
  local kind=$1 r=$2 t=$3
  shift 3
  taskset -c 0 redis-benchmark -p "$P" -c 50 -n "$N" -q "$@" >"$OUT/$kind.$r.$t" 2>&1
  echo "$kind $r $t $(rps "$OUT/$kind.$r.$t")" >>"$OUT/results"
}
for r in $(seq 1 "$ROUNDS"); do
  for kind in redis resplock; do
    start_server $kind
    bench $kind "$r" set -t set
    bench $kind "$r" xadd XADD s '*' field value
    bench $kind "$r" xrange XRANGE s - + COUNT 10
    redis-cli -p "$P" XGROUP CREATE s g 0 >/dev/null
    bench $kind "$r" xreadgroup XREADGROUP GROUP g c COUNT 1 STREAMS s '>'
    pending=$(redis-cli -p "$P" XPENDING s g | head -1)
    [ "$pending" = "$N" ] || echo "warning: $kind round $r has $pending pending entries, not $N"
    stop_server $kind
  done
done
python3 - "$OUT/results" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1]) if len(l.split()) == 4]
med = {}
for kind, _, t, v in rows:
    med.setdefault((kind, t), []).append(float(v))
print(f"{'workload':16} {'redis rps':>11} {'resplock rps':>13} {'ratio':>6}")
for t in ("set", "xadd", "xrange", "xreadgroup"):
    a = statistics.median(med[("redis", t)])
    b = statistics.median(med[("resplock", t)])
    print(f"{t:16} {a:11.0f} {b:13.0f} {b / a:6.2f}")
PY

#!/usr/bin/env bash
# lists_compare.sh [RESPLOCK_BIN] [ROUNDS=3]
# List throughput side by side with redis-server 7.0, as benches/lock_compare.py does for
# the lock workloads: each round starts a fresh redis-server and then a fresh resplock, each
# pinned to CPU 1, with redis-benchmark pinned to CPU 0 (A B A B). Workloads:
#   set        SET, the reference: list ratios are read against SET's ratio
#   lpush      LPUSH onto one list
#   rpop       RPOP from that list (as long as it has elements, then nil)
#   blpop_handoff  BLPOP hand-off: 50 poppers blocked in `BLPOP handoff 0` and 50 pushers doing
#              `RPUSH handoff x` run at once, N elements each way; the rate is elements
#              handed over per second (the poppers' rate: every pop waits for a push)
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
for r in $(seq 1 "$ROUNDS"); do
  for kind in redis resplock; do
    start_server $kind
    for t in set lpush rpop; do
      taskset -c 0 redis-benchmark -p "$P" -c 50 -n "$N" -q -t "$t" >"$OUT/$kind.$r.$t" 2>&1
      echo "$kind $r $t $(rps "$OUT/$kind.$r.$t")" >>"$OUT/results"
    done
    # Hand-off: the poppers block until the pushers' elements arrive.
    taskset -c 0 redis-benchmark -p "$P" -c 50 -n "$N" -q BLPOP handoff 0 >"$OUT/$kind.$r.pop" 2>&1 &
    BP=$!
    sleep 0.5
    taskset -c 0 redis-benchmark -p "$P" -c 50 -n "$N" -q RPUSH handoff x >"$OUT/$kind.$r.push" 2>&1
    wait $BP
    left=$(redis-cli -p "$P" LLEN handoff)
    [ "$left" = 0 ] || echo "warning: $kind round $r left $left elements in the hand-off list"
    echo "$kind $r blpop_handoff $(rps "$OUT/$kind.$r.pop")" >>"$OUT/results"
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
for t in ("set", "lpush", "rpop", "blpop_handoff"):
    a = statistics.median(med[("redis", t)])
    b = statistics.median(med[("resplock", t)])
    print(f"{t:16} {a:11.0f} {b:13.0f} {b / a:6.2f}")
PY
rm -rf "$OUT"

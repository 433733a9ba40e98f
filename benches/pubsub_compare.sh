#!/usr/bin/env bash
# pubsub_compare.sh [RESPLOCK_BIN] [ROUNDS=3] [SCENARIO...]
#
# Side-by-side pub/sub benchmark of redis-server 7.0 and resplock, like
# benches/lock_compare.py: each server pinned to CPU 1 (taskset), the load generator
# benches/pubsub_fanout.rs pinned to CPU 0, alternated A B A B (a fresh server per round), and
# the medians of the rounds compared as resplock/redis. Loopback only; every run is bounded by
# its message count and the generator's timeout.
#
#   cargo build --release && benches/pubsub_compare.sh target/release/resplock 3
#
# Scenarios (see benches/README.md): pub0, pub1, pub100 (4 publishers, 32 PUBLISH in flight
# each, 0/1/100 subscribers) and lat100 (1 publisher paced at 2,000 msg/s to 100 subscribers).
# Columns: msg/s = messages fully delivered per second (to every subscriber; publisher side for
# 0 subscribers), ratio = resplock/redis, p50/p99 = publish-to-receive latency in us (queueing
# dominated except for lat100), srv us/msg = server CPU time per published message.
# The generator is built with `cargo build --release --bench pubsub_fanout` unless
# PUBSUB_FANOUT=/path/to/binary is given. The same server against itself shows ratios from
# about 0.85 to 1.15 on these shared 2-core machines (more when other jobs run: check uptime).
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
BIN=${1:-target/release/resplock}
ROUNDS=${2:-3}
shift $(($# < 2 ? $# : 2))
SCENARIOS=("$@")
[ ${#SCENARIOS[@]} -gt 0 ] || SCENARIOS=(pub0 pub1 pub100 lat100)
[ -x "$BIN" ] || { echo "no executable $BIN (cargo build --release first)"; exit 2; }
command -v redis-server >/dev/null || { echo "redis-server missing: apt-get install -y redis-server redis-tools"; exit 2; }

GEN=${PUBSUB_FANOUT:-}
if [ -z "$GEN" ]; then
  GEN=$(cd "$ROOT" && cargo build --release --bench pubsub_fanout --message-format=json 2>/dev/null |
    python3 -c 'import json, sys
for line in sys.stdin:
    try: m = json.loads(line)
    except ValueError: continue
    if m.get("reason") == "compiler-artifact" and m["target"]["name"] == "pubsub_fanout" and m.get("executable"):
        print(m["executable"])')
fi
[ -n "$GEN" ] && [ -x "$GEN" ] || { echo "cannot build the generator (cargo build --release --bench pubsub_fanout)"; exit 2; }

OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
port() { python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])'; }
up() { for _ in $(seq 1 250); do redis-cli -p "$1" PING 2>/dev/null | grep -q PONG && return 0; sleep 0.02; done; return 1; }
HZ=$(getconf CLK_TCK)
ticks() { awk '{print $14+$15}' "/proc/$1/stat" 2>/dev/null || echo 0; }

# bench LABEL ROUND PORT PID: one generator run per scenario, server CPU measured around it.
bench() {
  local label=$1 r=$2 p=$3 pid=$4 sc line k0 k1
  for sc in "${SCENARIOS[@]}"; do
    k0=$(ticks "$pid")
    if line=$(taskset -c 0 "$GEN" "127.0.0.1:$p" "$sc" 2>>"$OUT/$label.$r.err"); then
      k1=$(ticks "$pid")
      echo "$line,$(( (k1 - k0) ))" >>"$OUT/$label.$r.csv"
    else
      echo "# $label round $r $sc FAILED: $(tail -1 "$OUT/$label.$r.err")" | tee -a "$OUT/failures"
    fi
  done
}

echo "# load before: $(uptime)"
for r in $(seq 1 "$ROUNDS"); do
  P=$(port)
  taskset -c 1 redis-server --port "$P" --bind 127.0.0.1 --save '' --dir "$OUT" --appendonly no --daemonize yes --pidfile "$OUT/redis.pid" --logfile "$OUT/redis.log"
  up "$P" || { echo "redis-server did not start"; exit 1; }
  RP=$(cat "$OUT/redis.pid")
  bench redis "$r" "$P" "$RP"
  redis-cli -p "$P" shutdown nosave >/dev/null 2>&1
  P=$(port)
  taskset -c 1 "$BIN" --port "$P" --save '' --dir "$OUT" --appendonly no >"$OUT/resplock.server.log" 2>&1 &
  SP=$!
  up "$P" || { echo "resplock did not start"; kill $SP; exit 1; }
  bench resplock "$r" "$P" "$SP"
  kill $SP 2>/dev/null; wait $SP 2>/dev/null
done
echo "# load after: $(uptime)"

python3 - "$OUT" "$ROUNDS" "$HZ" "${SCENARIOS[@]}" <<'PY'
import statistics, sys, os
out, rounds, hz, scenarios = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4:]
def load(label):
    rows = {}
    for r in range(1, rounds + 1):
        path = f"{out}/{label}.{r}.csv"
        if not os.path.exists(path):
            continue
        for line in open(path):
            f = line.strip().split(",")
            if len(f) != 11:
                continue
            name, msgs = f[0], int(f[3])
            p50 = float(f[7]) if f[7] != "NA" else None
            p99 = float(f[8]) if f[8] != "NA" else None
            cpu_us = int(f[10]) * 1e6 / hz / msgs
            rows.setdefault(name, []).append((float(f[6]), float(f[4]), p50, p99, cpu_us))
    med = {}
    for k, v in rows.items():
        col = lambda i: [x[i] for x in v if x[i] is not None]
        m = lambda i: statistics.median(col(i)) if col(i) else None
        med[k] = (m(0), m(1), m(2), m(3), m(4), len(v))
    return med
a, b = load("redis"), load("resplock")
lat = lambda p50, p99: "NA" if p50 is None else f"{p50:.0f}/{p99:.0f}"
print(f"{'scenario':9} {'redis msg/s':>12} {'resplock msg/s':>15} {'ratio':>6} {'redis p50/p99 us':>17} {'resplock p50/p99 us':>20} {'redis srv us/msg':>17} {'resplock srv us/msg':>20} {'n':>5}")
ratios = []
for s in scenarios:
    ra, rb = a.get(s), b.get(s)
    if not ra or not rb:
        print(f"{s:9} missing (see failures above)")
        continue
    ratio = rb[0] / ra[0]
    ratios.append(ratio)
    print(f"{s:9} {ra[0]:12.0f} {rb[0]:15.0f} {ratio:6.2f} {lat(ra[2], ra[3]):>17} {lat(rb[2], rb[3]):>20} {ra[4]:17.2f} {rb[4]:20.2f} {ra[5]:>2}/{rb[5]:<2}")
print("publisher-side PUBLISH/s (median): " + ", ".join(
    f"{s} redis {a[s][1]:.0f} resplock {b[s][1]:.0f}" for s in scenarios if s in a and s in b))
if ratios:
    print(f"min throughput ratio resplock/redis: {min(ratios):.2f}")
PY
if [ -s "$OUT/failures" ]; then echo "FAILURES:"; cat "$OUT/failures"; exit 1; fi

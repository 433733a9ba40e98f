#!/usr/bin/env bash
# values_compare.sh [RESPLOCK_BIN] : sets and sorted sets, resplock against redis-server 7.0,
# side by side (each server fresh, pinned to CPU 1; clients on CPU 0; loopback only; every
# step bounded by its request count).
#
#   cargo build --release && benches/values_compare.sh target/release/resplock
#
# 1. Memory per small value: RSS growth over KEYS keys (default 20000) each holding a 10-member
#    set of strings, a 10-member set of integers (an intset), or a 10-member sorted set, divided
#    by KEYS: bytes per key, key and value together.
# 2. A 1,000,000-member sorted set: the load time, then redis-benchmark throughput (-P 16) of
#    ZADD, ZRANK, ZSCORE, ZRANGEBYSCORE ... LIMIT 0 10, ZCOUNT and ZREM at random members, which
#    stays flat only if rank and range operations are O(log n); the last column is the ratio
#    resplock/redis.
set -u
BIN=${1:-target/release/resplock}
KEYS=${KEYS:-20000}
[ -x "$BIN" ] || { echo "no executable $BIN (cargo build --release first)"; exit 2; }
command -v redis-server >/dev/null && command -v redis-benchmark >/dev/null ||
  { echo "needs redis-server and redis-benchmark (apt-get install -y redis-server redis-tools)"; exit 2; }
TMP=$(mktemp -d)
trap 'kill $SP 2>/dev/null; rm -rf "$TMP"' EXIT
SP=

free_port() { python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])'; }

start() { # start NAME -> sets P and SP
  P=$(free_port)
  if [ "$1" = redis ]; then
    taskset -c 1 redis-server --port "$P" --bind 127.0.0.1 --save '' --dir "$TMP" --appendonly no >/dev/null 2>&1 &
  else
    taskset -c 1 "$BIN" --port "$P" --bind 127.0.0.1 --save '' --dir "$TMP" >/dev/null 2>&1 &
  fi
  SP=$!
  for _ in $(seq 1 100); do redis-cli -p "$P" PING 2>/dev/null | grep -q PONG && return; sleep 0.05; done
  echo "server $1 did not start"; exit 1
}
stop() { kill "$SP" 2>/dev/null; wait "$SP" 2>/dev/null; SP=; }
rss() { awk '/VmRSS/ {print $2 * 1024}' "/proc/$SP/status"; }

# The protocol for KEYS keys of one kind, made once.
gen() { python3 - "$1" "$KEYS" <<'PY'
import sys
kind, n = sys.argv[1], int(sys.argv[2])
out = sys.stdout.buffer
def cmd(*a):
    out.write(b"*%d\r\n" % len(a) + b"".join(b"$%d\r\n%s\r\n" % (len(x), x) for x in a))
for k in range(n):
    key = b"key:%d" % k
    if kind == "set":
        cmd(b"SADD", key, *[b"member-%d" % i for i in range(10)])
    elif kind == "intset":
        cmd(b"SADD", key, *[b"%d" % (i * 1000) for i in range(10)])
    else:
        args = []
        for i in range(10):
            args += [b"%d" % i, b"member-%d" % i]
        cmd(b"ZADD", key, *args)
PY
}
for kind in set intset zset; do gen "$kind" > "$TMP/$kind.resp"; done
python3 - > "$TMP/big.resp" <<'PY'
import sys
out = sys.stdout.buffer
for b in range(10000):
    args = [b"ZADD", b"big"]
    for i in range(b * 100, b * 100 + 100):
        args += [b"%d" % i, b"m:%012d" % i]
    out.write(b"*%d\r\n" % len(args) + b"".join(b"$%d\r\n%s\r\n" % (len(x), x) for x in args))
PY

echo "== memory per key (RSS growth / $KEYS keys), bytes"
printf '%-28s %10s %10s\n' value redis resplock
for kind in set intset zset; do
  row=()
  for srv in redis resplock; do
    start "$srv"; before=$(rss)
    taskset -c 0 redis-cli -p "$P" --pipe < "$TMP/$kind.resp" >/dev/null
    sleep 0.2; after=$(rss); stop
    row+=($(( (after - before) / KEYS )))
  done
  case $kind in set) label="10-member set (strings)";; intset) label="10-member set (integers)";; *) label="10-member sorted set";; esac
  printf '%-28s %10s %10s\n' "$label" "${row[0]}" "${row[1]}"
done

echo "== 1,000,000-member sorted set, requests/s (redis-benchmark -P 16, 200000 requests)"
printf '%-44s %12s %12s %7s\n' operation redis resplock ratio
declare -A R
for srv in redis resplock; do
  start "$srv"
  t0=$(date +%s.%N); taskset -c 0 redis-cli -p "$P" --pipe < "$TMP/big.resp" >/dev/null; t1=$(date +%s.%N)
  R[$srv,load]=$(python3 -c "print(f'{$t1-$t0:.2f} s')")
  R[$srv,card]=$(redis-cli -p "$P" ZCARD big)
  i=0
  for op in "ZADD big __rand_int__ m:__rand_int__" "ZRANK big m:__rand_int__" "ZSCORE big m:__rand_int__" \
            "ZRANGEBYSCORE big __rand_int__ +inf LIMIT 0 10" "ZCOUNT big __rand_int__ +inf" "ZREM big m:__rand_int__"; do
    # shellcheck disable=SC2086
    R[$srv,$i]=$(taskset -c 0 redis-benchmark -p "$P" -P 16 -n 200000 -r 1000000 -q $op 2>/dev/null |
      grep -o '[0-9.]* requests per second' | head -1 | cut -d' ' -f1)
    i=$((i + 1))
  done
  stop
done
printf '%-44s %12s %12s\n' "load (10,000 ZADD of 100 members)" "${R[redis,load]}" "${R[resplock,load]}"
printf '%-44s %12s %12s\n' "ZCARD after load" "${R[redis,card]}" "${R[resplock,card]}"
i=0
for label in "ZADD big <rand> m:<rand>" "ZRANK big m:<rand>" "ZSCORE big m:<rand>" \
             "ZRANGEBYSCORE big <rand> +inf LIMIT 0 10" "ZCOUNT big <rand> +inf" "ZREM big m:<rand>"; do
  printf '%-44s %12s %12s %7s\n' "$label" "${R[redis,$i]}" "${R[resplock,$i]}" \
    "$(python3 -c "print(f'{${R[resplock,$i]:-0}/${R[redis,$i]:-1}:.2f}')")"
  i=$((i + 1))
done

#!/usr/bin/env bash
# zset_interleaved.sh ROUNDS RESPLOCK_BIN... : the 1,000,000-member sorted-set rows of
# values_compare.sh, with the servers interleaved instead of one after the other.
#
#   cargo build --release && benches/zset_interleaved.sh 3 target/release/resplock
#
# A redis-server 7.0 and each given resplock binary (say, a baseline build and a new one) are
# started side by side (all pinned to CPU 1, idle while another is measured; clients on CPU 0;
# loopback only), each loaded with the same 1,000,000 members (score i, member m:%012d). Then
# for each operation, ROUNDS times, redis-benchmark (-P 16, 100,000 requests, random members)
# runs against every server in turn. On a shared, noisy machine this keeps a burst of load
# from landing on one server's rows only, as it can when values_compare.sh measures all of
# redis-server's rows and then all of resplock's. Every server gets the same sequence of
# operations, so their sets change alike. Prints requests/s, one line per round, and the
# resident memory of each server after the load.
set -u
ROUNDS=${1:?usage: zset_interleaved.sh ROUNDS RESPLOCK_BIN...}; shift
[ $# -ge 1 ] || { echo "usage: zset_interleaved.sh ROUNDS RESPLOCK_BIN..."; exit 2; }
for b in "$@"; do [ -x "$b" ] || { echo "no executable $b"; exit 2; }; done
command -v redis-server >/dev/null && command -v redis-benchmark >/dev/null ||
  { echo "needs redis-server and redis-benchmark (apt-get install -y redis-server redis-tools)"; exit 2; }
TMP=$(mktemp -d)
PIDS=()
trap 'kill "${PIDS[@]}" 2>/dev/null; rm -rf "$TMP"' EXIT

free_port() { python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])'; }

python3 - > "$TMP/big.resp" <<'PY'
import sys
out = sys.stdout.buffer
for b in range(10000):
    args = [b"ZADD", b"big"]
    for i in range(b * 100, b * 100 + 100):
        args += [b"%d" % i, b"m:%012d" % i]
    out.write(b"*%d\r\n" % len(args) + b"".join(b"$%d\r\n%s\r\n" % (len(x), x) for x in args))
PY

PORTS=(); NAMES=()
P=$(free_port)
taskset -c 1 redis-server --port "$P" --bind 127.0.0.1 --save '' --dir "$TMP" --appendonly no >/dev/null 2>&1 &
PIDS+=($!); PORTS+=("$P"); NAMES+=(redis)
n=1
for b in "$@"; do
  P=$(free_port)
  taskset -c 1 "$b" --port "$P" --bind 127.0.0.1 --save '' --dir "$TMP" >/dev/null 2>&1 &
  PIDS+=($!); PORTS+=("$P"); NAMES+=("resplock$n"); n=$((n + 1))
done
for P in "${PORTS[@]}"; do
  for _ in $(seq 1 100); do redis-cli -p "$P" PING 2>/dev/null | grep -q PONG && break; sleep 0.05; done
  taskset -c 0 redis-cli -p "$P" --pipe < "$TMP/big.resp" >/dev/null
done
n=1; for b in "$@"; do echo "resplock$n = $b"; n=$((n + 1)); done
printf '%-16s' ""; for name in "${NAMES[@]}"; do printf '%12s' "$name"; done; echo
printf '%-16s' "RSS after, MB"
for pid in "${PIDS[@]}"; do printf '%12s' $(($(awk '/VmRSS/ {print $2}' "/proc/$pid/status") / 1024)); done; echo
for op in "ZADD big __rand_int__ m:__rand_int__" "ZRANK big m:__rand_int__" "ZSCORE big m:__rand_int__" \
          "ZRANGEBYSCORE big __rand_int__ +inf LIMIT 0 10" "ZCOUNT big __rand_int__ +inf" "ZREM big m:__rand_int__"; do
  for _ in $(seq 1 "$ROUNDS"); do
    printf '%-16s' "${op%% *}"
    for P in "${PORTS[@]}"; do
      # shellcheck disable=SC2086
      v=$(taskset -c 0 redis-benchmark -p "$P" -P 16 -n 100000 -r 1000000 -q $op 2>/dev/null |
        grep -o '[0-9.]* requests per second' | tail -1 | cut -d' ' -f1)
      printf '%12s' "${v%.*}"
    done
    echo
  done
done

#!/usr/bin/env bash
# aof_compare.sh [RESPLOCK_BIN] [ROUNDS=3] [REQUESTS=100000]
# What persistence costs a lock server, side by side with redis-server 7.0: each server started
# fresh in a temporary directory with `appendonly no`, then `appendonly yes` with
# `appendfsync everysec` and `always`, pinned to CPU 1, and redis-benchmark on CPU 0 sending the
# lock acquire (SET key token NX PX 30000 over 100,000 key names, 50 clients) and the
# compare-and-delete unlock (EVALSHA). Servers alternate within each round so that drift of the
# machine's speed hits both. Prints the median requests/s of each and the ratio resplock/redis.
# Loopback only; every run is bounded by REQUESTS.
set -u
BIN=${1:-target/release/resplock}
ROUNDS=${2:-3}
N=${3:-100000}
[ -x "$BIN" ] || { echo "no executable $BIN (cargo build --release first)"; exit 2; }
command -v redis-server >/dev/null || { echo "redis-server missing"; exit 2; }
UNLOCK='if redis.call("get",KEYS[1]) == ARGV[1] then return redis.call("del",KEYS[1]) else return 0 end'
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
port() { python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])'; }
up() { for _ in $(seq 1 250); do redis-cli -p "$1" PING 2>/dev/null | grep -q PONG && return 0; sleep 0.02; done; return 1; }

# run KIND MODE: one fresh server of KIND (redis|resplock) in MODE (off|everysec|always);
# prints "acquire_rps unlock_rps".
run() {
  local kind=$1 mode=$2 dir p sp
  dir=$(mktemp -d "$OUT/$kind-$mode.XXXX")
  p=$(port)
  local args=(--port "$p" --bind 127.0.0.1 --save '' --dir "$dir")
  if [ "$mode" = off ]; then args+=(--appendonly no); else args+=(--appendonly yes --appendfsync "$mode"); fi
  if [ "$kind" = redis ]; then
    taskset -c 1 redis-server "${args[@]}" >"$dir/log" 2>&1 &
  else
    taskset -c 1 "$BIN" "${args[@]}" >"$dir/log" 2>&1 &
  fi
  sp=$!
  up "$p" || { echo "$kind did not start" >&2; kill $sp; return 1; }
  local sha
  sha=$(redis-cli -p "$p" SCRIPT LOAD "$UNLOCK")
  local acq unl
  acq=$(taskset -c 0 redis-benchmark -p "$p" -c 50 -n "$N" -r 100000 --csv \
    SET "lock:__rand_int__" token NX PX 30000 2>/dev/null | tail -1 | cut -d, -f2 | tr -d '"')
  unl=$(taskset -c 0 redis-benchmark -p "$p" -c 50 -n "$N" -r 100000 --csv \
    EVALSHA "$sha" 1 "lock:__rand_int__" token 2>/dev/null | tail -1 | cut -d, -f2 | tr -d '"')
  redis-cli -p "$p" SHUTDOWN NOSAVE >/dev/null 2>&1
  wait $sp 2>/dev/null
  echo "$acq $unl"
}

median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

for mode in off everysec always; do
  for r in $(seq 1 "$ROUNDS"); do
    for kind in redis resplock; do
      run $kind $mode >>"$OUT/$kind.$mode"
    done
  done
done
printf '%-10s %-8s %12s %12s %7s\n' appendfsync workload redis resplock ratio
for mode in off everysec always; do
  for col in 1 2; do
    name=$([ $col = 1 ] && echo acquire || echo unlock)
    a=$(cut -d' ' -f$col "$OUT/redis.$mode" | median)
    b=$(cut -d' ' -f$col "$OUT/resplock.$mode" | median)
    printf '%-10s %-8s %12.0f %12.0f %7.2f\n' "$mode" "$name" "$a" "$b" "$(echo "$b / $a" | bc -l)"
  done
done

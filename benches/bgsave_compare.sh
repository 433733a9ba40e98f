#!/usr/bin/env bash
# bgsave_compare.sh [RESPLOCK_BIN] [ROUNDS=3] [LOCKS=1000000]
# What a BGSAVE of a million locks costs, side by side with redis-server 7.0: each server is
# started fresh in a temporary directory (`--save ''`, no AOF, loopback), filled with LOCKS
# lock keys (`SET lock:N <uuid-like token>:1 PX 600000`, sent through `redis-cli --pipe`),
# then BGSAVE runs twice: idle, and while redis-benchmark keeps overwriting random locks
# (every page of the dataset then gets written during the save: the worst case for a fork's
# copy-on-write and for resplock's shard captures). Memory is the proportional set size
# (Pss, from /proc/PID/smaps_rollup) of the server plus its writer child, sampled every 10 ms:
# Pss counts pages a fork child still shares with its parent once, so the figure is what the
# save really added. Prints per server and mode the median of: the save's wall time (BGSAVE
# sent to rdb_bgsave_in_progress:0), the memory it added at its peak over the memory before,
# the dataset's memory before the save, and the file's size. Loopback only; bounded by LOCKS
# and by a 300 s limit per save.
set -u
BIN=${1:-target/release/resplock}
ROUNDS=${2:-3}
LOCKS=${3:-1000000}
[ -x "$BIN" ] || { echo "no executable $BIN (cargo build --release first)"; exit 2; }
for t in redis-server redis-cli redis-benchmark python3; do
  command -v "$t" >/dev/null || { echo "$t missing"; exit 2; }
done
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
port() { python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])'; }
up() { for _ in $(seq 1 250); do redis-cli -p "$1" PING 2>/dev/null | grep -q PONG && return 0; sleep 0.02; done; return 1; }

# The LOCKS SET commands in RESP, once, for every server.
python3 - "$LOCKS" >"$OUT/locks.resp" <<'PY'
import sys
out = sys.stdout.buffer
for i in range(int(sys.argv[1])):
    key = b"lock:%d" % i
    tok = b"%08x-4a5b-4c6d-8e9f-%012x:1" % (i, i * 7919)
    parts = [b"SET", key, tok, b"PX", b"600000"]
    out.write(b"*5\r\n" + b"".join(b"$%d\r\n%s\r\n" % (len(p), p) for p in parts))
PY

# Pss in bytes of PID and its children (the save's writer).
pss() {
  local total=0 p v
  for p in "$1" $(pgrep -P "$1"); do
    v=$(awk '/^Pss:/ {print $2}' "/proc/$p/smaps_rollup" 2>/dev/null)
    total=$((total + ${v:-0}))
  done
  echo $((total * 1024))
}

# save PORT PID: BGSAVE, sample until it ends; prints "seconds peak_added_bytes".
save() {
  local p=$1 pid=$2 base peak now start end
  base=$(pss "$pid")
  peak=$base
  start=$(date +%s.%N)
  redis-cli -p "$p" BGSAVE >/dev/null
  local deadline=$(( $(date +%s) + 300 ))
  while :; do
    now=$(pss "$pid")
    [ "$now" -gt "$peak" ] && peak=$now
    redis-cli -p "$p" INFO persistence | grep -q 'rdb_bgsave_in_progress:1' || break
    [ "$(date +%s)" -lt "$deadline" ] || { echo "save did not end" >&2; break; }
    sleep 0.01
  done
  end=$(date +%s.%N)
  echo "$(echo "$end - $start" | bc -l) $((peak - base))"
}

# run KIND: one fresh server; prints "idle_s idle_added loaded_s loaded_added used_bytes file_bytes".
run() {
  local kind=$1 dir p sp bp
  dir=$(mktemp -d "$OUT/$kind.XXXX")
  p=$(port)
  local args=(--port "$p" --bind 127.0.0.1 --save '' --appendonly no --dir "$dir")
  if [ "$kind" = redis ]; then
    taskset -c 1 redis-server "${args[@]}" >"$dir/log" 2>&1 &
  else
    taskset -c 1 "$BIN" "${args[@]}" >"$dir/log" 2>&1 &
  fi
  sp=$!
  up "$p" || { echo "$kind did not start" >&2; kill $sp; return 1; }
  redis-cli -p "$p" --pipe <"$OUT/locks.resp" >/dev/null
  local n used
  n=$(redis-cli -p "$p" DBSIZE)
  [ "$n" = "$LOCKS" ] || echo "$kind: DBSIZE $n, expected $LOCKS" >&2
  used=$(pss "$sp")
  local idle loaded
  idle=$(save "$p" "$sp")
  # Overwrite random locks during the second save (bounded: it stops when the save ends).
  taskset -c 0 redis-benchmark -p "$p" -c 20 -P 16 -n 100000000 -r "$LOCKS" -q \
    SET lock:__rand_int__ other-token PX 600000 >/dev/null 2>&1 &
  bp=$!
  sleep 0.5
  loaded=$(save "$p" "$sp")
  kill $bp 2>/dev/null
  wait $bp 2>/dev/null
  local size
  size=$(stat -c %s "$dir/dump.rdb" 2>/dev/null || echo 0)
  redis-cli -p "$p" SHUTDOWN NOSAVE >/dev/null 2>&1
  wait $sp 2>/dev/null
  rm -rf "$dir"
  echo "$idle $loaded $used $size"
}

median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

for r in $(seq 1 "$ROUNDS"); do
  for kind in redis resplock; do
    run $kind >>"$OUT/$kind.res"
  done
done
mb() { echo "$1 / 1048576" | bc -l; }
printf '%-28s %12s %12s %7s\n' "BGSAVE of $LOCKS locks" redis resplock ratio
row() {
  local name=$1 col=$2 scale=$3 a b
  a=$(cut -d' ' -f"$col" "$OUT/redis.res" | median)
  b=$(cut -d' ' -f"$col" "$OUT/resplock.res" | median)
  if [ "$scale" = mb ]; then a=$(mb "$a"); b=$(mb "$b"); fi
  printf '%-28s %12.2f %12.2f %7s\n' "$name" "$a" "$b" \
    "$(python3 -c "a,b=$a,$b; print(f'{b/a:.2f}' if a > 0 else '-')")"
}
row "dataset memory (MB, Pss)" 5 mb
row "idle: save time (s)" 1 s
row "idle: added memory (MB)" 2 mb
row "under writes: save time (s)" 3 s
row "under writes: added (MB)" 4 mb
row "file size (MB)" 6 mb

#!/usr/bin/env bash
# large_values.sh [RESPLOCK_BIN] [ROUNDS=3]
# Large values, side by side with redis-server 7.0: SET and GET of 100 KB values (1,000 keys)
# and of 10 MB values (20 keys), and MGET of 100 keys holding 100-byte values, with
# redis-benchmark. Each server is started fresh per round (`--save ''`, no AOF, loopback),
# pinned to CPU 1 with redis-benchmark on CPU 0, the servers alternating within a round so
# drift of a shared machine hits both. Prints the median requests/s of each and the ratio
# resplock/redis, and the server's peak resident memory over the run (VmHWM from
# /proc/PID/status) with its ratio. Loopback only; every step is bounded by its request count.
set -u
BIN=${1:-target/release/resplock}
ROUNDS=${2:-3}
[ -x "$BIN" ] || { echo "no executable $BIN (cargo build --release first)"; exit 2; }
for t in redis-server redis-cli redis-benchmark python3; do
  command -v "$t" >/dev/null || { echo "$t missing"; exit 2; }
done
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
port() { python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])'; }
up() { for _ in $(seq 1 250); do redis-cli -p "$1" PING 2>/dev/null | grep -q PONG && return 0; sleep 0.02; done; return 1; }

MGET_KEYS=$(seq -f 'v:%g' 1 100 | tr '\n' ' ')

# rps PORT ARGS...: redis-benchmark's requests per second.
rps() {
  local p=$1
  shift
  taskset -c 0 redis-benchmark -p "$p" --csv "$@" 2>/dev/null | tail -1 | cut -d, -f2 | tr -d '"'
}

# run KIND: one fresh server; prints the figures in the order of ROWS, then peak RSS in bytes.
run() {
  local kind=$1 p sp
  p=$(port)
  local args=(--port "$p" --bind 127.0.0.1 --save '' --appendonly no --dir "$OUT")
  if [ "$kind" = redis ]; then
    taskset -c 1 redis-server "${args[@]}" >/dev/null 2>&1 &
  else
    taskset -c 1 "$BIN" "${args[@]}" >/dev/null 2>&1 &
  fi
  sp=$!
  up "$p" || { echo "$kind did not start" >&2; kill $sp; return 1; }
  local r=()
  r+=("$(rps "$p" -c 20 -n 20000 -r 1000 -d 102400 -t set)")
  r+=("$(rps "$p" -c 20 -n 20000 -r 1000 -d 102400 -t get)")
  r+=("$(rps "$p" -c 4 -n 200 -r 20 -d 10485760 -t set)")
  r+=("$(rps "$p" -c 4 -n 200 -r 20 -d 10485760 -t get)")
  for i in $(seq 1 100); do echo "SET v:$i $(printf 'x%.0s' $(seq 1 100))"; done | redis-cli -p "$p" >/dev/null
  # shellcheck disable=SC2086
  r+=("$(rps "$p" -c 50 -n 100000 MGET $MGET_KEYS)")
  local hwm
  hwm=$(awk '/^VmHWM:/ {print $2 * 1024}' "/proc/$sp/status")
  redis-cli -p "$p" SHUTDOWN NOSAVE >/dev/null 2>&1
  wait $sp 2>/dev/null
  echo "${r[*]} $hwm"
}

median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

for r in $(seq 1 "$ROUNDS"); do
  for kind in redis resplock; do
    run $kind >>"$OUT/$kind"
  done
done
ROWS=("SET 100 KB" "GET 100 KB" "SET 10 MB" "GET 10 MB" "MGET 100 keys" "peak RSS (MB)")
printf '%-16s %12s %12s %7s\n' workload redis resplock ratio
for i in "${!ROWS[@]}"; do
  col=$((i + 1))
  a=$(cut -d' ' -f$col "$OUT/redis" | median)
  b=$(cut -d' ' -f$col "$OUT/resplock" | median)
  if [ "$col" = 6 ]; then
    a=$(echo "$a / 1048576" | bc -l)
    b=$(echo "$b / 1048576" | bc -l)
  fi
  printf '%-16s %12.0f %12.0f %7.2f\n' "${ROWS[$i]}" "$a" "$b" "$(echo "$b / $a" | bc -l)"
done

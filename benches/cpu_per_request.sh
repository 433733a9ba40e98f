#!/usr/bin/env bash
# cpu_per_request.sh ROUNDS LABEL=SERVER... -- REDIS-BENCHMARK-ARGS...
#
# Server CPU per request, side by side: each SERVER (the word `redis` for redis-server 7.0,
# else a resplock command line, e.g. `RESPLOCK_WORKERS=2 target/release/resplock`) is started
# pinned to CPU 1 on a free loopback port, loaded by redis-benchmark pinned to CPU 0
# (50 clients, N requests, keys drawn from 100,000), and measured with `perf stat`: task-clock
# (CPU time of every thread of the server) and context switches, divided by the requests;
# beside it the user and system parts from /proc (in clock ticks, so coarser).
# Servers alternate within each round, so drift of a shared machine hits all of them.
# Finer than /proc clock ticks: what per-request savings found by profiling are measured with.
#
#   benches/cpu_per_request.sh 3 redis=redis now=target/release/resplock -- get key:__rand_int__
#   N=1000000 benches/cpu_per_request.sh 3 redis=redis now=target/release/resplock -- \
#       -P 16 set lock:__rand_int__ tok PX 30000 NX
#   PRE='return redis.call("get",KEYS[1])' benches/cpu_per_request.sh 3 redis=redis \
#       now=target/release/resplock -- evalsha <sha1 of PRE> 1 k:__rand_int__
#
# Environment: N (requests, default 300000), C (clients, default 50), PRE (a script to
# SCRIPT LOAD first), FILL (redis-benchmark arguments run before the measurement, unmeasured,
# e.g. `-P 16 -n 300000 set lock:__rand_int__ tok` so a GET finds its key), SYSCALLS (see below).
# Needs redis-server, redis-benchmark, redis-cli, perf, taskset.
set -u
ROUNDS=${1:?rounds}
shift
SERVERS=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do SERVERS+=("$1"); shift; done
[ $# -gt 0 ] || { echo "usage: $0 ROUNDS LABEL=SERVER... -- BENCH-ARGS..." >&2; exit 2; }
shift
N=${N:-300000}
C=${C:-50}
# SYSCALLS=1: also count the server's reads, writes and epoll_waits per request (tracepoints;
# needs root or perf_event_paranoid <= 1).
EVENTS=
if [ -n "${SYSCALLS:-}" ]; then
  for c in read recvfrom write sendto writev epoll_wait; do EVENTS="$EVENTS,syscalls:sys_enter_$c"; done
fi
STAT=$(mktemp)
# The servers' working directory: a dump.rdb left where the script is run would be loaded.
SCRATCH=$(mktemp -d)
trap 'rm -rf "$STAT" "$SCRATCH"' EXIT
port() { python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])'; }
for r in $(seq 1 "$ROUNDS"); do
  for spec in "${SERVERS[@]}"; do
    label=${spec%%=*}
    server=${spec#*=}
    P=$(port)
    if [ "$server" = redis ]; then
      taskset -c 1 redis-server --port "$P" --bind 127.0.0.1 --save '' --dir "$SCRATCH" --appendonly no >/dev/null &
    else
      # shellcheck disable=SC2086 # the command line may carry VAR=value words
      taskset -c 1 env $server --port "$P" --bind 127.0.0.1 --save '' --dir "$SCRATCH" >/dev/null 2>&1 &
    fi
    SP=$!
    for _ in $(seq 100); do redis-cli -p "$P" PING 2>/dev/null | grep -q PONG && break; sleep 0.05; done
    redis-cli -p "$P" SET key:__rand_int__ x >/dev/null
    [ -n "${PRE:-}" ] && redis-cli -p "$P" SCRIPT LOAD "$PRE" >/dev/null
    # shellcheck disable=SC2086 # FILL is a word list of redis-benchmark arguments
    [ -n "${FILL:-}" ] && taskset -c 0 redis-benchmark -p "$P" -c "$C" -r 100000 -q $FILL >/dev/null 2>&1
    # User and system CPU of the server from /proc (clock ticks): user time is where the
    # server's own code shows; system time is mostly the kernel's TCP work for both servers.
    read -r u0 s0 < <(awk '{print $14, $15}' "/proc/$SP/stat")
    perf stat -e "task-clock,context-switches$EVENTS" -p "$SP" -o "$STAT" 2>/dev/null &
    PS=$!
    sleep 0.1
    rps=$(taskset -c 0 redis-benchmark -p "$P" -c "$C" -n "$N" -r 100000 -q "$@" 2>&1 |
      tr '\r' '\n' | grep "requests per second" | tail -1 |
      awk '{for (i = 1; i < NF; i++) if ($(i + 1) == "requests") print $i}')
    read -r u1 s1 < <(awk '{print $14, $15}' "/proc/$SP/stat")
    kill -INT "$PS"
    wait "$PS"
    tc=$(awk '/task-clock/ {gsub(",", "", $1); print $1}' "$STAT")
    cs=$(awk '/context-switches/ {gsub(",", "", $1); print $1}' "$STAT")
    awk -v l="$label" -v r="$r" -v rps="$rps" -v tc="$tc" -v cs="$cs" -v n="$N" \
      -v u=$((u1 - u0)) -v s=$((s1 - s0)) -v hz="$(getconf CLK_TCK)" \
      'BEGIN { printf "%-10s round %d  rps %10s  cpu_us/req %.2f  user %.2f  sys %.2f  ctx_switches/req %.3f", l, r, rps, tc * 1000 / n, u * 1e6 / hz / n, s * 1e6 / hz / n, cs / n }'
    if [ -n "$EVENTS" ]; then
      # Reads, writes and epoll_waits per request, whichever call each server uses.
      awk -v n="$N" '/syscalls:sys_enter_/ {
          gsub(",", "", $1); name = $2; sub(".*sys_enter_", "", name)
          if (name == "recvfrom") name = "read"; if (name == "sendto" || name == "writev") name = "write"
          c[name] += $1 }
        END { printf "  reads/req %.3f  writes/req %.3f  epoll_waits/req %.3f", c["read"] / n, c["write"] / n, c["epoll_wait"] / n }' "$STAT"
    fi
    echo
    kill "$SP"
    wait "$SP" 2>/dev/null
  done
done

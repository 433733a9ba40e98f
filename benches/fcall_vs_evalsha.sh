#!/usr/bin/env bash
# fcall_vs_evalsha.sh [SERVER_BIN=target/release/resplock] [ROUNDS=3] [N=200000]
# FCALL of a lock function against EVALSHA of the same script, in the same run: one fresh
# server per round (pinned to CPU 1), redis-benchmark on CPU 0 with 50 clients, the two forms
# alternated (EVALSHA, FCALL, EVALSHA, FCALL...) so drift of this shared machine hits both.
# Two lock scripts: the compare-and-delete unlock and Redisson's reentrant acquire, each loaded
# once with SCRIPT LOAD and once as a function whose body is the script's text.
# Prints per workload the median requests/s of each form, the ratio FCALL/EVALSHA and the
# server CPU microseconds per request. SERVER_BIN may be redis-server for the reference.
# Loopback only.
set -u
BIN=${1:-target/release/resplock}
ROUNDS=${2:-3}
N=${3:-200000}
command -v redis-benchmark >/dev/null || { echo "redis-benchmark missing"; exit 2; }
[ -x "$BIN" ] || BIN=$(command -v "$BIN") || { echo "no executable $1"; exit 2; }
OUT=$(mktemp -d)
HZ=$(getconf CLK_TCK)
port() { python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])'; }

UNLOCK='if redis.call("get",KEYS[1]) == ARGV[1] then return redis.call("del",KEYS[1]) else return 0 end'
ACQUIRE="if (redis.call('exists', KEYS[1]) == 0) then redis.call('hincrby', KEYS[1], ARGV[2], 1); redis.call('pexpire', KEYS[1], ARGV[1]); return nil; end; if (redis.call('hexists', KEYS[1], ARGV[2]) == 1) then redis.call('hincrby', KEYS[1], ARGV[2], 1); redis.call('pexpire', KEYS[1], ARGV[1]); return nil; end; return redis.call('pttl', KEYS[1]);"
LIB="#!lua name=locks
redis.register_function('unlock', function(KEYS, ARGV) $UNLOCK end)
redis.register_function('acquire', function(KEYS, ARGV) $ACQUIRE end)"

for r in $(seq 1 "$ROUNDS"); do
  P=$(port)
  if [[ "$(basename "$BIN")" == redis-server ]]; then
    taskset -c 1 "$BIN" --port "$P" --bind 127.0.0.1 --save '' --dir "$OUT" --appendonly no >/dev/null 2>&1 &
  else
    taskset -c 1 "$BIN" --port "$P" --bind 127.0.0.1 --save '' --dir "$OUT" >/dev/null 2>&1 &
  fi
  SP=$!
  for _ in $(seq 1 250); do redis-cli -p "$P" PING 2>/dev/null | grep -q PONG && break; sleep 0.02; done
  CLI=(redis-cli -p "$P")
  SHA_UNLOCK=$("${CLI[@]}" SCRIPT LOAD "$UNLOCK")
  SHA_ACQ=$("${CLI[@]}" SCRIPT LOAD "$ACQUIRE")
  "${CLI[@]}" FUNCTION LOAD REPLACE "$LIB" >/dev/null
  for w in unlock acquire; do
    for form in evalsha fcall; do
      case $w/$form in
        unlock/evalsha) args=(EVALSHA "$SHA_UNLOCK" 1 lock:__rand_int__ token) ;;
        unlock/fcall) args=(FCALL unlock 1 lock:__rand_int__ token) ;;
        acquire/evalsha) args=(EVALSHA "$SHA_ACQ" 1 rlock:__rand_int__ 30000 client-id:1) ;;
        acquire/fcall) args=(FCALL acquire 1 rlock:__rand_int__ 30000 client-id:1) ;;
      esac
      "${CLI[@]}" FLUSHALL >/dev/null
      k0=$(awk '{print $14+$15}' /proc/$SP/stat)
      rps=$(taskset -c 0 redis-benchmark -p "$P" -c 50 -n "$N" -r 1000000 --csv "${args[@]}" 2>/dev/null |
        awk -F'","' 'NR==2{gsub(/"/,"",$2); print $2}')
      k1=$(awk '{print $14+$15}' /proc/$SP/stat)
      us=$(awk -v k="$((k1 - k0))" -v hz="$HZ" -v n="$N" 'BEGIN{printf "%.2f", 1e6*k/hz/n}')
      echo "$w $form $rps $us" >>"$OUT/results"
    done
  done
  kill "$SP" 2>/dev/null; wait "$SP" 2>/dev/null
done

echo "server: $BIN, $ROUNDS rounds of $N requests per form; load: $(uptime | sed 's/.*load/load/')"
python3 - "$OUT/results" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
print(f"{'workload':10} {'evalsha rps':>12} {'fcall rps':>10} {'ratio':>6} {'evalsha us/op':>14} {'fcall us/op':>12}")
for w in ("unlock", "acquire"):
    med = lambda form, i: statistics.median(float(r[i]) for r in rows if r[0] == w and r[1] == form)
    e, f = med("evalsha", 2), med("fcall", 2)
    print(f"{w:10} {e:12.0f} {f:10.0f} {f / e:6.3f} {med('evalsha', 3):14.2f} {med('fcall', 3):12.2f}")
PY
rm -rf "$OUT"

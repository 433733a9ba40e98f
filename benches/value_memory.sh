#!/usr/bin/env bash
# value_memory.sh RESPLOCK_BIN [N] [SCENARIO...]: resident memory per key for small values,
# resplock against redis-server 7.0 side by side. For each scenario, a fresh redis-server
# (--save '' --appendonly no) and a fresh resplock on free loopback ports each get N keys
# through redis-cli --pipe; the RSS growth (VmRSS from /proc, before and after, after a short
# settle) divided by N is printed per server, with the ratio resplock/redis.
#
# Scenarios (default: all that both servers support):
#   bitmap1k        SETBIT bm:I 8191 1            (a 1 KB bitmap made in one step)
#   bitmap1k_grown  SETBIT bm:I 0 1 ... 8191 1    (grown 128 bytes at a time, 8 steps)
#   lock            SET lock:I <36-byte uuid> PX 600000
#   set10           SADD s:I m0..m9               (skipped if SADD is unknown)
#   zset10          ZADD z:I 0 m0 .. 9 m9         (skipped if ZADD is unknown)
# N defaults to 50000. Loopback only; each server is shut down after its scenario.
set -u
BIN=${1:?usage: value_memory.sh RESPLOCK_BIN [N] [SCENARIO...]}
N=${2:-50000}
shift $(( $# >= 2 ? 2 : 1 ))
SCENARIOS=("$@")
[ ${#SCENARIOS[@]} -eq 0 ] && SCENARIOS=(bitmap1k bitmap1k_grown lock set10 zset10)
# The servers' working directory: a dump.rdb left where the script is run would be loaded.
SCRATCH=$(mktemp -d)
trap 'rm -rf "$SCRATCH"' EXIT

free_port() { python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])'; }
rss_kb() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status"; }

gen() { # scenario -> commands on stdout, one per line, for redis-cli --pipe
  python3 - "$1" "$N" <<'EOF'
import sys
sc, n = sys.argv[1], int(sys.argv[2])
out = sys.stdout
def cmd(*a):
    out.write("*%d\r\n" % len(a))
    for x in a:
        x = str(x)
        out.write("$%d\r\n%s\r\n" % (len(x.encode()), x))
for i in range(n):
    if sc == "bitmap1k":
        cmd("SETBIT", "bm:%d" % i, 8191, 1)
    elif sc == "bitmap1k_grown":
        for b in range(1023, 8192, 1024):
            cmd("SETBIT", "bm:%d" % i, b, 1)
    elif sc == "lock":
        cmd("SET", "lock:%d" % i, "8743c9c8-d6e2-4a41-b1d4-%012d" % i, "PX", 600000)
    elif sc == "set10":
        cmd("SADD", "s:%d" % i, *["m%d" % j for j in range(10)])
    elif sc == "zset10":
        args = []
        for j in range(10):
            args += [j, "m%d" % j]
        cmd("ZADD", "z:%d" % i, *args)
EOF
}

# run SERVER SCENARIO -> bytes per key (or "skip")
run() {
  local kind=$1 sc=$2 port pid need
  port=$(free_port)
  if [ "$kind" = redis ]; then
    redis-server --port "$port" --bind 127.0.0.1 --save '' --dir "$SCRATCH" --appendonly no >/dev/null 2>&1 &
  else
    "$BIN" --port "$port" --bind 127.0.0.1 --save '' --dir "$SCRATCH" >/dev/null 2>&1 &
  fi
  pid=$!
  for _ in $(seq 1 100); do redis-cli -p "$port" PING 2>/dev/null | grep -q PONG && break; sleep 0.05; done
  case $sc in set10) need=sadd ;; zset10) need=zadd ;; lock) need=set ;; *) need=setbit ;; esac
  if redis-cli -p "$port" COMMAND INFO "$need" | head -1 | grep -q '^$'; then
    echo skip
  else
    sleep 0.3
    local before after
    before=$(rss_kb "$pid")
    gen "$sc" | redis-cli -p "$port" --pipe >/dev/null 2>&1
    sleep 0.5
    after=$(rss_kb "$pid")
    echo $(( (after - before) * 1024 / N ))
  fi
  kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
}

printf '%-16s %12s %12s %8s   (N=%d, bytes of RSS per key)\n' scenario redis resplock ratio "$N"
for sc in "${SCENARIOS[@]}"; do
  r=$(run redis "$sc"); l=$(run resplock "$sc")
  if [ "$r" = skip ] || [ "$l" = skip ]; then
    printf '%-16s %12s %12s %8s\n' "$sc" "$r" "$l" "-"
  else
    printf '%-16s %12d %12d %8s\n' "$sc" "$r" "$l" "$(python3 -c "print('%.2f' % ($l/$r))")"
  fi
done

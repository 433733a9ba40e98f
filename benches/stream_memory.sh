#!/usr/bin/env bash
# stream_memory.sh RESPLOCK_BIN [N=1000000]: memory per stream entry, resplock against
# redis-server 7.0 side by side. Each server (fresh, loopback, free port; redis-server with
# --save '' --appendonly no) gets N times `XADD s * field value` on one stream through
# redis-cli --pipe, then the growth of its RSS (VmRSS) and of INFO's used_memory, each divided
# by N, is printed with the ratio resplock/redis. Both servers keep entries in listpack nodes
# of 100 (stream-node-max-entries, the default), so a small entry costs about 16 bytes in
# either; the issue's bar is a ratio within 1.5.
set -u
BIN=${1:?usage: stream_memory.sh RESPLOCK_BIN [N]}
N=${2:-1000000}
free_port() { python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])'; }
rss_kb() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status"; }
used() { redis-cli -p "$1" INFO memory | tr -d '\r' | awk -F: '/^used_memory:/ {print $2}'; }
CMDS=$(mktemp)
# The servers' working directory: a dump.rdb left where the script is run would be loaded.
SCRATCH=$(mktemp -d)
trap 'rm -rf "$CMDS" "$SCRATCH"' EXIT
python3 - "$N" >"$CMDS" <<'PY'
import sys
line = b"*5\r\n$4\r\nXADD\r\n$1\r\ns\r\n$1\r\n*\r\n$5\r\nfield\r\n$5\r\nvalue\r\n"
sys.stdout.buffer.write(line * int(sys.argv[1]))
PY

# run KIND -> "rss_per_entry used_per_entry"
run() {
  local port pid b_rss b_used a_rss a_used
  port=$(free_port)
  if [ "$1" = redis ]; then
    redis-server --port "$port" --bind 127.0.0.1 --save '' --dir "$SCRATCH" --appendonly no >/dev/null 2>&1 &
  else
    "$BIN" --port "$port" --bind 127.0.0.1 --save '' --dir "$SCRATCH" >/dev/null 2>&1 &
  fi
  pid=$!
  for _ in $(seq 1 100); do redis-cli -p "$port" PING 2>/dev/null | grep -q PONG && break; sleep 0.05; done
  sleep 0.3
  b_rss=$(rss_kb "$pid"); b_used=$(used "$port")
  redis-cli -p "$port" --pipe <"$CMDS" >/dev/null 2>&1
  [ "$(redis-cli -p "$port" XLEN s)" = "$N" ] || echo "warning: $1 holds $(redis-cli -p "$port" XLEN s) entries, not $N" >&2
  sleep 0.5
  a_rss=$(rss_kb "$pid"); a_used=$(used "$port")
  kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
  python3 -c "print('%.1f %.1f' % (($a_rss - $b_rss) * 1024 / $N, ($a_used - $b_used) / $N))"
}

read -r r_rss r_used < <(run redis)
read -r l_rss l_used < <(run resplock)
printf '%-22s %10s %10s %7s   (N=%d entries of XADD s * field value)\n' "bytes per entry" redis resplock ratio "$N"
printf '%-22s %10s %10s %7s\n' "RSS" "$r_rss" "$l_rss" "$(python3 -c "print('%.2f' % ($l_rss/$r_rss))")"
printf '%-22s %10s %10s %7s\n' "used_memory" "$r_used" "$l_used" "$(python3 -c "print('%.2f' % ($l_used/$r_used))")"

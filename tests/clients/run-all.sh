#!/usr/bin/env bash
# Run every client scenario live against resplock:
#   tests/clients/run-all.sh target/release/resplock [SCENARIO...]
# Lock libraries (redis-py, pottery, python-redis-lock, redlock-py, node-redlock, the redlock
# and rslock crates, redis-cli --eval) and applications built on streams (BullMQ, RQ).
# Installs the libraries from the package registries (a Python venv, npm, cargo) under
# target/clients/, then gives each scenario three fresh instances
# (resplock --instances 3 --port 0 --enable-test-commands yes) in RESPLOCK_NODES, recording
# their lock history (--lock-history yes). After each scenario the history the servers wrote,
# with the clients' own record of their lock operations where the scenario keeps one
# (RESPLOCK_CLIENT_OPS), must pass `resplock check`: one more step per scenario, and a
# timeline target/clients/SCENARIO.html. Needs python3, node/npm, cargo and redis-cli. Ends
# with one line "N passed, M failed" (steps).
#
# Given a redis-server binary instead, the application scenarios (bullmq, rq) run the same
# way against one fresh redis-server, for the same outcome (no lock history there); they move
# time with RESPLOCK.CLOCK when the server has it and wait it out otherwise. The lock
# scenarios drive resplock's test commands (clock, faults) and run against resplock only.
#
# The cluster scenarios (redis-py's RedisCluster, ioredis' Cluster, node-redis' createCluster,
# and cluster-locks: node-redlock over an ioredis Cluster, a Redisson-style lock over sharded
# pub/sub)
# get a cluster instead: `resplock --cluster 3 --replicas 1 --port 0`, or, given redis-server,
# a real Redis Cluster of 6 redis-server nodes (cluster-enabled, on free loopback ports, built
# by `redis-cli --cluster create --cluster-replicas 1`), every node's address in
# RESPLOCK_NODES and CLUSTER_KIND=resplock|redis-server. They move a slot and fail over a
# master with the commands an operator uses, so the same scenario runs against both; then a
# master fails under writes (RESPLOCK.CLUSTER FAIL; on redis-server the scenario kills the
# node with SIGKILL, bash reports it "Killed", and its replica is elected after the
# cluster-node-timeout of 2000 ms) and every write acknowledged by WAIT 1 must be read back
# from the new master, which the clients find by themselves (cluster-locks: locks held on
# that master, see its header). On resplock only, the failed master is then healed and its
# successor partitioned under writes (RESPLOCK.CLUSTER PARTITION) and healed: "n/a" on
# redis-server, counted in neither total.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
ARG=${1:?usage: run-all.sh path/to/resplock [scenario...]}
BIN=$(realpath "$ARG")
shift
HERE="$ROOT/tests/clients"
WORK="$ROOT/target/clients"
mkdir -p "$WORK"

ALL=(redis-py-lock redis-py-asyncio-lock pottery-redlock python-redis-lock redlock-py
  node-redlock4 rust-redlock rust-rslock redis-cli-eval bullmq rq
  redis-py-cluster ioredis-cluster node-redis-cluster cluster-locks)
APPS=(bullmq rq)
CLUSTERS=(redis-py-cluster ioredis-cluster node-redis-cluster cluster-locks)
REDIS=no
# By the name given: redis-server is a symlink to redis-check-rdb on Debian.
[[ "$(basename "$ARG")" == redis-server ]] && REDIS=yes
if [ "$REDIS" = yes ]; then
  SCENARIOS=("$@")
  [ $# -gt 0 ] || SCENARIOS=("${APPS[@]}" "${CLUSTERS[@]}")
else
  SCENARIOS=("${@:-${ALL[@]}}")
fi
wants() { [[ " ${SCENARIOS[*]} " == *" $1 "* ]]; }

echo "== installing the lock libraries"
if wants redis-py-lock || wants redis-py-asyncio-lock || wants pottery-redlock ||
  wants python-redis-lock || wants redlock-py || wants rq || wants redis-py-cluster; then
  [ -x "$WORK/venv/bin/python" ] || python3 -m venv "$WORK/venv"
  "$WORK/venv/bin/pip" install -q --disable-pip-version-check -r "$HERE/python/requirements.txt" || exit 1
fi
if wants node-redlock4 || wants bullmq || wants ioredis-cluster || wants node-redis-cluster || wants cluster-locks; then
  (cd "$HERE/node" && npm ci --silent --no-audit --no-fund) || exit 1
fi
if wants rust-redlock || wants rust-rslock; then
  cargo build -q --release --manifest-path "$HERE/rust/Cargo.toml" || exit 1
fi

command_for() {
  case $1 in
    redis-py-lock) echo "$WORK/venv/bin/python $HERE/python/redis_py_lock.py" ;;
    redis-py-asyncio-lock) echo "$WORK/venv/bin/python $HERE/python/redis_py_asyncio_lock.py" ;;
    pottery-redlock) echo "$WORK/venv/bin/python $HERE/python/pottery_redlock.py" ;;
    python-redis-lock) echo "$WORK/venv/bin/python $HERE/python/python_redis_lock.py" ;;
    redlock-py) echo "$WORK/venv/bin/python $HERE/python/redlock_py.py" ;;
    node-redlock4) echo "node $HERE/node/redlock4.js" ;;
    rust-redlock) echo "$HERE/rust/target/release/resplock-lock-clients redlock" ;;
    rust-rslock) echo "$HERE/rust/target/release/resplock-lock-clients rslock" ;;
    redis-cli-eval) echo "bash $HERE/cli/scenario.sh" ;;
    bullmq) echo "node $HERE/node/bullmq.js" ;;
    rq) echo "$WORK/venv/bin/python $HERE/python/rq_app.py" ;;
    redis-py-cluster) echo "$WORK/venv/bin/python $HERE/python/redis_py_cluster.py" ;;
    ioredis-cluster) echo "node $HERE/node/ioredis-cluster.js" ;;
    node-redis-cluster) echo "node $HERE/node/node-redis-cluster.js" ;;
    cluster-locks) echo "node $HERE/node/cluster-locks.js" ;;
    *) return 1 ;;
  esac
}

free_ports() {
  python3 -c 'import socket,sys
ss=[socket.socket() for _ in range(int(sys.argv[1]))]
for s in ss: s.bind(("127.0.0.1",0))
print(" ".join(str(s.getsockname()[1]) for s in ss))' "$1"
}

# A real Redis Cluster of 6 redis-server nodes (3 masters, 3 replicas) in $1, its addresses in
# $2 (one a line), its pids in CLUSTER_PIDS. Returns non-zero if it does not settle.
CLUSTER_PIDS=()
start_redis_cluster() {
  local dir=$1 out=$2 ports p i ok
  read -ra ports <<<"$(free_ports 12)"
  CLUSTER_PIDS=()
  : >"$out"
  for i in 0 1 2 3 4 5; do
    p=${ports[$i]}
    "$ARG" --port "$p" --cluster-port "${ports[$((i + 6))]}" --bind 127.0.0.1 \
      --cluster-enabled yes --cluster-config-file "$dir/nodes-$p.conf" --cluster-node-timeout 2000 \
      --save '' --appendonly no --dir "$dir" --logfile "$dir/redis-$p.log" &
    CLUSTER_PIDS+=($!)
    echo "127.0.0.1:$p" >>"$out"
  done
  for p in "${ports[@]:0:6}"; do
    for _ in $(seq 1 100); do redis-cli -p "$p" PING 2>/dev/null | grep -q PONG && break; sleep 0.05; done
  done
  redis-cli --cluster create $(sed 's/$/ /' "$out") --cluster-replicas 1 --cluster-yes >"$dir/create.log" 2>&1 ||
    return 1
  for _ in $(seq 1 300); do
    ok=yes
    for p in "${ports[@]:0:6}"; do
      redis-cli -p "$p" CLUSTER INFO | grep -q cluster_state:ok || ok=no
      [ "$(redis-cli -p "$p" CLUSTER NODES | grep -c ' connected')" -eq 6 ] || ok=no
      redis-cli -p "$p" INFO replication | grep -q role:slave &&
        { redis-cli -p "$p" INFO replication | grep -q master_link_status:up || ok=no; }
    done
    [ $ok = yes ] && return 0
    sleep 0.1
  done
  return 1
}

# The servers of the scenario under way, stopped however the script ends (Ctrl-C, timeout).
pids=()
trap '[ ${#pids[@]} -eq 0 ] || kill "${pids[@]}" 2>/dev/null' EXIT
trap 'exit 130' INT TERM

passed=0
failed=0
broken=()
for s in "${SCENARIOS[@]}"; do
  cmd=$(command_for "$s") || { echo "unknown scenario $s"; broken+=("$s"); continue; }
  echo "== $s"
  out="$WORK/$s.nodes"
  history="$WORK/$s.history.jsonl"
  ops="$WORK/$s.ops.jsonl"
  rm -f "$history" "$ops"
  cluster=no
  kind=
  [[ " ${CLUSTERS[*]} " == *" $s "* ]] && cluster=yes
  pids=()
  if [ $cluster = yes ] && [ "$REDIS" = yes ]; then
    cdir="$WORK/$s.cluster"
    rm -rf "$cdir" && mkdir -p "$cdir"
    start_redis_cluster "$cdir" "$out"
    crc=$?
    pids=("${CLUSTER_PIDS[@]}")
    if [ $crc -ne 0 ]; then
      echo "the Redis Cluster did not settle"; tail -5 "$cdir/create.log"
      kill "${pids[@]}" 2>/dev/null; wait "${pids[@]}" 2>/dev/null; broken+=("$s"); continue
    fi
    kind=redis-server
  elif [ $cluster = yes ]; then
    "$BIN" --cluster 3 --replicas 1 --port 0 --enable-test-commands yes --save '' --appendonly no \
      >"$out" 2>"$WORK/$s.log" &
    pids=($!)
    for _ in $(seq 1 100); do [ "$(wc -l <"$out")" -ge 6 ] && break; sleep 0.05; done
    if [ "$(wc -l <"$out")" -lt 6 ]; then
      echo "resplock did not start"; cat "$WORK/$s.log"; kill "${pids[@]}" 2>/dev/null; broken+=("$s"); continue
    fi
    kind=resplock
  elif [ "$REDIS" = yes ]; then
    if [[ " ${APPS[*]} " != *" $s "* ]]; then
      echo "$s drives resplock's test commands: run it against resplock"; broken+=("$s"); continue
    fi
    port=$(python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])')
    "$ARG" --port "$port" --bind 127.0.0.1 --save '' --appendonly no >"$WORK/$s.log" 2>&1 &
    pid=$!
    for _ in $(seq 1 100); do redis-cli -p "$port" PING 2>/dev/null | grep -q PONG && break; sleep 0.05; done
    echo "127.0.0.1:$port" >"$out"
    pids=($pid)
  else
    # The applications keep their data in hashes and counters their scripts write, which
    # the default selection of lock keys would take for locks: they name their locks.
    keys=()
    case $s in
      bullmq) keys=(--lock-history-keys '*:lock') ;;
      rq) keys=(--lock-history-keys '*lock*') ;;
    esac
    # Nothing kept on disk: a scenario never loads what an earlier one saved.
    "$BIN" --port 0 --instances 3 --enable-test-commands yes --save '' --appendonly no \
      --lock-history yes "${keys[@]}" \
      --lock-history-max-events 10000000 --lock-history-file "$history" >"$out" 2>"$WORK/$s.log" &
    pid=$!
    for _ in $(seq 1 100); do [ "$(wc -l <"$out")" -ge 3 ] && break; sleep 0.05; done
    if [ "$(wc -l <"$out")" -lt 3 ]; then
      echo "resplock did not start"; cat "$WORK/$s.log"; kill "$pid" 2>/dev/null; broken+=("$s"); continue
    fi
    pids=($pid)
  fi
  log="$WORK/$s.out"
  RESPLOCK_NODES=$(paste -sd, "$out") SCENARIO="$s" RESPLOCK_CLIENT_OPS="$ops" \
    CLUSTER_KIND=$kind timeout 300 $cmd >"$log" 2>&1
  rc=$?
  kill "${pids[@]}" 2>/dev/null
  wait "${pids[@]}" 2>/dev/null
  pids=()
  # The run's lock history (and the clients' record, if kept) checked: resplock's only, and
  # not for the cluster scenarios, which take no locks.
  files=("$history")
  [ -s "$ops" ] && files+=("$ops")
  if [ "$REDIS" = yes ] || [ $cluster = yes ]; then
    :
  elif [ ! -s "$history" ]; then
    echo "FAIL $s: no lock history was written" >>"$log"
  elif "$BIN" check "${files[@]}" --html "$WORK/$s.html" >"$WORK/$s.check" 2>&1; then
    echo "ok   $s: lock history checks clean ($(head -1 "$WORK/$s.check"))" >>"$log"
  else
    echo "FAIL $s: lock history: $(head -1 "$WORK/$s.check") (see $WORK/$s.check, $WORK/$s.html)" >>"$log"
  fi
  grep -E '^(ok|FAIL|n/a) ' "$log"
  p=$(grep -c '^ok ' "$log")
  f=$(grep -c '^FAIL ' "$log")
  passed=$((passed + p))
  failed=$((failed + f))
  if [ $rc -ne 0 ] || [ "$f" -ne 0 ]; then
    broken+=("$s")
    [ "$f" -ne 0 ] || { echo "$s exited with status $rc:"; tail -20 "$log"; }
  fi
done
[ ${#broken[@]} -eq 0 ] || echo "scenarios with failures: ${broken[*]}"
echo "clients ($(basename "$ARG")): $passed passed, $failed failed"
[ ${#broken[@]} -eq 0 ]

#!/usr/bin/env bash
# redis-cli --eval with the unlock and reentrant lock scripts against the first node of
# RESPLOCK_NODES (host:port,...), as shell scripts and cron jobs take locks.
set -uo pipefail
cd "$(dirname "$0")"
NODE=${RESPLOCK_NODES%%,*}
H=${NODE%:*}
P=${NODE##*:}
WORKERS=20
ROUNDS=5
passed=0
failed=0
cli() { redis-cli -h "$H" -p "$P" "$@"; }

step() {
  local name=$1
  shift
  cli FLUSHALL >/dev/null
  local out
  if out=$("$@" 2>&1); then
    passed=$((passed + 1))
    echo "ok   redis-cli --eval: $name"
  else
    failed=$((failed + 1))
    echo "FAIL redis-cli --eval: $name"
    echo "$out" | sed 's/^/     /'
  fi
}

expect() { # expect WANT CMD...: the command prints exactly WANT
  local want=$1
  shift
  local got
  got=$("$@")
  [ "$got" = "$want" ] || { echo "$*: got '$got', want '$want'"; return 1; }
}

acquire() {
  expect OK cli SET lock:res tok-a NX PX 10000 &&
    expect tok-a cli GET lock:res
}

contention() {
  cli SET lock:res tok-a NX PX 10000 >/dev/null &&
    expect "" cli SET lock:res tok-b NX PX 10000 &&
    expect "" cli --eval reentrant_lock.lua lock:hash , 10000 owner-a &&
    expect 1 bash -c "[ \"\$(redis-cli -h $H -p $P --eval reentrant_lock.lua lock:hash , 10000 owner-b)\" -gt 9000 ] && echo 1"
}

extend_by_reentry() {
  expect "" cli --eval reentrant_lock.lua lock:hash , 10000 owner-a &&
    cli RESPLOCK.CLOCK ADVANCE 6000 >/dev/null &&
    expect "" cli --eval reentrant_lock.lua lock:hash , 10000 owner-a &&
    expect 2 cli HGET lock:hash owner-a &&
    expect 1 bash -c "[ \"\$(redis-cli -h $H -p $P PTTL lock:hash)\" -gt 9000 ] && echo 1"
}

release() {
  cli SET lock:res tok-a NX PX 10000 >/dev/null &&
    expect 1 cli --eval unlock.lua lock:res , tok-a &&
    expect 0 cli EXISTS lock:res &&
    cli --eval reentrant_lock.lua lock:hash , 10000 owner-a >/dev/null &&
    cli --eval reentrant_lock.lua lock:hash , 10000 owner-a >/dev/null &&
    expect 0 cli --eval reentrant_unlock.lua lock:hash lock:chan , 10000 owner-a &&
    expect 1 cli --eval reentrant_unlock.lua lock:hash lock:chan , 10000 owner-a &&
    expect 0 cli EXISTS lock:hash
}

release_by_non_owner() {
  cli SET lock:res tok-a NX PX 10000 >/dev/null &&
    expect 0 cli --eval unlock.lua lock:res , tok-b &&
    expect tok-a cli GET lock:res &&
    cli --eval reentrant_lock.lua lock:hash , 10000 owner-a >/dev/null &&
    expect "" cli --eval reentrant_unlock.lua lock:hash lock:chan , 10000 owner-b &&
    expect 1 cli HGET lock:hash owner-a
}

worker() {
  local me=$1 i n deadline
  for ((i = 0; i < ROUNDS; i++)); do
    deadline=$((SECONDS + 60))
    until [ "$(cli SET lock:res "$me" NX PX 10000)" = OK ]; do
      [ $SECONDS -lt $deadline ] || { echo "worker $me starved"; return 1; }
      sleep 0.01
    done
    n=$(cli GET exclusion:counter)
    cli SET exclusion:counter $(( ${n:-0} + 1 )) >/dev/null
    [ "$(cli --eval unlock.lua lock:res , "$me")" = 1 ] || { echo "worker $me lost its lock"; return 1; }
  done
}

mutual_exclusion() {
  local pids=() ok=0
  for ((w = 0; w < WORKERS; w++)); do
    worker "w$w" &
    pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p" || ok=1; done
  [ $ok = 0 ] && expect $((WORKERS * ROUNDS)) cli GET exclusion:counter
}

expiry_by_clock() {
  cli SET lock:res tok-a NX PX 10000 >/dev/null &&
    cli --eval reentrant_lock.lua lock:hash , 10000 owner-a >/dev/null &&
    cli RESPLOCK.CLOCK ADVANCE 10001 >/dev/null &&
    expect OK cli SET lock:res tok-b NX PX 10000 &&
    expect "" cli --eval reentrant_lock.lua lock:hash , 10000 owner-b &&
    expect 0 cli --eval unlock.lua lock:res , tok-a
}

step "acquire" acquire
step "contention" contention
step "extend (reentrant lock re-entered)" extend_by_reentry
step "release" release
step "release by a non-owner" release_by_non_owner
step "mutual exclusion, 20 workers" mutual_exclusion
step "expiry by moving the clock" expiry_by_clock
echo "redis-cli --eval: $passed passed, $failed failed"
[ $failed = 0 ]

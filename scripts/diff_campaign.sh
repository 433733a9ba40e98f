#!/usr/bin/env bash
# A long differential campaign (tests/differential.rs): every mode over a range of seeds, run
# in chunks so each chunk's log is kept and a divergence in one chunk does not stop the rest,
# then the per-family counts of every chunk summed into one table.
#
#   scripts/diff_campaign.sh FIRST LAST [LOGDIR]   run seeds FIRST..LAST (LAST excluded)
#   scripts/diff_campaign.sh --sum LOGDIR           only sum the logs already in LOGDIR
#
# Environment: DIFF_OPS (steps per seed and mode, default 5000), CHUNK (seeds per cargo run,
# default 5), and any other DIFF_* variable of tests/differential.rs (DIFF_EXCLUDE, DIFF_SHRINK).
# Each mode starts its own redis-server (it must be on PATH, 7.0). With the defaults, seeds
# 1..51 run about 10^6 commands over the modes, about an hour on two cores.
#
# The summary gives commands per mode and per family, and every divergence line with its seed;
# each divergence's shrunk sequence, ready to paste as a conformance case, is in its chunk's log.
set -euo pipefail
cd "$(dirname "$0")/.."

sum() {
  python3 - "$1" <<'PY'
import collections, glob, os, re, sys
logdir = sys.argv[1]
modes = collections.Counter()
families = collections.Counter()
divergences = []
logs = sorted(glob.glob(os.path.join(logdir, "seeds-*.log")),
              key=lambda p: int(re.search(r"seeds-(\d+)", p).group(1)))
for path in logs:
    for line in open(path, errors="replace"):
        m = re.match(r"^(\w[\w ]*): (\d+) commands in [\d.]+ s, per family: (.*)$", line)
        if m:
            modes[m.group(1)] += int(m.group(2))
            for part in m.group(3).split(", "):
                if part:
                    f, n = part.rsplit(" ", 1)
                    families[f] += int(n)
        elif line.startswith("DIVERGENCE"):
            divergences.append("%s: %s" % (os.path.basename(path), line.strip()))
print("logs: %d chunk(s) in %s" % (len(logs), logdir))
print("commands: %d in all" % sum(modes.values()))
for mode, n in sorted(modes.items()):
    print("  mode %-10s %9d" % (mode, n))
for f, n in sorted(families.items()):
    print("  family %-12s %9d" % (f, n))
print("divergences: %d" % len(divergences))
for d in divergences:
    print("  " + d)
PY
}

if [ "${1:-}" = "--sum" ]; then
  sum "${2:?usage: $0 --sum LOGDIR}"
  exit 0
fi
FIRST=${1:?usage: $0 FIRST LAST [LOGDIR]}
LAST=${2:?usage: $0 FIRST LAST [LOGDIR]}
LOGDIR=${3:-target/diff-campaign}
CHUNK=${CHUNK:-5}
export DIFF_OPS=${DIFF_OPS:-5000} DIFF_SECONDS=0 CONFORMANCE_REDIS=${CONFORMANCE_REDIS:-own}
mkdir -p "$LOGDIR"
# Built once; the chunks run that binary, so editing the sources during a campaign (to fix
# what it found) does not rebuild or change the server under test half-way.
BIN=$(cargo test --release --test differential --no-run --message-format=json |
  python3 -c 'import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["name"] == "differential":
        print(m["executable"])')
for ((a = FIRST; a < LAST; a += CHUNK)); do
  b=$((a + CHUNK < LAST ? a + CHUNK : LAST))
  log="$LOGDIR/seeds-$a-$b.log"
  echo "seeds $a..$b -> $log ($(date -u +%H:%M:%S))"
  # A divergence fails the test run; the chunk's report is still in its log.
  DIFF_SEED="$a..$b" "$BIN" --nocapture --test-threads 1 >"$log" 2>&1 ||
    echo "  divergence or failure: see $log"
done
sum "$LOGDIR"

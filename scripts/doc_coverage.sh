#!/usr/bin/env bash
# Every public item of the library API is documented with an example, and the docs build
# without warnings (broken or private intra-doc links). Run by .ci/run; works on a clean clone
# with stable Rust (rustdoc's coverage report is an unstable flag, hence RUSTC_BOOTSTRAP).
#   1. rustdoc --show-coverage: every documented item, and an example on every item rustdoc
#      expects one on (types, free functions, ...);
#   2. scripts/doc_examples.py: an example on every public method too (rustdoc does not
#      count inherent methods);
#   3. cargo doc with -D warnings.
set -euo pipefail
cd "$(dirname "$0")/.."
REPORT=$(RUSTC_BOOTSTRAP=1 cargo rustdoc --lib -q -- -Z unstable-options --show-coverage \
  --output-format json)
python3 - "$REPORT" <<'PY'
import json, sys
report = json.loads(sys.argv[1])
bad = []
for name, c in sorted(report.items()):
    if c["with_docs"] < c["total"] or c["with_examples"] < c["total_examples"]:
        bad.append("%s: %d/%d documented, %d/%d with examples" % (
            name, c["with_docs"], c["total"], c["with_examples"], c["total_examples"]))
if bad:
    print("public items without docs or examples:")
    print("\n".join(bad))
    sys.exit(1)
total = sum(c["total"] for c in report.values())
print("rustdoc coverage: %d public items documented, every eligible one with an example" % total)
PY
python3 scripts/doc_examples.py
RUSTDOCFLAGS="-D warnings" cargo doc --no-deps -q
echo "cargo doc: no warnings"

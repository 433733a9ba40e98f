#!/usr/bin/env python3
"""Every public function and method of resplock's library API has a doc example.

Reads the files of the public surface (FILES below) line by line: a `pub fn` or `pub async fn`
(not `pub(crate)`/`pub(super)`, not `#[doc(hidden)]`) whose doc comment has no ``` block is
reported. Exits 1 if any is, naming them. Run by .ci/run; rustdoc's own coverage report
(--show-coverage) does not count methods, hence this scan.
"""
import re
import sys
from pathlib import Path

FILES = [
    "src/lib.rs",
    "src/server/mod.rs",
    "src/server/backend.rs",
    "src/server/process.rs",
    "src/config/mod.rs",
    "src/config/load.rs",
    "src/config/own_args.rs",
    "src/clock.rs",
    "src/version.rs",
    "src/keyspace/snapshot.rs",
    "src/reply.rs",
    "src/alloc.rs",
]

# impl blocks of types outside the public surface (the keyspace is a #[doc(hidden)] module).
HIDDEN_IMPLS = ("impl Keyspace",)

root = Path(__file__).resolve().parent.parent
missing = []
for name in FILES:
    lines = (root / name).read_text().splitlines()
    in_hidden = False
    for i, line in enumerate(lines):
        if line.startswith("impl") or line.startswith("pub fn") or line.startswith("pub async fn"):
            in_hidden = line.startswith(HIDDEN_IMPLS)
        if in_hidden:
            continue
        if not re.match(r"\s*pub (async )?(const )?(unsafe )?fn ", line):
            continue
        j = i - 1
        doc, hidden = [], False
        while j >= 0 and (lines[j].strip().startswith("///") or lines[j].strip().startswith("#[")):
            if "doc(hidden)" in lines[j]:
                hidden = True
            doc.append(lines[j])
            j -= 1
        if hidden:
            continue
        if not any("```" in d for d in doc):
            fn = re.search(r"fn (\w+)", line).group(1)
            missing.append(f"{name}:{i + 1}: {fn}")
if missing:
    print(f"{len(missing)} public functions without a doc example:")
    print("\n".join(missing))
    sys.exit(1)
print(f"doc examples: every public function in {len(FILES)} files has one")

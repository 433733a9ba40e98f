#!/usr/bin/env python3
"""Every public type, function and method of resplock's library API has a doc example.

Reads the files of the public surface (FILES below) line by line: a `pub fn`, `pub async fn`,
`pub struct`, `pub enum` or `pub trait` (not `pub(crate)`/`pub(super)`, not `#[doc(hidden)]`)
whose doc comment has no ``` block is reported. rustdoc's own coverage report
(--show-coverage) counts no methods, and not the types src/server/backend/ defines in a
private module for the crate root to re-export (Db, Hit, Restart), hence this scan.
Also reported: a `no_run` example without a comment line saying why it must not run
(`// no_run: ...`; an example that can run should, so that it checks something), and a file
under src/config/ or src/server/ that adds public methods to a public type but is missing from
FILES (how `Config::rewrite` in config/rewrite.rs went unchecked). Exits 1 if anything is
reported, naming it. Run by .ci/run through scripts/doc_coverage.sh.
"""
import re
import sys
from pathlib import Path

FILES = [
    "src/lib.rs",
    "src/server/mod.rs",
    "src/server/backend/mod.rs",
    "src/server/backend/db.rs",
    "src/server/history.rs",
    "src/server/process.rs",
    "src/config/mod.rs",
    "src/config/load.rs",
    "src/config/own_args.rs",
    "src/config/settings.rs",
    "src/config/rewrite.rs",
    "src/clock.rs",
    "src/version.rs",
    "src/keyspace/snapshot.rs",
    "src/reply.rs",
    "src/alloc.rs",
    "src/history/mod.rs",
    "src/history/event/mod.rs",
    "src/history/event/store.rs",
    "src/history/event/read.rs",
    "src/history/event/write.rs",
    "src/history/check/mod.rs",
    "src/history/html.rs",
    "src/history/cli.rs",
    "src/history/client_ops.rs",
]

# impl blocks of types outside the public surface (the keyspace is a #[doc(hidden)] module).
HIDDEN_IMPLS = ("impl Keyspace",)

# Public types whose inherent methods are API wherever their impl block lives.
PUBLIC_TYPES = (
    "Config|LogLevel|ProtectedAction|Startup|Fatal|Action|OwnArgs|Clock|Snapshot|Reply"
    "|Backend|BlockingServer|Db|Hit|Restart|ServerHandle|Counting"
    "|History|Event|Cause|OpKind|ClientOp|Report|ViolationKind|ClientRecorder|OpCall"
)
# Folders of public modules: a file there with `impl <public type>` and a `pub fn` in it must be
# in FILES.
PUBLIC_DIRS = ("src/config", "src/server", "src/history")

root = Path(__file__).resolve().parent.parent
missing = []
for name in FILES:
    lines = (root / name).read_text().splitlines()
    in_hidden = False
    for i, line in enumerate(lines):
        m = re.match(r"\s*(///|//!)\s*```(.*)", line)
        if m and "no_run" in m.group(2):
            k = i + 1
            while k < len(lines) and not re.match(r"\s*(///|//!)\s*```\s*$", lines[k]):
                k += 1
            if not any("//" in re.sub(r"^\s*(///|//!)", "", l) and "no_run" in l for l in lines[i + 1 : k]):
                missing.append(f"{name}:{i + 1}: a no_run example without a `// no_run: why` line")
        if line.startswith("impl") or line.startswith("pub fn") or line.startswith("pub async fn"):
            in_hidden = line.startswith(HIDDEN_IMPLS)
        if in_hidden:
            continue
        if not re.match(r"\s*pub (async )?(const )?(unsafe )?fn |pub (struct|enum|trait) ", line):
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
            fn = re.search(r"(fn|struct|enum|trait) (\w+)", line).group(2)
            missing.append(f"{name}:{i + 1}: {fn}")

listed = set(FILES)
impl_re = re.compile(r"^impl(<[^>]*>)? (" + PUBLIC_TYPES + r")\b(<[^>]*>)? *\{")
for d in PUBLIC_DIRS:
    for path in sorted((root / d).rglob("*.rs")):
        name = str(path.relative_to(root))
        if name in listed or "/tests" in name or name.endswith("tests.rs"):
            continue
        in_impl = False
        for i, line in enumerate(path.read_text().splitlines()):
            if impl_re.match(line):
                in_impl = True
            elif line.startswith("}"):
                in_impl = False
            elif in_impl and re.match(r"    pub (async )?(const )?(unsafe )?fn ", line):
                missing.append(f"{name}:{i + 1}: public method in a file missing from FILES")
                break

if missing:
    print(f"{len(missing)} public items without a (runnable) doc example:")
    print("\n".join(missing))
    sys.exit(1)
print(f"doc examples: every public type and function in {len(FILES)} files has one")

#!/usr/bin/env python3
"""Generate src/cmd/base/meta_data/: the COMMAND INFO / COMMAND DOCS fields that resplock's command
rows do not hold (ACL categories, command tips, key specs, and the docs fields complexity,
doc_flags, deprecated_since, replaced_by, history, arguments), recorded from a redis-server 7.0.

Every command and subcommand redis-server knows is recorded (its own `COMMAND LIST` gives the
names), so adding a command to resplock needs no new recording. The data is written in parts of
at most PART entries, sorted by name, so no source file grows past a few hundred lines:

    redis-server --port 7019 --bind 127.0.0.1 --save '' --appendonly no --daemonize yes
    python3 conformance/tools/gen_command_meta.py --redis 127.0.0.1:7019

`--check` instead compares resplock's COMMAND INFO / COMMAND DOCS replies with redis's for every
command (RESP2 and RESP3) and prints the differences.
"""
import argparse
import os
import socket
import sys

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "src", "cmd", "base", "meta_data")
PART = 60


class Conn:
    def __init__(self, addr):
        host, port = addr.rsplit(":", 1)
        self.s = socket.create_connection((host, int(port)))
        self.buf = b""
        self.rec = None

    def _fill(self):
        d = self.s.recv(1 << 20)
        if not d:
            raise EOFError("connection closed")
        self.buf += d

    def _line(self):
        while b"\r\n" not in self.buf:
            self._fill()
        i = self.buf.index(b"\r\n")
        line, self.buf = self.buf[:i], self.buf[i + 2:]
        if self.rec is not None:
            self.rec.append(line + b"\r\n")
        return line

    def _bytes(self, n):
        while len(self.buf) < n + 2:
            self._fill()
        b, self.buf = self.buf[:n], self.buf[n + 2:]
        if self.rec is not None:
            self.rec.append(b + b"\r\n")
        return b

    def read(self):
        """One reply as a typed tree: (type_char, value)."""
        line = self._line()
        t, rest = chr(line[0]), line[1:]
        if t in "+-":
            return (t, rest)
        if t == ":":
            return (t, int(rest))
        if t == "_":
            return (t, None)
        if t in "$=":
            n = int(rest)
            return (t, None) if n < 0 else (t, self._bytes(n))
        if t in "*~>":
            n = int(rest)
            return (t, None) if n < 0 else (t, [self.read() for _ in range(n)])
        if t == "%":
            n = int(rest)
            return (t, [(self.read(), self.read()) for _ in range(n)])
        raise ValueError("unexpected reply type %r" % t)

    def raw(self, args):
        """Send a command, return the raw bytes of its reply."""
        self.send(args)
        self.rec = []
        self.read()
        out, self.rec = b"".join(self.rec), None
        return out

    def send(self, args):
        out = b"*%d\r\n" % len(args)
        for a in args:
            a = a.encode() if isinstance(a, str) else a
            out += b"$%d\r\n%s\r\n" % (len(a), a)
        self.s.sendall(out)

    def call(self, *args):
        self.send(args)
        r = self.read()
        if r[0] == "-":
            raise RuntimeError(r[1].decode())
        return r


def rust_str(b):
    s = b.decode("utf-8")
    out = []
    for ch in s:
        if ch == "\\":
            out.append("\\\\")
        elif ch == '"':
            out.append('\\"')
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\r":
            out.append("\\r")
        elif ch == "\t":
            out.append("\\t")
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append("\\u{%x}" % ord(ch))
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def rust_m(node):
    """A reply tree as a `M` constant expression."""
    t, v = node
    if t == "+":
        return "S(%s)" % rust_str(v)
    if t == "$":
        return "B(%s)" % rust_str(v)
    if t == ":":
        return "I(%d)" % v
    if t == "*":
        return "A(&[%s])" % ", ".join(rust_m(x) for x in v)
    if t == "~":
        return "Set(&[%s])" % ", ".join(rust_m(x) for x in v)
    if t == "%":
        return "Map(&[%s])" % ", ".join("(%s, %s)" % (map_key(k), rust_m(x)) for k, x in v)
    raise ValueError("cannot store reply type %r" % t)


def map_key(k):
    if k[0] != "$":
        raise ValueError("map key is not a bulk string: %r" % (k,))
    return rust_str(k[1])


def names_of(resplock):
    r = resplock.call("COMMAND", "LIST")
    return sorted(x[1].decode() for x in r[1])


def generate(args):
    redis = Conn(args.redis)
    redis.call("HELLO", "3")
    ver = dict((k[1].decode(), v[1]) for k, v in redis.call("HELLO", "3")[1])["version"].decode()
    names = names_of(redis)
    names = sorted(set(names + args.names))
    entries = []
    for name in names:
        info = redis.call("COMMAND", "INFO", name)[1][0]
        docs = redis.call("COMMAND", "DOCS", name)[1]
        if info[0] == "_" or not docs:
            raise ValueError("%s: redis lists it but has no INFO or DOCS" % name)
        info = info[1]
        if info[0][1].decode() != name:
            raise ValueError("%s: redis calls it %s" % (name, info[0][1]))
        flags = [x[1].decode() for x in info[2][1]]
        acl, tips, key_specs = info[6], info[7], info[8]
        doc_fields = [(k[1].decode(), v) for k, v in docs[0][1][1]]
        extra = [(k, v) for k, v in doc_fields if k not in ("summary", "since", "group", "subcommands")]
        entries.append((name, flags, acl, tips, key_specs, extra))
    os.makedirs(args.out, exist_ok=True)
    for old in os.listdir(args.out):
        if old.startswith("part_") and old.endswith(".rs"):
            os.remove(os.path.join(args.out, old))
    parts = [entries[i:i + PART] for i in range(0, len(entries), PART)]
    head = "// @generated by conformance/tools/gen_command_meta.py from redis-server %s: do not edit.\n" % ver
    for n, part in enumerate(parts):
        with open(os.path.join(args.out, "part_%02d.rs" % n), "w") as f:
            f.write(head)
            f.write("// COMMAND INFO / COMMAND DOCS fields, %s to %s.\n\n" % (part[0][0], part[-1][0]))
            f.write("use super::super::Meta;\nuse super::super::M::*;\n\n")
            f.write("pub static META: &[Meta] = &[\n")
            for name, flags, acl, tips, key_specs, extra in part:
                f.write("    Meta {\n")
                f.write("        name: %s,\n" % rust_str(name.encode()))
                f.write("        flags: &[%s],\n" % ", ".join(rust_str(x.encode()) for x in flags))
                f.write("        acl: %s,\n" % rust_m(acl))
                f.write("        tips: %s,\n" % rust_m(tips))
                f.write("        key_specs: %s,\n" % rust_m(key_specs))
                f.write("        docs: &[%s],\n" % ", ".join("(%s, %s)" % (rust_str(k.encode()), rust_m(v)) for k, v in extra))
                f.write("    },\n")
            f.write("];\n")
    with open(os.path.join(args.out, "mod.rs"), "w") as f:
        f.write(head)
        f.write("// Every command and subcommand of redis-server %s, in parts sorted by name.\n\n" % ver)
        for n in range(len(parts)):
            f.write("mod part_%02d;\n" % n)
        f.write("\n/// The parts, in name order (each sorted by name).\n")
        f.write("pub static PARTS: &[&[super::Meta]] = &[%s];\n" % ", ".join("part_%02d::META" % n for n in range(len(parts))))
    print("wrote %s: %d entries in %d parts" % (args.out, len(entries), len(parts)))


INFO_FIELDS = ["name", "arity", "flags", "first_key", "last_key", "step", "acl_categories", "tips", "key_specs", "subcommands"]


def norm(node):
    """Sort subcommands (redis lists them in its dict order, which varies between runs)."""
    t, v = node
    if t == "%":
        out = []
        for k, x in v:
            x = norm(x)
            if k == ("$", b"subcommands") and x[0] == "%":
                x = ("%", sorted(x[1], key=repr))
            out.append((k, x))
        return (t, out)
    if t in "*~" and v is not None:
        v = [norm(x) for x in v]
        if t == "*" and len(v) == 10 and v[0][0] == "$" and v[1][0] == ":" and v[9][0] == "*":
            v[9] = ("*", sorted(v[9][1], key=repr))
        if t == "*" and len(v) % 2 == 0 and ("$", b"subcommands") in v[::2]:
            i = v.index(("$", b"subcommands"))
            sub = v[i + 1][1]
            pairs = sorted(zip(sub[::2], sub[1::2]), key=repr)
            v[i + 1] = ("*", [x for p in pairs for x in p])
        return (t, v)
    return node


def fields(kind, node):
    """A reply entry split into named fields, for a readable difference list."""
    t, v = node
    if kind == "INFO" and t == "*" and len(v) == 10:
        return dict(zip(INFO_FIELDS, v))
    if kind == "DOCS" and t == "%" and len(v) == 1:
        return dict((k[1].decode(), x) for k, x in v[0][1][1])
    if kind == "DOCS" and t == "*" and len(v) == 2:
        inner = v[1][1]
        return dict((inner[i][1].decode(), inner[i + 1]) for i in range(0, len(inner), 2))
    return {"whole": node}


def check(args):
    fails = 0
    names = names_of(Conn(args.resplock))
    for proto in ("2", "3"):
        redis, mine = Conn(args.redis), Conn(args.resplock)
        redis.call("HELLO", proto)
        mine.call("HELLO", proto)
        for name in names:
            for kind in ("INFO", "DOCS"):
                redis.send(["COMMAND", kind, name])
                mine.send(["COMMAND", kind, name])
                a, b = norm(redis.read()), norm(mine.read())
                if a == b:
                    continue
                fails += 1
                if kind == "INFO" and a[1]:
                    a, b = a[1][0], b[1][0]
                fa, fb = fields(kind, a), fields(kind, b)
                for k in sorted(set(fa) | set(fb)):
                    if fa.get(k) != fb.get(k):
                        print("RESP%s %s %s %s: redis %r, resplock %r" % (proto, kind, name, k, fa.get(k), fb.get(k)))
    print("%d differences" % fails)
    return 1 if fails else 0


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--redis", required=True, help="host:port of a redis-server 7.0")
    p.add_argument("--resplock", help="host:port of a running resplock (--check compares it with redis)")
    p.add_argument("--out", default=OUT)
    p.add_argument("--check", action="store_true", help="compare replies instead of generating")
    p.add_argument("names", nargs="*", help="extra full command names (e.g. client|kill)")
    args = p.parse_args()
    if args.check:
        sys.exit(check(args))
    generate(args)


if __name__ == "__main__":
    main()

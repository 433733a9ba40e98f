#!/usr/bin/env python3
"""Generate src/cmd/base/redis_commands.rs: every command and subcommand of a redis-server 7.0
as its COMMAND INFO and COMMAND DOCS describe it (name, arity, flags, key range, ACL
categories, tips, key specs, summary, since, group, and the docs fields complexity, doc_flags,
deprecated_since, replaced_by, history, arguments). It is the one source of a command's
metadata: resplock's rows hold a name and a handler, and the command table takes the rest from
here.

Every command and subcommand redis-server knows is recorded (its own `COMMAND LIST` gives the
names), so adding a command to resplock needs no new recording. One generated file:

    redis-server --port 7019 --bind 127.0.0.1 --save '' --appendonly no --daemonize yes
    python3 conformance/tools/gen_command_meta.py --redis 127.0.0.1:7019

`--check` instead compares resplock's COMMAND INFO / COMMAND DOCS replies with redis's for every
command (RESP2 and RESP3) and prints the differences.
"""
import argparse
import os
import socket
import sys

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "src", "cmd", "base", "redis_commands.rs")
# Reply trees longer than this on one line are written over several.
WIDTH = 90


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


def rust_m(node, indent=0):
    """A reply tree as a `M` constant expression, over several lines when it is long."""
    t, v = node
    if t == "+":
        return "S(%s)" % rust_str(v)
    if t == "$":
        return "B(%s)" % rust_str(v)
    if t == ":":
        return "I(%d)" % v
    if t in "*~%":
        head = {"*": "A(&[", "~": "Set(&[", "%": "Map(&["}[t]
        if t == "%":
            items = ["(%s, %s)" % (map_key(k), rust_m(x, indent + 4)) for k, x in v]
        else:
            items = [rust_m(x, indent + 4) for x in v]
        flat = head + ", ".join(items) + "])"
        if len(flat) + indent <= WIDTH and "\n" not in flat:
            return flat
        pad = " " * (indent + 4)
        return head + "\n" + "".join(pad + it + ",\n" for it in items) + " " * indent + "])"
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
    out = []
    w = out.append
    w("// @generated by conformance/tools/gen_command_meta.py from redis-server %s: do not edit.\n" % ver)
    w("//! Every command and subcommand of redis-server %s as its COMMAND INFO and COMMAND DOCS\n" % ver)
    w("//! describe it, sorted by full name: the one source of a command's metadata (the rows of\n")
    w("//! `cmd/families/` hold a name and a handler). Recorded from a live server by\n")
    w("//! `conformance/tools/gen_command_meta.py`.\n\n")
    w("use super::meta::Meta;\nuse super::meta::M::*;\n\n")
    w("pub static COMMANDS: &[Meta] = &[\n")
    for name in names:
        info = redis.call("COMMAND", "INFO", name)[1][0]
        docs = redis.call("COMMAND", "DOCS", name)[1]
        if info[0] == "_" or not docs:
            raise ValueError("%s: redis lists it but has no INFO or DOCS" % name)
        info = info[1]
        if info[0][1].decode() != name:
            raise ValueError("%s: redis calls it %s" % (name, info[0][1]))
        arity = info[1][1]
        flags = [x[1].decode() for x in info[2][1]]
        first, last, step = info[3][1], info[4][1], info[5][1]
        acl, tips, key_specs = info[6], info[7], info[8]
        doc_fields = [(k[1].decode(), v) for k, v in docs[0][1][1]]
        known = dict((k, v) for k, v in doc_fields if k in ("summary", "since", "group"))
        extra = [(k, v) for k, v in doc_fields if k not in ("summary", "since", "group", "subcommands")]
        text = lambda k: rust_str(known[k][1]) if k in known else '""'
        w("    Meta {\n")
        w("        name: %s,\n" % rust_str(name.encode()))
        w("        arity: %d,\n" % arity)
        w("        flags: &[%s],\n" % ", ".join(rust_str(x.encode()) for x in flags))
        w("        keys: (%d, %d, %d),\n" % (first, last, step))
        w("        acl: %s,\n" % rust_m(acl, 8))
        w("        tips: %s,\n" % rust_m(tips, 8))
        w("        key_specs: %s,\n" % rust_m(key_specs, 8))
        w("        summary: %s,\n" % text("summary"))
        w("        since: %s,\n" % text("since"))
        w("        group: %s,\n" % text("group"))
        if not extra:
            w("        docs: &[],\n")
        else:
            w("        docs: &[\n")
            for k, v in extra:
                w("            (%s, %s),\n" % (rust_str(k.encode()), rust_m(v, 12)))
            w("        ],\n")
        w("    },\n")
    w("];\n")
    with open(args.out, "w") as f:
        f.write("".join(out))
    print("wrote %s: %d entries" % (args.out, len(names)))


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

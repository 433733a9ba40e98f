#!/usr/bin/env python3
"""Seed the fuzz corpora from the recorded conformance sessions (conformance/*.case).

parse_request: every command as a multibulk request and as an inline line, and every `>raw`
byte string, each behind the target's two control bytes. dispatch: each case as text lines
(`> COMMAND args`). lua_sandbox: every script body an EVAL or SCRIPT LOAD sends.
Run from the repository root: python3 fuzz/seed_corpus.py (writes fuzz/corpus/<target>/).
"""
import glob, hashlib, os, re, sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

def split_args(line):
    """Redis's sdssplitargs (as resplock::protocol::split_args): None on unbalanced quotes."""
    out, i, n = [], 0, len(line)
    while True:
        while i < n and line[i] in b' \n\r\t\x0b\x0c':
            i += 1
        if i >= n:
            return out
        cur, inq, insq = bytearray(), False, False
        while True:
            if inq:
                if i >= n:
                    return None
                c = line[i]
                if c == 0x5c and i + 3 < n and line[i+1] == ord('x') and re.match(rb'[0-9a-fA-F]{2}', line[i+2:i+4]):
                    cur.append(int(line[i+2:i+4], 16)); i += 3
                elif c == 0x5c and i + 1 < n:
                    i += 1
                    cur.append({ord('n'): 10, ord('r'): 13, ord('t'): 9, ord('b'): 8, ord('a'): 7}.get(line[i], line[i]))
                elif c == ord('"'):
                    if i + 1 < n and line[i+1] not in b' \n\r\t\x0b\x0c':
                        return None
                    i += 1
                    break
                else:
                    cur.append(c)
            elif insq:
                if i >= n:
                    return None
                c = line[i]
                if c == 0x5c and i + 1 < n and line[i+1] == ord("'"):
                    i += 1; cur.append(ord("'"))
                elif c == ord("'"):
                    if i + 1 < n and line[i+1] not in b' \n\r\t\x0b\x0c':
                        return None
                    i += 1
                    break
                else:
                    cur.append(c)
            else:
                if i >= n:
                    break
                c = line[i]
                if c in b' \n\r\t\x0b\x0c':
                    break
                if c == ord('"'):
                    inq = True
                elif c == ord("'"):
                    insq = True
                else:
                    cur.append(c)
            i += 1
        out.append(bytes(cur))

def multibulk(args):
    return b'*%d\r\n' % len(args) + b''.join(b'$%d\r\n%s\r\n' % (len(a), a) for a in args)

def write(target, data):
    d = os.path.join(ROOT, 'fuzz', 'corpus', target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, hashlib.sha1(data).hexdigest()), 'wb') as f:
        f.write(data)

def main():
    counts = {}
    def put(t, data):
        write(t, data); counts[t] = counts.get(t, 0) + 1
    for path in sorted(glob.glob(os.path.join(ROOT, 'conformance', '*.case'))):
        case = []
        for raw in open(path, 'rb').read().split(b'\n') + [b'### case: end']:
            if raw.startswith(b'### case:'):
                if case:
                    put('dispatch', b'\n'.join(case))
                case = []
            elif raw.startswith(b'>raw '):
                parts = split_args(raw[5:])
                if parts:
                    put('parse_request', b'\x00\x07' + parts[0])
            elif raw.startswith(b'> '):
                args = split_args(raw[2:])
                if not args:
                    continue
                case.append(raw)
                put('parse_request', b'\x00\x05' + multibulk(args))
                put('parse_request', b'\x02\x03' + raw[2:] + b'\r\n')
                name = args[0].lower()
                if name in (b'eval', b'eval_ro') and len(args) > 1:
                    put('lua_sandbox', args[1])
                elif name == b'script' and len(args) > 2 and args[1].lower() == b'load':
                    put('lua_sandbox', args[2])
    for t, c in sorted(counts.items()):
        print(f'{t}: {c} seeds')

if __name__ == '__main__':
    main()

#!/usr/bin/env python3
"""Memory for a large request that never completes, and after its client leaves.

Sends `MSET k1 <512 MB> k2 <512 MB> k3 <512 MB>` but stops after SEND_MB megabytes (default
1090, as in issue 16), then reports the server's RSS against the bytes received, closes the
connection and reports RSS every 100 ms for 2 s. Bounded: one connection, SEND_MB of data.

    python3 benches/request_memory.py SERVER_BIN [PORT] [SEND_MB]

SERVER_BIN is target/release/resplock or redis-server; it is started here on 127.0.0.1:PORT
(default 8090) and stopped afterwards.
"""
import socket, subprocess, sys, time

def rss(pid):
    with open(f'/proc/{pid}/status') as f:
        for line in f:
            if line.startswith('VmRSS:'):
                return int(line.split()[1]) * 1024
    return 0

def main():
    binary = sys.argv[1]
    port = int(sys.argv[2]) if len(sys.argv) > 2 else 8090
    send_mb = int(sys.argv[3]) if len(sys.argv) > 3 else 1090
    proc = subprocess.Popen([binary, '--port', str(port), '--bind', '127.0.0.1', '--save', '',
                             '--appendonly', 'no'], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(100):
            try:
                socket.create_connection(('127.0.0.1', port)).close()
                break
            except OSError:
                time.sleep(0.05)
        base = rss(proc.pid)
        s = socket.create_connection(('127.0.0.1', port))
        val = 512 * 1024 * 1024
        s.sendall(b'*7\r\n$4\r\nMSET\r\n')
        chunk = b'v' * (1 << 20)
        sent = 0
        arg = 0
        while sent < send_mb * (1 << 20):
            if sent % (val) == 0 and arg < 3:
                arg += 1
                s.sendall(b'$2\r\nk%d\r\n$%d\r\n' % (arg, val))
            s.sendall(chunk)
            sent += len(chunk)
            if sent % val == 0:
                s.sendall(b'\r\n')
        time.sleep(1.0)
        held = rss(proc.pid)
        print(f'{binary}: baseline RSS {base / 2**20:.0f} MB; after {sent / 2**20:.0f} MB of an '
              f'unfinished MSET: RSS {held / 2**20:.0f} MB, {(held - base) / sent:.2f}x the bytes received')
        s.close()
        t0 = time.time()
        trail = []
        while time.time() - t0 < 2.0:
            time.sleep(0.1)
            trail.append((time.time() - t0, rss(proc.pid)))
        back = next((t for t, r in trail if r < base + 32 * 2**20), None)
        print('  after the client left: ' + ', '.join(f'{t:.1f}s {r / 2**20:.0f} MB' for t, r in trail[::3]))
        print(f'  back within 32 MB of baseline after: {f"{back:.1f} s" if back is not None else "not within 2 s"}')
    finally:
        proc.terminate()
        proc.wait()

if __name__ == '__main__':
    main()

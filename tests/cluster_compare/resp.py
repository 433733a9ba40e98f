"""A small RESP2/RESP3 client for the side-by-side comparison (standard library only)."""

import socket


class RespError(str):
    """An error reply (its text, without the leading '-')."""


class Simple(str):
    """A simple string reply."""


class Verbatim(bytes):
    """A RESP3 verbatim string (its text after the format prefix)."""


class Push(list):
    """A RESP3 push."""


def encode(args):
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        if isinstance(a, str):
            a = a.encode()
        elif isinstance(a, int):
            a = str(a).encode()
        out.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(out)


class Conn:
    """One connection; `cmd` sends a command and reads its reply."""

    def __init__(self, host, port, timeout=10.0):
        self.sock = socket.create_connection((host, port), timeout=timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = b""

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass

    def _fill(self):
        chunk = self.sock.recv(65536)
        if not chunk:
            raise ConnectionError("connection closed")
        self.buf += chunk

    def _line(self):
        while True:
            i = self.buf.find(b"\r\n")
            if i >= 0:
                line, self.buf = self.buf[:i], self.buf[i + 2:]
                return line
            self._fill()

    def _exact(self, n):
        while len(self.buf) < n + 2:
            self._fill()
        data, self.buf = self.buf[:n], self.buf[n + 2:]
        return data

    def read(self):
        line = self._line()
        kind, rest = line[:1], line[1:]
        if kind == b"+":
            return Simple(rest.decode())
        if kind == b"-":
            return RespError(rest.decode())
        if kind == b":":
            return int(rest)
        if kind == b"$":
            n = int(rest)
            return None if n < 0 else self._exact(n)
        if kind in (b"*", b"~", b">"):
            n = int(rest)
            if n < 0:
                return None
            items = [self.read() for _ in range(n)]
            return Push(items) if kind == b">" else items
        if kind == b"%":
            n = int(rest)
            return {"__map__": [(self.read(), self.read()) for _ in range(n)]}
        if kind == b"_":
            return None
        if kind == b"#":
            return rest == b"t"
        if kind == b",":
            return float(rest)
        if kind == b"=":
            data = self._exact(int(rest))
            return Verbatim(data[4:])
        if kind == b"|":
            n = int(rest)
            for _ in range(2 * n):
                self.read()
            return self.read()
        raise ValueError("bad reply %r" % line)

    def cmd(self, *args):
        self.sock.sendall(encode(args))
        return self.read()

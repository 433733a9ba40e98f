"""resplock, a Redis 7.0-compatible server for tests, driven from Python.

``Server`` starts the ``resplock`` binary this package installs (or another binary, or a real
redis-server) on a free loopback port and a unix socket, waits until it answers, and wraps
resplock's test commands (``RESPLOCK.CLOCK``, ``RESPLOCK.FAULT``, ``RESPLOCK.SNAPSHOT``,
``RESPLOCK.RESTART``, ``RESPLOCK.HISTORY``)::

    with resplock.Server() as server:
        r = server.client()
        r.set("lock:a", "owner-1", nx=True, px=30_000)
        server.clock.advance(30_001)
        assert r.get("lock:a") is None

``Cluster`` starts an in-process Redis Cluster (``resplock --cluster N --replicas R``) and
wraps its controls (fail a master, partition a node, migrate slots). The pytest fixtures built
on both live in ``resplock.pytest_plugin``.
"""

import json
import os
import shutil
import socket
import subprocess
import sys
import sysconfig
import tempfile
import time

__all__ = ["Server", "Cluster", "Clock", "binary_path", "TestCommandsUnavailable", "ServerError"]
__version__ = "0.1.0"


class TestCommandsUnavailable(Exception):
    """A test control was used on a server without resplock's test commands (a real
    redis-server): the pytest plugin turns it into a skip."""

    __test__ = False  # not a test class, whatever pytest's name rules say


class ServerError(Exception):
    """An error reply to a control command, or a server that would not start."""


def binary_path():
    """The path of the ``resplock`` executable: ``$RESPLOCK_BIN`` if set, else the one this
    package installed (next to the Python scripts of its environment), else the first on
    ``PATH``. Raises ``FileNotFoundError`` if there is none."""
    env = os.environ.get("RESPLOCK_BIN")
    if env:
        return env
    exe = "resplock" + (".exe" if sys.platform == "win32" else "")
    candidates = [sysconfig.get_path("scripts")]
    user_scheme = sysconfig.get_preferred_scheme("user") if hasattr(sysconfig, "get_preferred_scheme") else None
    if user_scheme:
        candidates.append(sysconfig.get_path("scripts", scheme=user_scheme))
    candidates.append(os.path.dirname(sys.executable))
    for d in candidates:
        p = os.path.join(d, exe)
        if os.path.isfile(p) and os.access(p, os.X_OK):
            return p
    found = shutil.which(exe)
    if found:
        return found
    raise FileNotFoundError("resplock: no `resplock` executable (install the package's wheel, or set RESPLOCK_BIN)")


def _free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _encode(args):
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        if isinstance(a, bytes):
            b = a
        elif isinstance(a, str):
            b = a.encode()
        else:
            b = str(a).encode()
        out.append(b"$%d\r\n%s\r\n" % (len(b), b))
    return b"".join(out)


class _Control:
    """One raw RESP2 connection for the test commands. Not a redis-py client: it sends no
    connect-time commands (CLIENT SETINFO, HELLO) that a catch-all fault could hit, and it
    reconnects once if the server closed it (a RESPLOCK.RESTART or a DISCONNECT does)."""

    def __init__(self, host, port):
        self.addr = (host, port)
        self.sock = None
        self.buf = b""

    def close(self):
        if self.sock is not None:
            self.sock.close()
            self.sock = None
            self.buf = b""

    def call(self, *args):
        for attempt in (0, 1):
            try:
                if self.sock is None:
                    self.sock = socket.create_connection(self.addr, timeout=10)
                self.sock.sendall(_encode(args))
                return self._read()
            except (ConnectionError, OSError):
                self.close()
                if attempt:
                    raise
        raise AssertionError("unreachable")

    def _line(self):
        while b"\r\n" not in self.buf:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionResetError("resplock: the server closed the control connection")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def _read(self):
        line = self._line()
        kind, rest = line[:1], line[1:]
        if kind == b"+":
            return rest.decode()
        if kind == b"-":
            raise ServerError(rest.decode())
        if kind == b":":
            return int(rest)
        if kind == b"$":
            n = int(rest)
            if n < 0:
                return None
            while len(self.buf) < n + 2:
                chunk = self.sock.recv(65536)
                if not chunk:
                    raise ConnectionResetError("resplock: the server closed the control connection")
                self.buf += chunk
            data, self.buf = self.buf[:n], self.buf[n + 2 :]
            return data.decode(errors="replace")
        if kind == b"*":
            n = int(rest)
            return None if n < 0 else [self._read() for _ in range(n)]
        raise ServerError("resplock: unexpected reply %r" % line)


class Clock:
    """The server's clock (``RESPLOCK.CLOCK``), in Unix milliseconds. Moving it expires keys
    and times out blocked commands at once, as if the time had passed."""

    def __init__(self, server):
        self._server = server

    def _call(self, *args):
        return self._server._test_command("RESPLOCK.CLOCK", *args)

    def get(self):
        """The server's time, Unix ms."""
        return self._call("GET")

    def advance(self, ms):
        """Move the clock forward by ``ms`` milliseconds; returns the new time."""
        return self._call("ADVANCE", int(ms))

    def set(self, unix_ms):
        """Set the clock to ``unix_ms``; returns it."""
        return self._call("SET", int(unix_ms))

    def freeze(self):
        """Stop the clock: it moves only by ``advance`` and ``set``."""
        return self._call("FREEZE")

    def resume(self):
        """Let a frozen clock run again from where it stands."""
        return self._call("RESUME")

    def reset(self):
        """Back to real time, running."""
        return self._call("RESET")


class Server:
    """A resplock (or redis-server) process on a free loopback port and a unix socket, for
    one test, a session, or a script. Use it as a context manager, or call ``start`` and
    ``stop``.

    ``binary``: the executable (default: ``binary_path()``). ``real_redis``: the path of a
    redis-server to run instead (the test controls then raise ``TestCommandsUnavailable``).
    ``args``: more redis-server style options (``["--requirepass", "s3cret"]``).
    ``on_unavailable``: called with a message instead of raising ``TestCommandsUnavailable``
    (the pytest plugin passes ``pytest.skip``).
    """

    def __init__(self, binary=None, *, real_redis=None, args=(), startup_timeout=10.0, on_unavailable=None):
        self.real_redis = bool(real_redis)
        self.binary = real_redis if real_redis else (binary or binary_path())
        self.args = list(args)
        self.startup_timeout = startup_timeout
        self.on_unavailable = on_unavailable
        self.host = "127.0.0.1"
        self.port = None
        self.unix_socket = None
        self.clock = Clock(self)
        self._dir = None
        self._proc = None
        self._log = None
        self._control = None

    # ------------------------------------------------------------------ life cycle

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    def start(self):
        """Start the server and wait until it answers PING. Returns self."""
        self._dir = tempfile.mkdtemp(prefix="resplock-")
        self.unix_socket = os.path.join(self._dir, "resplock.sock")
        last = ""
        for _ in range(5):  # a free port can be taken by someone else before we bind it
            self.port = _free_port()
            argv = [
                self.binary,
                "--port", str(self.port),
                "--bind", self.host,
                "--unixsocket", self.unix_socket,
                "--unixsocketperm", "700",
                "--save", "",
                "--appendonly", "no",
                "--dir", self._dir,
            ]
            if not self.real_redis:
                argv += ["--enable-test-commands", "yes"]
            argv += self.args
            self._log = open(os.path.join(self._dir, "server.log"), "w+b")
            self._proc = subprocess.Popen(argv, stdout=self._log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
            if self._wait_ready():
                self._control = _Control(self.host, self.port)
                return self
            last = self.log()
            self._kill()
        shutil.rmtree(self._dir, ignore_errors=True)
        raise ServerError("resplock: %s did not start:\n%s" % (self.binary, last))

    def _wait_ready(self):
        deadline = time.monotonic() + self.startup_timeout
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                return False
            try:
                with socket.create_connection((self.host, self.port), timeout=1) as s:
                    s.sendall(b"PING\r\n")
                    reply = s.recv(64)
                    if reply.startswith((b"+PONG", b"-NOAUTH")):
                        return True
            except OSError:
                pass
            time.sleep(0.01)
        return False

    def _kill(self):
        if self._proc is not None and self._proc.poll() is None:
            self._proc.terminate()
            try:
                self._proc.wait(5)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
        self._proc = None
        if self._log is not None:
            self._log.close()
            self._log = None

    def stop(self):
        """Stop the server (SIGTERM) and remove its directory."""
        if self._control is not None:
            self._control.close()
            self._control = None
        self._kill()
        if self._dir:
            shutil.rmtree(self._dir, ignore_errors=True)
            self._dir = None

    def log(self):
        """What the server logged so far."""
        if self._dir is None:
            return ""
        try:
            with open(os.path.join(self._dir, "server.log"), "rb") as f:
                return f.read().decode(errors="replace")
        except OSError:
            return ""

    # ------------------------------------------------------------------ clients

    @property
    def url(self):
        """``redis://127.0.0.1:PORT``, for ``redis.Redis.from_url`` and other clients."""
        return "redis://%s:%d" % (self.host, self.port)

    def client(self, **kwargs):
        """A redis-py client of this server; ``kwargs`` go to ``redis.Redis``."""
        import redis

        return redis.Redis(host=self.host, port=self.port, **kwargs)

    # ------------------------------------------------------------------ test controls

    def _test_command(self, *args):
        if self.real_redis:
            msg = "%s needs resplock's test commands, not a real redis-server" % args[0]
            if self.on_unavailable is not None:
                self.on_unavailable(msg)
            raise TestCommandsUnavailable(msg)
        return self._control.call(*args)

    def fault(self, kind, *args, command=None, match=None, client=None, count=None):
        """Add a fault rule (``RESPLOCK.FAULT``); returns its id for ``clear_faults``.

        ``fault("ERROR", "READONLY not now", command="set", count=1)``,
        ``fault("DELAY", 200, match="*lock*")``, ``fault("DROP", client=7)``, or the
        other kinds as resplock takes them: ``fault("PAUSE", 500)``, ``fault("DISCONNECT")``,
        ``fault("REFUSE-CONNECTIONS", "yes")``."""
        argv = ["RESPLOCK.FAULT", kind, *args]
        if command is not None:
            argv += ["COMMAND", command]
        if match is not None:
            argv += ["MATCH", match]
        if client is not None:
            argv += ["CLIENT", client]
        if count is not None:
            argv += ["COUNT", count]
        return self._test_command(*argv)

    def clear_faults(self, rule=None):
        """Remove one fault rule by id, or every rule, the pause and connection refusal."""
        if rule is None:
            return self._test_command("RESPLOCK.FAULT", "CLEAR")
        return self._test_command("RESPLOCK.FAULT", "CLEAR", rule)

    def snapshot(self, name=None):
        """Copy the dataset now under ``name`` (for ``restart(from_snapshot=name)``)."""
        return self._test_command("RESPLOCK.SNAPSHOT", *([name] if name else []))

    def restart(self, mode="empty", from_snapshot=None):
        """Simulate a restart: every connection closes and the data is lost (``"empty"``, as
        ``RESPLOCK.RESTART`` without arguments: a server without persistence), kept
        (``"keep"``), or an older snapshot's (``from_snapshot=name``: a failover that lost
        the writes made since)."""
        if from_snapshot is not None:
            return self._test_command("RESPLOCK.RESTART", "FROM", from_snapshot)
        return self._test_command("RESPLOCK.RESTART", mode.upper())

    # ------------------------------------------------------------------ lock history

    def record_history(self, on=True):
        """Start (or stop) recording every change of the lock keys (``lock-history``): who
        took, renewed and released each lock, expiries, flushes, restarts and faults."""
        return self._test_command("CONFIG", "SET", "lock-history", "yes" if on else "no")

    def history(self, key=None, count=None):
        """The recorded lock history as a list of events (dicts): of one ``key`` (its last
        ``count`` events, default 100), or everything this server recorded, in the JSON-lines
        form ``resplock check`` reads (``RESPLOCK.HISTORY EXPORT``)."""
        if key is None:
            text = self._test_command("RESPLOCK.HISTORY", "EXPORT")
            return [json.loads(line) for line in (text or "").splitlines() if line.strip()]
        argv = ["RESPLOCK.HISTORY", "KEY", key]
        if count is not None:
            argv += ["COUNT", count]
        return [json.loads(line) for line in self._test_command(*argv)]


class Cluster:
    """An in-process Redis Cluster in one resplock process: ``masters`` masters with
    ``replicas`` replicas each, on free loopback ports, slots split as ``redis-cli --cluster
    create`` splits them. ``client()`` returns a ``redis.cluster.RedisCluster``; ``fail``,
    ``partition``, ``heal`` and ``migrate`` wrap ``RESPLOCK.CLUSTER``. Nodes are named by
    their index in ``nodes`` (masters first, then replicas), an ``ip:port`` or a node ID::

        with resplock.Cluster(masters=3, replicas=1) as cluster:
            rc = cluster.client()
            rc.set("lock:{order-42}", "owner-1", nx=True, px=30_000)
            cluster.fail(0)  # master 0's replica takes over
    """

    def __init__(self, masters=3, replicas=0, *, binary=None, args=(), startup_timeout=10.0):
        self.masters = masters
        self.replicas = replicas
        self.binary = binary or binary_path()
        self.args = list(args)
        self.startup_timeout = startup_timeout
        self.nodes = []
        self._dir = None
        self._proc = None
        self._out = None
        self._control = None
        self._controls = {}

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    def start(self):
        """Start the cluster and wait until every node answers and the cluster is ok."""
        self._dir = tempfile.mkdtemp(prefix="resplock-cluster-")
        total = self.masters * (1 + self.replicas)
        argv = [
            self.binary,
            "--cluster", str(self.masters),
            "--replicas", str(self.replicas),
            "--port", "0",
            "--bind", "127.0.0.1",
            "--save", "",
            "--appendonly", "no",
            "--dir", self._dir,
            "--enable-test-commands", "yes",
            *self.args,
        ]
        nodes_file = os.path.join(self._dir, "nodes.txt")
        self._out = open(nodes_file, "w+b")
        log = open(os.path.join(self._dir, "server.log"), "w+b")
        self._proc = subprocess.Popen(argv, stdout=self._out, stderr=log, stdin=subprocess.DEVNULL)
        log.close()
        deadline = time.monotonic() + self.startup_timeout
        while time.monotonic() < deadline and self._proc.poll() is None:
            with open(nodes_file) as f:
                lines = [l.strip() for l in f if l.strip()]
            if len(lines) >= total:
                self.nodes = [(h, int(p)) for h, p in (l.rsplit(":", 1) for l in lines[:total])]
                self._control = _Control(*self.nodes[0])
                try:
                    if "cluster_state:ok" in self._control.call("CLUSTER", "INFO"):
                        return self
                except (OSError, ServerError):
                    pass
            time.sleep(0.02)
        last = self.log()
        self.stop()
        raise ServerError("resplock: the cluster did not start:\n%s" % last)

    def stop(self):
        """Stop every node (one process) and remove its directory."""
        if self._control is not None:
            self._control.close()
            self._control = None
        for control in self._controls.values():
            control.close()
        self._controls = {}
        if self._proc is not None and self._proc.poll() is None:
            self._proc.terminate()
            try:
                self._proc.wait(5)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
        self._proc = None
        if self._out is not None:
            self._out.close()
            self._out = None
        if self._dir:
            shutil.rmtree(self._dir, ignore_errors=True)
            self._dir = None

    def log(self):
        """What the nodes logged so far."""
        try:
            with open(os.path.join(self._dir or "", "server.log"), "rb") as f:
                return f.read().decode(errors="replace")
        except OSError:
            return ""

    def client(self, **kwargs):
        """A ``redis.cluster.RedisCluster`` that starts from every node."""
        from redis.cluster import ClusterNode, RedisCluster

        return RedisCluster(startup_nodes=[ClusterNode(h, p) for h, p in self.nodes], **kwargs)

    def node_client(self, i, **kwargs):
        """A plain ``redis.Redis`` of node ``i`` (redirections are yours to see)."""
        import redis

        h, p = self.nodes[i]
        return redis.Redis(host=h, port=p, **kwargs)

    def _ctl(self, node, *args):
        """RESPLOCK.CLUSTER sent from a node other than ``node`` (the one the operation fails,
        cuts off or heals closes its connections), the first that answers."""
        last = None
        for addr in self.nodes:
            if "%s:%d" % addr == node:
                continue
            control = self._controls.get(addr)
            if control is None:
                control = self._controls[addr] = _Control(*addr)
            try:
                return control.call("RESPLOCK.CLUSTER", *args)
            except (ConnectionError, OSError) as e:
                control.close()
                last = e
        raise ServerError("resplock: no node answered RESPLOCK.CLUSTER: %s" % last)

    def _node(self, node):
        """A node as RESPLOCK.CLUSTER names it: an index of ``nodes`` becomes its address."""
        if isinstance(node, int):
            return "%s:%d" % self.nodes[node]
        return node

    def fail(self, master):
        """Fail master ``master``: its replica takes over. Returns the new master's node ID."""
        n = self._node(master)
        return self._ctl(n, "FAIL", n)

    def partition(self, node, keep_clients=False):
        """Cut ``node`` off from the other nodes and, unless ``keep_clients``, its clients."""
        n = self._node(node)
        return self._ctl(n, "PARTITION", n, *(["KEEP-CLIENTS"] if keep_clients else []))

    def heal(self, node="ALL"):
        """Bring ``node`` (default: every partitioned node) back."""
        n = self._node(node)
        return self._ctl(n, "HEAL", n)

    def migrate(self, slots, to):
        """Move ``slots`` (a slot, or ``"from-to"``) and their keys to master ``to``."""
        return self._ctl(None, "MIGRATE", slots, self._node(to))

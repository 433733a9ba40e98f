"""pytest plugin (registered through the ``pytest11`` entry point): fixtures that start
resplock servers on free ports.

- ``resplock_server``: a fresh server for each test.
- ``resplock_session_server``: one server for the whole session (its data carries over from
  test to test; flush it yourself if that matters).
- ``resplock_instances``: a factory, ``resplock_instances(3)`` gives three independent
  servers (a Redlock quorum), stopped after the test.
- ``resplock_cluster``: a factory, ``resplock_cluster(3, 1)`` gives an in-process Redis
  Cluster of three masters with a replica each (``resplock.Cluster``).

Options: ``--resplock-bin PATH`` uses another resplock binary; ``--resplock-real-redis[=PATH]``
runs the same fixtures on a real redis-server (default ``redis-server`` from PATH). Tests that
use the test controls (clock, faults, snapshots, restarts, history, clusters) are then
skipped.
"""

import pytest

import resplock

from . import Server


def pytest_addoption(parser):
    group = parser.getgroup("resplock")
    group.addoption(
        "--resplock-bin",
        default=None,
        metavar="PATH",
        help="resplock executable for the resplock fixtures (default: the one this package installed)",
    )
    group.addoption(
        "--resplock-real-redis",
        nargs="?",
        const="redis-server",
        default=None,
        metavar="PATH",
        help="run the resplock fixtures on a real redis-server instead (default: redis-server on PATH); "
        "tests using the test controls are skipped",
    )


def _new_server(config):
    # On a real redis-server, a test control skips the test instead of failing it.
    return Server(
        binary=config.getoption("resplock_bin"),
        real_redis=config.getoption("resplock_real_redis"),
        on_unavailable=pytest.skip,
    )


@pytest.fixture
def resplock_server(request):
    """A resplock server for this test only."""
    server = _new_server(request.config).start()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def resplock_session_server(request):
    """One resplock server for the whole test session."""
    server = _new_server(request.config).start()
    yield server
    server.stop()


@pytest.fixture
def resplock_instances(request):
    """``resplock_instances(n)``: n independent servers (own data, clock and faults), all
    stopped after the test."""
    started = []

    def make(n):
        servers = [_new_server(request.config).start() for _ in range(n)]
        started.extend(servers)
        return servers

    yield make
    for s in started:
        s.stop()


@pytest.fixture
def resplock_cluster(request):
    """``resplock_cluster(masters=3, replicas=0)``: an in-process Redis Cluster
    (``resplock.Cluster``), stopped after the test. Skips with ``--resplock-real-redis``:
    a cluster of real redis-servers is not started by this plugin."""
    started = []

    def make(masters=3, replicas=0):
        if request.config.getoption("resplock_real_redis"):
            pytest.skip("resplock_cluster starts resplock's in-process cluster")
        c = resplock.Cluster(masters, replicas, binary=request.config.getoption("resplock_bin")).start()
        started.append(c)
        return c

    yield make
    for c in started:
        c.stop()

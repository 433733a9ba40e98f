"""The plugin's fixtures, with real lock libraries. Run against resplock (the default) and
with --resplock-real-redis against redis-server: the tests using test controls then skip."""

import json
import os
import subprocess

import pottery
import pytest
import redis
import redis_lock

import resplock


def test_redis_py_lock_is_exclusive_and_released_by_its_owner(resplock_server):
    r = resplock_server.client()
    a = r.lock("lock:order-42", timeout=30)
    assert a.acquire(blocking=False)
    assert not r.lock("lock:order-42", timeout=30).acquire(blocking=False)
    a.release()
    assert r.lock("lock:order-42", timeout=30).acquire(blocking=False)


def test_the_clock_helper_expires_a_lock_without_sleeping(resplock_server):
    r = resplock_server.client()
    resplock_server.clock.freeze()
    assert r.lock("lock:order-42", timeout=30).acquire(blocking=False)
    resplock_server.clock.advance(29_999)
    assert not r.lock("lock:order-42", timeout=30).acquire(blocking=False)
    resplock_server.clock.advance(2)
    assert r.lock("lock:order-42", timeout=30).acquire(blocking=False)


def test_python_redis_lock_through_the_fixture(resplock_server):
    r = resplock_server.client()
    a = redis_lock.Lock(r, "res", expire=30)
    assert a.acquire(blocking=False)
    assert not redis_lock.Lock(r, "res", expire=30).acquire(blocking=False)
    a.release()
    b = redis_lock.Lock(r, "res", expire=30)
    assert b.acquire(blocking=False)
    b.release()


def test_python_redis_lock_expires_with_the_clock(resplock_server):
    r = resplock_server.client()
    resplock_server.clock.freeze()
    assert redis_lock.Lock(r, "res", expire=30).acquire(blocking=False)
    resplock_server.clock.advance(30_001)
    assert redis_lock.Lock(r, "res", expire=30).acquire(blocking=False)


def test_pottery_redlock_takes_a_quorum_of_instances(resplock_instances):
    nodes = resplock_instances(3)
    masters = {n.client() for n in nodes}
    lock = pottery.Redlock(key="res", masters=masters, auto_release_time=10)
    assert lock.acquire(blocking=False)
    assert sum(1 for n in nodes if n.client().exists("redlock:res")) == 3
    other = pottery.Redlock(key="res", masters=masters, auto_release_time=10)
    assert not other.acquire(blocking=False)
    lock.release()
    assert other.acquire(blocking=False)


def test_pottery_redlock_survives_one_lost_node(resplock_instances):
    nodes = resplock_instances(3)
    masters = {n.client(socket_timeout=1, socket_connect_timeout=1) for n in nodes}
    nodes[2].stop()  # a node down: 2 of 3 is still a quorum
    lock = pottery.Redlock(key="res", masters=masters, auto_release_time=10)
    assert lock.acquire(blocking=False)


def test_an_injected_error_reaches_the_client_once(resplock_server):
    r = resplock_server.client()
    resplock_server.fault("ERROR", "READONLY You can't write against a read only replica.", command="set", count=1)
    with pytest.raises(redis.exceptions.ReadOnlyError):
        r.set("k", "v")
    assert r.set("k", "v")


def test_a_restart_from_a_snapshot_loses_the_later_lock(resplock_server):
    r = resplock_server.client()
    resplock_server.snapshot("before")
    assert r.set("lock:a", "owner-1", nx=True, px=30_000)
    resplock_server.restart(from_snapshot="before")  # a failover to a replica that missed it
    assert r.get("lock:a") is None  # redis-py reconnects after the restart closed it
    assert r.set("lock:a", "owner-2", nx=True, px=30_000)
    resplock_server.restart("empty")
    assert r.dbsize() == 0


def test_the_server_answers_on_its_url_and_its_unix_socket(resplock_server):
    assert redis.Redis.from_url(resplock_server.url).ping()
    assert redis.Redis(unix_socket_path=resplock_server.unix_socket).ping()
    assert resplock_server.url == "redis://127.0.0.1:%d" % resplock_server.port


def test_the_session_server_is_shared(resplock_session_server):
    r = resplock_session_server.client()
    r.incr("session-counter")
    assert int(r.get("session-counter")) >= 1


def test_the_context_manager_starts_and_stops_a_server():
    with resplock.Server() as server:
        assert server.client().ping()
        port = server.port
    with pytest.raises(redis.exceptions.ConnectionError):
        redis.Redis(port=port, socket_connect_timeout=1).ping()


def test_the_installed_binary_is_found_and_runs():
    path = resplock.binary_path()
    assert os.path.isfile(path)
    out = subprocess.run([path, "--version"], capture_output=True, text=True, check=True).stdout
    assert "build=resplock-" in out


def test_a_catch_all_fault_does_not_lock_out_a_new_redis_py_client(resplock_server):
    resplock_server.fault("ERROR", "ERR boom")
    r = resplock_server.client()  # connects with CLIENT SETINFO, which the fault spares
    with pytest.raises(redis.exceptions.ResponseError, match="boom"):
        r.get("k")
    r.execute_command("RESPLOCK.FAULT", "CLEAR")
    assert r.get("k") is None


def test_refused_connections_are_lifted_from_a_new_redis_py_client(resplock_server):
    resplock_server.fault("REFUSE-CONNECTIONS", "yes")
    with pytest.raises(redis.exceptions.ConnectionError):
        resplock_server.client().ping()
    control = resplock_server.client()
    control.execute_command("RESPLOCK.FAULT", "REFUSE-CONNECTIONS", "no")
    assert resplock_server.client().ping()


def test_a_pause_and_a_bare_disconnect_leave_the_test_in_control(resplock_server):
    r = resplock_server.client()
    r.ping()
    assert resplock_server.fault("DISCONNECT") == 1  # r's connection, not the helper's
    resplock_server.fault("PAUSE", 60_000)
    control = resplock_server.client()
    control.execute_command("RESPLOCK.FAULT", "UNPAUSE")
    assert r.ping()  # redis-py reconnects


def test_the_lock_history_shows_who_held_a_lock(resplock_server):
    r = resplock_server.client()
    resplock_server.record_history()
    assert r.set("lock:order-42", "owner-1", nx=True, px=30_000)
    assert not r.set("lock:order-42", "owner-2", nx=True, px=30_000)
    r.delete("lock:order-42")
    events = resplock_server.history("lock:order-42")
    assert len(events) == 2, events
    assert all(isinstance(e, dict) for e in events)
    assert "owner-1" in json.dumps(events[0])
    assert resplock_server.history()  # everything, as `resplock check` reads it


def test_a_cluster_serves_redis_py_cluster_clients_and_fails_over(resplock_cluster):
    cluster = resplock_cluster(3, 1)
    rc = cluster.client()
    for i in range(20):
        assert rc.set("lock:{%d}" % i, "owner-%d" % i, nx=True, px=30_000)
    assert rc.get("lock:{7}") == b"owner-7"
    slot = rc.keyslot("lock:{7}")
    owner = [n for n in range(3) if cluster.node_client(n).cluster("countkeysinslot", slot)]
    assert len(owner) == 1
    cluster.fail(owner[0])
    fresh = cluster.client()
    assert fresh.get("lock:{7}") == b"owner-7"

"""RQ, a job queue that keeps every job's result in a stream (XADD when a job finishes,
XREVRANGE to read the latest back): jobs enqueued, a burst worker runs them, the results are
read back, and a failed job lands in the failed-job registry. Runs against the first node of
RESPLOCK_NODES; the same script against redis-server gives the same outcome."""

import os
import sys

import redis
from rq import Queue, Worker
from rq.job import Job, JobStatus
from rq.results import Result

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import rq_jobs  # noqa: E402

HOST, PORT = os.environ["RESPLOCK_NODES"].split(",")[0].rsplit(":", 1)
_results = {"passed": 0, "failed": 0}


def conn():
    return redis.Redis(host=HOST, port=int(PORT), socket_timeout=10)


def step(name, fn):
    conn().flushall()
    try:
        fn()
        _results["passed"] += 1
        print(f"ok   rq_app.py: {name}", flush=True)
    except Exception as e:  # noqa: BLE001 - the report lists every failure
        _results["failed"] += 1
        print(f"FAIL rq_app.py: {name}: {e!r}", flush=True)


def check(cond, what):
    if not cond:
        raise AssertionError(what)


def burst(queue):
    """A burst worker: runs what is queued (each job in a forked work horse), then returns."""
    Worker([queue], connection=queue.connection).work(burst=True, with_scheduler=False)


def enqueue_and_run():
    q = Queue("default", connection=conn())
    jobs = [q.enqueue(rq_jobs.double, x) for x in range(1, 6)]
    check(q.count == 5, f"five queued, not {q.count}")
    check(all(j.get_status() == JobStatus.QUEUED for j in jobs), "queued")
    burst(q)
    check(q.count == 0, "the queue is drained")
    for x, job in enumerate(jobs, 1):
        job.refresh()
        check(job.get_status() == JobStatus.FINISHED, f"job {job.id} finished")
        check(job.return_value() == 2 * x, f"job {job.id} returned {job.return_value()}")
        # The result is an entry of the job's results stream.
        key = Result.get_key(job.id)
        check(q.connection.type(key) == b"stream", f"{key} is a stream")
        check(q.connection.xlen(key) == 1, f"{key} has one result")
    check(len(q.finished_job_registry) == 5, "five in the finished registry")


def results_read_back():
    q = Queue("default", connection=conn())
    job = q.enqueue(rq_jobs.double, 21)
    burst(q)
    latest = job.latest_result()
    check(latest is not None and latest.type == Result.Type.SUCCESSFUL, f"latest result {latest}")
    check(latest.return_value == 42, f"return value {latest.return_value}")
    # Read back as another process would: fetched by id on a new connection.
    again = Job.fetch(job.id, connection=conn())
    check(again.return_value() == 42, f"fetched return value {again.return_value()}")
    results = again.results()
    check(len(results) == 1 and results[0].return_value == 42, f"results {results}")
    check(Result.fetch_latest(again).id == latest.id, "the same latest result")


def failed_job_registry():
    q = Queue("default", connection=conn())
    job = q.enqueue(rq_jobs.fail, "boom")
    ok = q.enqueue(rq_jobs.double, 1)
    burst(q)
    job.refresh()
    check(job.get_status() == JobStatus.FAILED, f"status {job.get_status()}")
    check(job.id in q.failed_job_registry.get_job_ids(), "in the failed registry")
    check(len(q.failed_job_registry) == 1, "only the failed one")
    latest = job.latest_result()
    check(latest.type == Result.Type.FAILED, f"result type {latest.type}")
    check("ValueError: boom" in latest.exc_string, "the traceback is kept")
    check(ok.return_value() == 2, "the other job still ran")
    # Requeue from the registry, fix nothing: it fails again and is back in the registry.
    q.failed_job_registry.requeue(job.id)
    check(q.count == 1, "requeued")
    burst(q)
    check(len(job.results()) == 2, "two failed results")
    check(job.id in q.failed_job_registry.get_job_ids(), "failed again")


for name, fn in [
    ("jobs are enqueued and a burst worker runs them", enqueue_and_run),
    ("a job's results are read back from its stream", results_read_back),
    ("a failed job lands in the failed-job registry", failed_job_registry),
]:
    step(name, fn)
print(f"rq_app.py: {_results['passed']} passed, {_results['failed']} failed")
sys.exit(1 if _results["failed"] else 0)

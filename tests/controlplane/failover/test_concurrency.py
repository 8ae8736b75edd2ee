"""Wizard steps under concurrency, over HTTP against a live multi-threaded server and a real Celery worker, on the
database the run uses (SQLite: a file shared by the server's threads and the worker process; or Postgres).

- Two concurrent POSTs to one step: one 202, one 409 with the job's state, never a 5xx.
- Steps running (real Kafka I/O in the worker) while clusters are created, flows edited and paused, and users log
  in: 0 5xx. The step requests' p50/p99 latency is printed.
- A worker SIGKILLed mid-job: the step stays claimed until the claim expires, then runs again on another worker.
"""

from __future__ import annotations

import os
import re
import signal
import statistics
import subprocess
import threading
import time
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
import redis
import requests
from django.conf import settings
from django.contrib.auth.models import Group, User
from django.db import connection
from django.utils import timezone

from controlplane.accounts.models import ApiToken
from controlplane.clusters.models import Cluster
from controlplane.failover.models import Failover
from controlplane.failover.services.steps import FENCE_WINDOW_SECONDS
from controlplane.flows.models import Flow
from tests.support.celery import start_celery
from tests.support.kafka import create_topic, unique_topic, wait_until

pytestmark = [pytest.mark.kafka, pytest.mark.django_db(transaction=True)]
PASSWORD = "correct-horse-battery"
LOAD_SECONDS = 20.0


@pytest.fixture
def worker(tmp_path: Path) -> Iterator[None]:
    """A real Celery worker on the test database and the run's broker (flushed first: no stale jobs)."""
    procs: dict[str, subprocess.Popen[bytes]] = {}
    start_celery(worker_env(tmp_path), procs, tmp_path, "jobs", concurrency=2)
    yield
    stop(procs)


def stop(procs: dict[str, subprocess.Popen[bytes]]) -> None:
    for proc in procs.values():
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
    for proc in procs.values():
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def worker_env(tmp_path: Path) -> dict[str, str]:
    db = connection.settings_dict
    if connection.vendor == "sqlite":
        name = str(db["NAME"])
        if "memory" in name or not name.startswith("/"):
            pytest.skip("the worker needs a file-based SQLite test database")
        url = f"sqlite:///{name}"
    else:
        url = f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}"
    broker = str(settings.CELERY_BROKER_URL)
    if broker.startswith("redis://"):
        redis.Redis.from_url(broker).flushdb()
    return {
        **os.environ,
        "DATABASE_URL": url,
        "CELERY_BROKER_URL": broker,
        "MIRRORPLANE_STATE_DIR": str(tmp_path / "state"),
    }


def user(name: str, role: str) -> tuple[User, str]:
    account = User.objects.create_user(username=name, password=PASSWORD)
    account.groups.add(Group.objects.get_or_create(name=role)[0])
    return account, ApiToken.objects.create(user=account)[1]


class Http:
    """requests with a token, recording every status and the latency of step POSTs."""

    def __init__(self, base: str, token: str) -> None:
        self.base, self.token = base, token
        self.statuses: Counter[int] = Counter()
        self.step_ms: list[float] = []
        self.errors: list[str] = []
        self.lock = threading.Lock()

    def call(self, method: str, path: str, body: dict[str, Any] | None = None, step: bool = False) -> requests.Response:
        started = time.monotonic()
        response = requests.request(
            method, self.base + path, json=body, timeout=60, headers={"Authorization": f"Token {self.token}"}
        )
        elapsed = (time.monotonic() - started) * 1000
        self.note(response, f"{method} {path}", elapsed if step else None)
        return response

    def note(self, response: requests.Response, what: str, step_ms: float | None = None) -> None:
        with self.lock:
            self.statuses[response.status_code] += 1
            if step_ms is not None:
                self.step_ms.append(step_ms)
            if response.status_code >= 500:
                self.errors.append(f"{what}: {response.status_code} {response.text[:300]}")


@pytest.fixture
def failover_setup(kafka_clusters: dict[str, str], live_server: Any) -> tuple[Http, Http, int, int]:
    west, east = (Cluster.objects.create(alias=a, bootstrap_servers=kafka_clusters[a]) for a in ("us-west", "us-east"))
    topic = unique_topic("conc")
    create_topic(kafka_clusters["us-west"], topic, partitions=1)
    flow = Flow.objects.create(source=west, target=east, topics=[topic])
    _, operator_token = user("op", "operator")
    _, admin_token = user("boss", "admin")
    operator, admin = Http(live_server.url, operator_token), Http(live_server.url, admin_token)
    body = {"mode": "planned", "source": "us-west", "target": "us-east", "groups": [unique_topic("grp")]}
    created = operator.call("POST", "/api/v1/failovers/", body)
    assert created.status_code == 201, created.text
    return operator, admin, int(created.json()["id"]), flow.pk


def job_done(http: Http, pk: int) -> dict[str, Any] | None:
    data: dict[str, Any] = http.call("GET", f"/api/v1/failovers/{pk}/").json()
    return data if data["job"]["state"] in ("succeeded", "failed") else None


def two_at_once(http: Http, pk: int) -> list[int]:
    barrier = threading.Barrier(2)

    def post(_: int) -> int:
        barrier.wait()
        return http.call("POST", f"/api/v1/failovers/{pk}/preflight/", {"acknowledge": []}, step=True).status_code

    with ThreadPoolExecutor(2) as pool:
        return sorted(pool.map(post, range(2)))


def test_two_concurrent_posts_to_one_step_give_one_202_and_one_409(
    failover_setup: tuple[Http, Http, int, int], worker: None
) -> None:
    operator, _, pk, _ = failover_setup
    for _ in range(5):
        assert two_at_once(operator, pk) == [202, 409]
        done = wait_until(lambda: job_done(operator, pk), timeout=90, interval=0.3, what="the preflight job")
        assert done["job"]["state"] == "succeeded", done["job"]
        assert done["steps"]["preflight"]["result"]["checks"], done["steps"]["preflight"]
    assert not operator.errors
    report("two concurrent POSTs", operator)


def test_steps_run_while_clusters_and_flows_are_edited_and_users_log_in_with_no_5xx(
    failover_setup: tuple[Http, Http, int, int], worker: None, live_server: Any
) -> None:
    operator, admin, pk, flow = failover_setup
    user("walker", "viewer")
    stop = time.monotonic() + LOAD_SECONDS
    jobs = Counter[str]()

    def steps() -> None:
        while time.monotonic() < stop:
            operator.call("POST", f"/api/v1/failovers/{pk}/preflight/", {"acknowledge": []}, step=True)
            data = wait_until(lambda: job_done(operator, pk), timeout=90, interval=0.3, what="the preflight job")
            jobs[data["job"]["state"]] += 1

    def edits(worker_id: int) -> None:
        n = 0
        while time.monotonic() < stop:
            n += 1
            alias = f"c{worker_id}-{n}"
            admin.call("POST", "/api/v1/clusters/", {"alias": alias, "bootstrap_servers": "127.0.0.1:1"})
            admin.call("PATCH", f"/api/v1/flows/{flow}/", {"tasks_max": 1 + n % 3})
            admin.call("POST", f"/api/v1/flows/{flow}/pause/", {})
            admin.call("POST", f"/api/v1/flows/{flow}/resume/", {})

    def logins() -> None:
        while time.monotonic() < stop:
            log_in(live_server.url, admin)

    with ThreadPoolExecutor(5) as pool:
        futures = [
            pool.submit(steps),
            pool.submit(edits, 1),
            pool.submit(edits, 2),
            pool.submit(logins),
            pool.submit(logins),
        ]
        for future in futures:
            future.result()
    assert jobs["succeeded"] >= 1 and not jobs["failed"], jobs
    assert not operator.errors and not admin.errors, operator.errors + admin.errors
    assert Cluster.objects.filter(alias__startswith="c").count() >= 2
    report("steps under load", operator, admin)


def log_in(base: str, http: Http) -> None:
    session = requests.Session()
    page = session.get(f"{base}/login/", timeout=60)
    http.note(page, "GET /login/")
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text)
    assert token is not None
    form = {"csrfmiddlewaretoken": token.group(1), "username": "walker", "password": PASSWORD, "next": "/"}
    answer = session.post(
        f"{base}/login/", data=form, headers={"Referer": f"{base}/login/"}, timeout=60, allow_redirects=False
    )
    http.note(answer, "POST /login/")
    assert answer.status_code == 302, answer.status_code


def report(what: str, *clients: Http) -> None:
    statuses = sum((c.statuses for c in clients), Counter[int]())
    step_ms = sorted(ms for c in clients for ms in c.step_ms)
    p99 = step_ms[min(len(step_ms) - 1, int(len(step_ms) * 0.99))]
    fives = sum(n for code, n in statuses.items() if code >= 500)
    print(
        f"\n[{connection.vendor}] {what}: {sum(statuses.values())} requests {dict(sorted(statuses.items()))}, "
        f"5xx={fives}; step POSTs n={len(step_ms)} p50={statistics.median(step_ms):.0f} ms p99={p99:.0f} ms "
        f"max={step_ms[-1]:.0f} ms"
    )


def test_a_step_whose_worker_is_killed_mid_job_can_be_started_again_once_its_claim_expires(
    failover_setup: tuple[Http, Http, int, int], tmp_path: Path
) -> None:
    operator, _, pk, _ = failover_setup
    Failover.objects.filter(pk=pk).update(step="fence")  # fence spends FENCE_WINDOW_SECONDS watching end offsets
    url, env = f"/api/v1/failovers/{pk}/fence/", worker_env(tmp_path)
    doomed: dict[str, subprocess.Popen[bytes]] = {}
    start_celery(env, doomed, tmp_path, "doomed", concurrency=1)
    try:
        assert operator.call("POST", url, {"confirmed": True}, step=True).status_code == 202
        wait_until(lambda: Failover.objects.get(pk=pk).job_state == "running", timeout=60, interval=0.1, what="run")
        os.killpg(doomed["doomed"].pid, signal.SIGKILL)
        doomed["doomed"].wait()
    finally:
        stop(doomed)
    time.sleep(FENCE_WINDOW_SECONDS + 2)  # the job would have finished by now had its worker lived
    assert Failover.objects.get(pk=pk).job_state == "running"
    refused = operator.call("POST", url, {"confirmed": True}, step=True)
    assert (refused.status_code, refused.json()["job"]["expired"]) == (409, False)  # claimed until it expires

    Failover.objects.filter(pk=pk).update(job_expires_at=timezone.now() - timedelta(seconds=1))  # time passes
    assert operator.call("GET", f"/api/v1/failovers/{pk}/").json()["job"]["expired"] is True
    again: dict[str, subprocess.Popen[bytes]] = {}
    start_celery(env, again, tmp_path, "again", concurrency=1)
    try:
        for _ in range(3):  # a fresh cluster may answer "coordinator not available" at first: the job fails, saying so
            assert operator.call("POST", url, {"confirmed": True}, step=True).status_code == 202
            done = wait_until(lambda: job_done(operator, pk), timeout=90, interval=0.3, what="the fence job")
            if done["job"]["state"] == "succeeded":
                break
            assert done["job"]["error"], done["job"]
    finally:
        stop(again)
    assert done["job"]["state"] == "succeeded", done["job"]["error"]
    assert done["steps"]["fence"]["result"]["verified"] is True
    assert not operator.errors

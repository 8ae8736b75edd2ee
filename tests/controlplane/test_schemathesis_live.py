"""Schemathesis over every operation against a live `manage.py demo` (web, one Celery worker,
beat, its own three Kafka clusters and traffic), on SQLite with the embedded transport and on Postgres with Redis.

Unlike `test_schemathesis.py` (in-process, inside a test transaction, Kafka patched out), requests here meet the
real concurrency: the worker replicates and beat samples and observes while the fuzzer writes. No 5xx anywhere.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
import redis
import requests
import schemathesis
from hypothesis import HealthCheck, given, settings

from tests.browser.demo import REPO, Demo, demo_env, start_demo, stop_demo
from tests.support import workers
from tests.support.fuzz import often_an_existing_id, often_existing_aliases

pytestmark = [pytest.mark.kafka]
# Apart from the browser demo test's ports (26092+) and every other fixed port of the project.
WEB_PORT, BROKER_PORT_BASE = workers.port(8620), workers.port(26192)
SEEDED_IDS = (1, 2, 3)  # the demo's clusters (1-3) and flows (1-2)
SEEDED_ALIASES = ("us-west", "us-east", "backup")
_tokens: dict[str, str] = {}
# What the web server (runserver, socketserver) prints when a request's thread failed before it answered, and what
# Celery prints when a task raised: both would be server errors that no response shows.
SERVER_FAILURES = ("Exception occurred during processing of request", "raised unexpected")


def _backend_env(backend: str) -> dict[str, str]:
    if backend == "sqlite":
        return {}
    name = f"mp_fuzz_{uuid.uuid4().hex[:8]}"
    with psycopg.connect("postgresql://postgres@127.0.0.1:5432/postgres", autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    db = workers.redis_db(int(os.environ.get("MIRRORPLANE_TEST_FUZZ_REDIS_DB", "9")))
    redis.Redis(host="127.0.0.1", port=6379, db=db).flushdb()
    return {
        "DATABASE_URL": f"postgres://postgres@127.0.0.1:5432/{name}",
        "CELERY_BROKER_URL": f"redis://127.0.0.1:6379/{db}",
    }


def _token(state_dir: Path, extra: dict[str, str]) -> str:
    env = {**demo_env(state_dir), **extra}
    out = subprocess.run(
        [sys.executable, "manage.py", "token", "create", "admin"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    match = re.search(r"^(mp_[0-9a-f]{64})$", out, flags=re.MULTILINE)
    assert match, out
    return match.group(1)


# The demo's own defaults in make test; on Postgres and Redis (a second demo, 2-3 min under CI's load) in make
# test-faults.
@pytest.fixture(scope="module", params=["sqlite", pytest.param("postgres", marks=pytest.mark.slow)])
def live_demo(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Demo]:
    state_dir = tmp_path_factory.mktemp(f"fuzz-{request.param}")
    extra = _backend_env(request.param)
    demo = start_demo(state_dir, web_port=WEB_PORT, broker_port_base=BROKER_PORT_BASE, extra_env=extra)
    try:
        _tokens["admin"] = _token(state_dir, extra)
        yield demo
    finally:
        stop_demo(demo)
        if "DATABASE_URL" in extra:
            with psycopg.connect("postgresql://postgres@127.0.0.1:5432/postgres", autocommit=True) as conn:
                conn.execute(f'DROP DATABASE IF EXISTS "{extra["DATABASE_URL"].rsplit("/", 1)[1]}" WITH (FORCE)')


def _server_errors(url: str, token: str, max_examples: int) -> tuple[int, list[str]]:
    """Fuzz every operation of the live schema; return the number of calls and one line per 5xx.

    schemathesis's pytest integration (`from_fixture`) does not run on this pytest, so the loop is explicit: one
    Hypothesis run per operation, with the same hooks as the in-process fuzz test.

    A connection closed without a response (CI saw one, once, on a fresh connection) is sent once more and listed:
    the server's side of it, a request thread that failed, is in its log, which the test checks as a whole.
    """
    headers = {"Authorization": f"Token {token}"}
    loaded = schemathesis.openapi.from_url(f"{url}/api/schema/?format=json", headers=headers)
    loaded.hook("map_path_parameters")(often_an_existing_id(SEEDED_IDS))
    loaded.hook("map_body")(often_existing_aliases(SEEDED_ALIASES))
    calls, errors, slow, dropped = 0, [], [], []
    for result in loaded.get_all_operations():
        operation = result.ok()

        @given(case=operation.as_strategy(hooks=loaded.hooks))
        @settings(max_examples=max_examples, deadline=None, database=None, suppress_health_check=list(HealthCheck))
        def call(case: schemathesis.Case) -> None:
            nonlocal calls
            began = time.monotonic()
            try:
                response = case.call(headers=headers, timeout=60)
            except requests.ConnectionError as exc:
                dropped.append(f"{case.method} {case.formatted_path}: {exc}")
                response = case.call(headers=headers, timeout=60)
            calls += 1
            if (took := time.monotonic() - began) > 2:
                slow.append(f"{took:.1f} s {case.method} {case.formatted_path} -> {response.status_code}")
            if response.status_code >= 500:
                errors.append(f"{case.method} {case.formatted_path} -> {response.status_code}: {response.text[:200]}")

        call()
    print("slow calls:", slow)
    print("connections dropped without a response, sent again:", dropped)
    return calls, errors


def test_no_operation_answers_with_a_server_error_on_a_live_demo(live_demo: Demo) -> None:
    calls, errors = _server_errors(live_demo.url, _tokens["admin"], max_examples=8)
    print(f"{calls} calls, {len(errors)} 5xx")
    assert calls > 100
    assert errors == []
    output = live_demo.output().splitlines()
    failures = [(n, line) for n, line in enumerate(output) if any(text in line for text in SERVER_FAILURES)]
    # The whole of the first failure: a chained traceback runs to a hundred lines, with other processes' lines
    # among them.
    assert failures == [], "\n".join(output[failures[0][0] : failures[0][0] + 200])

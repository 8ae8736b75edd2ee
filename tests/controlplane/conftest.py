"""Fixtures of the control-plane API tests."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from django.contrib.auth.models import User
from rest_framework.test import APIClient

from controlplane.celery import app
from localkafka.traffic import TrafficControl
from tests.controlplane.api.base import ROLES, client_for, make_user


@pytest.fixture(autouse=True)
def _private_demo_traffic_switch(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    """The tests share the state dir with a demo the developer may be running: never pause its traffic."""
    directory = tmp_path_factory.mktemp("demo-traffic")
    monkeypatch.setattr("controlplane.demo.services.traffic.control", lambda: TrafficControl(directory))


@pytest.fixture
def api() -> Callable[[str | None], APIClient]:
    """api("viewer"), api("operator"), api("admin"), api("nobody") (no role), api(None) (anonymous)."""

    users: dict[str, User] = {}

    def build(role: str | None) -> APIClient:
        if role is None:
            return client_for(None)
        if role not in users:
            users[role] = make_user(f"{role}-user", role if role in ROLES else None)
        return client_for(users[role])

    return build


@pytest.fixture
def eager() -> Iterator[None]:
    """Celery tasks run inside the call that queues them (a job's own tests run it in a real worker)."""
    before = app.conf.task_always_eager
    app.conf.task_always_eager = True
    yield
    app.conf.task_always_eager = before

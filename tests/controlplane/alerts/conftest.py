"""Alert tests: a flow whose task status the test sets (instead of a running task), no default rules, and a
resolver for webhook hosts that never asks DNS: the names in ``DNS``, and IP literals in any of their forms."""

from __future__ import annotations

import socket
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import pytest

from controlplane.alerts.models import AlertRule
from controlplane.alerts.services import outbound
from controlplane.clusters.models import Cluster
from controlplane.flows.models import Flow
from controlplane.orchestration.taskstatus import FlowStatus, TaskStatus

PUBLIC_ADDRESS = "93.184.215.14"
DNS: dict[str, list[str]] = {
    "hooks.example.com": [PUBLIC_ADDRESS],
    "localhost": ["127.0.0.1", "::1"],
    "hooks-1.example.com": [PUBLIC_ADDRESS, "2606:2800:21f:cb07:6820:80da:af6b:8b2c"],
    "metadata.example.com": ["169.254.169.254"],
    "mixed.example.com": [PUBLIC_ADDRESS, "10.0.0.7"],
    "mapped.example.com": ["::ffff:127.0.0.1"],
}


def fake_getaddrinfo(host: str, port: int, *args: Any, **kwargs: Any) -> list[Any]:
    """getaddrinfo of the names in DNS; any other host must be an IP literal (AI_NUMERICHOST: no lookup, ever)."""
    if host in DNS:
        family = {4: socket.AF_INET, 6: socket.AF_INET6}
        return [(family[6 if ":" in a else 4], socket.SOCK_STREAM, 6, "", (a, port)) for a in DNS[host]]
    return socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_NUMERICHOST)


@pytest.fixture(autouse=True)
def resolver(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(outbound, "getaddrinfo", fake_getaddrinfo)


@pytest.fixture
def flow(db: None) -> Flow:
    AlertRule.objects.all().delete()  # the migration's global defaults: each test states its own rules
    source = Cluster.objects.create(alias="us-west", bootstrap_servers="127.0.0.1:1")
    target = Cluster.objects.create(alias="us-east", bootstrap_servers="127.0.0.1:2")
    return Flow.objects.create(source=source, target=target)


def running(lag: int | None, **task: Any) -> TaskStatus:
    values = {"task_id": 0, "state": "RUNNING", "live": True, "desired_count": 1, "partition_count": 1, "lag": lag}
    return TaskStatus(**(values | task))


@pytest.fixture
def set_status(monkeypatch: pytest.MonkeyPatch, flow: Flow) -> Callable[..., None]:
    """set_status(task, ..., paused=False): what the orchestration reports of the flow from now on."""
    current: dict[str, FlowStatus] = {}

    def put(*tasks: TaskStatus, **fields: Any) -> None:
        current["status"] = replace(FlowStatus(flow=flow.pk, name=flow.name, tasks=tasks), **fields)

    monkeypatch.setattr(
        "controlplane.alerts.services.figures.flow_statuses", lambda flows: {f.pk: current["status"] for f in flows}
    )
    put()
    return put

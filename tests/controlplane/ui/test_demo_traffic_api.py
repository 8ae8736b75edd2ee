"""/api/v1/demo/traffic/: the demo generator's state for viewers, pause and resume for operators, audited."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from rest_framework.test import APIClient

from controlplane.audit.models import AuditRecord
from controlplane.demo.services import traffic as demo_traffic
from localkafka.traffic import TrafficControl, demo_control_dir

Api = Callable[[str | None], APIClient]
URL = "/api/v1/demo/traffic/"
pytestmark = pytest.mark.django_db


@pytest.fixture
def control() -> TrafficControl:
    return demo_traffic.control()  # a private directory (tests/controlplane/conftest.py), never a live demo's


def test_the_demo_keeps_its_switch_under_the_state_dir(settings: Any) -> None:
    assert demo_control_dir(settings.STATE_DIR) == Path(settings.STATE_DIR) / "demo-traffic"


def test_without_a_demo_the_endpoint_says_nothing_runs_and_refuses_to_switch(api: Api, control: TrafficControl) -> None:
    assert api("viewer").get(URL).json()["running"] is False
    assert api("viewer").get(URL).json()["group"] is None
    refused = api("operator").post(URL, {"paused": True}, format="json")
    assert refused.status_code == 409 and refused.json()["running"] is False
    control.publish({"pid": 2**22 + 12345, "rate": 20, "topics": ["orders"], "paused": False})  # a dead process
    assert api("viewer").get(URL).json()["running"] is False


def test_an_operator_pauses_and_resumes_a_running_generator(api: Api, control: TrafficControl) -> None:
    control.publish(
        {
            "pid": os.getpid(),
            "rate": 20.0,
            "topics": ["orders", "payments"],
            "paused": False,
            "produced": 400,
            "group": "billing",
        }
    )
    state = api("viewer").get(URL).json()
    assert (state["running"], state["paused"], state["rate"], state["produced"]) == (True, False, 40.0, 400)
    assert state["group"] == "billing"
    assert api("viewer").post(URL, {"paused": True}, format="json").status_code == 403
    paused = api("operator").post(URL, {"paused": True}, format="json")
    assert paused.status_code == 200 and paused.json()["pending"] is True  # the generator has not acted yet
    assert control.requested_paused() is True
    control.publish({"pid": os.getpid(), "rate": 20.0, "topics": ["orders", "payments"], "paused": True})
    assert api("viewer").get(URL).json()["paused"] is True
    assert api("operator").post(URL, {"paused": False}, format="json").status_code == 200
    assert control.requested_paused() is False
    actions = list(AuditRecord.objects.order_by("id").values_list("action", flat=True))
    assert actions == ["demo.traffic.pause", "demo.traffic.resume"]
    assert api("operator").post(URL, {"paused": "maybe"}, format="json").status_code == 400

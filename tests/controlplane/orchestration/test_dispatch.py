"""The controller queues its jobs through the registered dispatcher: Celery's, once Django has started."""

from __future__ import annotations

import pytest

from controlplane.orchestration.services import dispatch
from controlplane.orchestration.services.dispatch import Dispatch
from controlplane.orchestration.tasks import CeleryDispatcher


class Recorder:
    def __init__(self) -> None:
        self.calls: list[tuple[str, int]] = []

    def provision_flow(self, flow_id: int) -> None:
        self.calls.append(("provision_flow", flow_id))

    def run_assignment(self, assignment_id: int) -> None:
        self.calls.append(("run_assignment", assignment_id))

    def sync_topic_configs_and_acls(self, flow_id: int) -> None:
        self.calls.append(("sync_topic_configs_and_acls", flow_id))


def test_the_app_registers_the_celery_dispatcher_at_start_up() -> None:
    assert isinstance(dispatch._dispatcher, CeleryDispatcher)


def test_a_dispatch_calls_the_registered_dispatchers_job_with_its_id(monkeypatch: pytest.MonkeyPatch) -> None:
    recorder = Recorder()
    monkeypatch.setattr(dispatch, "_dispatcher", recorder)
    Dispatch("run_assignment", 7)()
    Dispatch("provision_flow", 3)()
    assert recorder.calls == [("run_assignment", 7), ("provision_flow", 3)]

"""What the controller queues, and who queues it.

The controller knows no Celery: it hands a ``Dispatch`` to ``transaction.on_commit``, and the dispatcher the app
registered at start-up queues it (``orchestration/tasks.py``'s ``CeleryDispatcher``, set in ``apps.ready``). A test
reads the captured callbacks' ``job`` and ``id`` instead of running them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Protocol

Job = Literal["provision_flow", "run_assignment", "sync_topic_configs_and_acls"]


class Dispatcher(Protocol):
    """Queues the orchestration's jobs: each takes the id of its flow or assignment."""

    def provision_flow(self, flow_id: int) -> None: ...

    def run_assignment(self, assignment_id: int) -> None: ...

    def sync_topic_configs_and_acls(self, flow_id: int) -> None: ...


_dispatcher: Dispatcher | None = None


def use(dispatcher: Dispatcher) -> None:
    """Queue the controller's jobs with ``dispatcher`` from now on."""
    global _dispatcher
    _dispatcher = dispatcher


@dataclass(frozen=True)
class Dispatch:
    """One job to queue once the transaction that decided it commits: a callback for ``on_commit``."""

    job: Job
    id: int

    def __call__(self) -> None:
        if _dispatcher is None:
            raise RuntimeError("no dispatcher: the orchestration app registers one when Django starts")
        getattr(_dispatcher, self.job)(self.id)

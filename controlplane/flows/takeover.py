"""Taking over from MirrorMaker 2 in the control plane: a job (kind ``flow.mm2_takeover``) seeds imported flows'
start positions from MM2's committed offsets, then resumes them.

An import with ``takeover`` writes the file's flows paused (and refuses a flow of the file that runs: its tasks
would write beside the takeover), then starts this job. The job reads MM2's offsets storage topic and offset syncs
and writes the positions (replication.task.takeover) in a worker, with no transaction open; only when every flow
was taken over does it resume them, so no task starts before its positions are stored. If MM2's offsets cannot
be read, the job fails naming the flow and the topic, and the flows stay paused: the user starts them by hand or
imports again once the cause is fixed (a position already stored is kept).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from controlplane.audit.services import record
from controlplane.core.permissions import OPERATOR
from controlplane.flows import services
from controlplane.flows.models import Flow
from controlplane.jobs import services as jobs
from controlplane.jobs.models import Job
from controlplane.jobs.tasks import run_job
from replication.task.takeover import TakeoverError, take_over

log = logging.getLogger(__name__)
TAKEOVER = "flow.mm2_takeover"
READ_TIMEOUT = 10.0  # per topic read: a job runs for at most jobs.RUNNING_SECONDS
RUNNING_FLOW = "flow {name} runs: pause it before taking over from MM2 (its tasks would write beside the takeover)"


def running(flows: Sequence[Flow]) -> list[str]:
    """Why each stored, running flow of an import refuses a takeover."""
    return [RUNNING_FLOW.format(name=f.name) for f in flows if f.pk is not None and not f.paused]


def enqueue(flows: Sequence[Flow], user: Any) -> Job:
    """Start the takeover job of these saved flows (the web request's part: no Kafka call)."""
    ids = sorted(f.pk for f in flows)
    try:
        job = jobs.start(TAKEOVER, f"{TAKEOVER}:{','.join(map(str, ids))}", {"flows": ids}, user)
    except jobs.Busy as exc:  # the same import twice: the takeover at work is the answer
        return exc.job
    try:
        run_job.delay_on_commit(str(job.pk))
    except Exception as exc:  # the broker is down: fail the job now rather than when it expires
        jobs.refused(job, f"{type(exc).__name__}: {exc}")
    job.refresh_from_db()
    return job


def run_takeover(job: Job) -> dict[str, Any]:
    """Take over each flow, then resume them all; ``JobFailed`` naming the flow and topic, flows left paused."""
    flows = list(Flow.objects.filter(pk__in=job.inputs["flows"]).select_related("source", "target").order_by("pk"))
    if len(flows) != len(job.inputs["flows"]):
        raise jobs.JobFailed("a flow of the import was deleted before the takeover ran; nothing was resumed")
    results = []
    for flow in flows:
        try:
            results.append(take_over(services.flow_config(flow), READ_TIMEOUT).as_dict())
        except TakeoverError as exc:
            record(job.created_by, "flow.mm2_takeover_failed", flow, after={"error": str(exc)})
            raise jobs.JobFailed(f"{flow.name}: not taken over from MM2, left paused: {exc}") from None
    for flow, result in zip(flows, results, strict=True):
        services.resume(flow)
        record(job.created_by, "flow.mm2_takeover", flow, after=_summary(result))
    return {"flows": results}


def _summary(result: dict[str, Any]) -> dict[str, Any]:
    """The audit record's part of a result: which partitions start where, not the notes."""
    starts = {f"{p['topic']}-{p['partition']}": p["start"] for p in result["partitions"] if not p["kept"]}
    return {"offsets_topic": result["offsets_topic"], "taken_over": result["taken_over"], "starts": starts}


KIND = jobs.Kind(name=TAKEOVER, role=OPERATOR, run=run_takeover)

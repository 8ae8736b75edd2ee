"""The controller: turns enabled flows into task assignments and makes sure each runs somewhere."""

from __future__ import annotations

import fcntl
import hashlib
import logging
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from datetime import datetime, timedelta
from pathlib import Path

from django.conf import settings
from django.db import transaction
from django.db.models import BooleanField, ExpressionWrapper, Q
from django.utils import timezone

from controlplane.flows.models import Flow
from controlplane.flows.services import flow_config
from controlplane.orchestration.choices import TaskFailure, TaskState
from controlplane.orchestration.models import FlowPlan, TaskAssignment
from controlplane.orchestration.planning import is_balanced, plan_assignment, runs
from controlplane.orchestration.services import capacity, leases
from controlplane.orchestration.services.dispatch import Dispatch
from replication.kafka.clients import ClientFactory
from replication.kafka.topicsync import TopicSync

log = logging.getLogger(__name__)


LIST_TIMEOUT = 5.0  # listing a source's topics; a slower or absent cluster is retried after retry_delay()
LISTING_THREADS = 4


class SourceListings:
    """Listings of the flows' source topics, run off the controller's thread: a tick submits a due listing and
    uses its result in a later tick, so a source that hangs or refuses delays that flow's new partitions only,
    never the tick (which places and restarts every flow's tasks). A listing is keyed by the flow and the flow's
    version: one submitted before an edit is dropped when it ends, and the edited flow is listed again."""

    def __init__(self, threads: int = LISTING_THREADS) -> None:
        self._pool = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="source-listing")
        self._running: dict[int, tuple[object, Future[dict[str, int]]]] = {}
        self.closed = False  # closed, or the process is exiting (its main thread ended): no listing starts

    def result(
        self, flow_id: int, version: object, listing: Callable[[], dict[str, int]]
    ) -> Future[dict[str, int]] | None:
        """The flow's finished listing of this version (taken: the next one is submitted afresh), or None while it
        runs (submitting it when none runs)."""
        running = self._running.get(flow_id)
        if running is not None and running[0] == version:
            if not running[1].done():
                return None
            del self._running[flow_id]
            return running[1]
        try:
            self._running[flow_id] = (version, self._pool.submit(listing))
        except RuntimeError:  # "cannot schedule new futures after interpreter shutdown": beat is stopping
            self.closed = True
        return None

    def close(self) -> None:
        self.closed = True
        self._pool.shutdown(wait=False, cancel_futures=True)


def rebalance_delay() -> timedelta:
    return timedelta(seconds=float(settings.MIRRORPLANE_REBALANCE_DELAY_SECONDS))


def retry_delay() -> timedelta:
    return timedelta(seconds=float(settings.MIRRORPLANE_RETRY_SECONDS))


def tick_alone(lock_path: Path, listings: SourceListings | None = None) -> list[int] | None:
    """A tick, unless another tick on this host still runs (None then): a second beat started on the host (a restart
    while the old process still stops) must not plan and dispatch beside the first (``controllerloop``)."""
    with lock_path.open("a") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            log.info("controller: previous tick still running; this one is skipped")
            return None
        try:
            return tick(listings)
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def tick(listings: SourceListings | None = None) -> list[int]:
    """One controller pass over every flow; returns the assignment ids dispatched to workers.

    The live workers' free slots are counted once and shared by the pass: older flows are placed first. With
    ``listings`` the sources are listed off this thread (the controller loop); without, in the pass itself.
    """
    dispatched: list[int] = []
    room = capacity.current()
    for flow in Flow.objects.select_related("source", "target").order_by("pk"):
        try:
            dispatched += reconcile(flow, room, listings)
        except Exception:  # one broken flow must not stop the others
            log.exception("controller: flow %s", flow.pk)
    return dispatched


def reconcile(flow: Flow, room: capacity.Capacity | None = None, listings: SourceListings | None = None) -> list[int]:
    # The listed partitions (10,000 of them: a 140 KB document) are decoded only to plan, not in every tick.
    plan_row, _ = FlowPlan.objects.defer("partitions").get_or_create(flow=flow)
    if not flow.enabled or flow.paused:
        flow.assignments.exclude(unplaced_reason="").update(unplaced_reason="")  # not waiting for a slot
    if not flow.enabled:
        return []
    listed = _source_partitions(flow, plan_row, listings)
    if listed is not None:
        _keep_listing(plan_row, listed)
    signature = _signature(plan_row, flow.tasks_max)
    replan = signature != plan_row.planned_signature or _rebalance_due(plan_row)
    if replan or flow.assignments.count() != flow.tasks_max:  # a row gone, however: plan again
        # Only then: planning a flow of 10,000 partitions decoded and compared them all, every tick.
        handed_over = _store(flow, _plan(flow, plan_row, listed if listed is not None else _listed(plan_row)))
        # A partition still held by its last owner's live runner is stored with the plan once that runner let it
        # go: until then every tick plans again.
        plan_row.planned_signature = signature if handed_over else ""
        plan_row.save(update_fields=["planned_signature"])
    if flow.paused:
        return []
    _dispatch_topic_sync(flow, plan_row)
    if not _provisioned(flow, plan_row):
        return []
    return _dispatch(flow, room if room is not None else capacity.current())


def _provisioned(flow: Flow, plan_row: FlowPlan) -> bool:
    """Queue the provisioning job when the flow was never provisioned or was edited since; True once provisioned.

    Only the first provisioning gates dispatch: running tasks are not stopped for a re-provisioning.
    """
    now = timezone.now()
    stale = plan_row.provisioned_at is None or flow.updated_at > plan_row.provisioned_at
    queued = plan_row.provision_dispatched_at
    due = stale and (queued is None or queued + retry_delay() < now)
    # Claimed by a conditional UPDATE: the tick and a provisioning job's own dispatch never both queue one.
    if due and FlowPlan.objects.filter(pk=plan_row.pk, provision_dispatched_at=queued).update(
        provision_dispatched_at=now
    ):
        plan_row.provision_dispatched_at = now
        transaction.on_commit(Dispatch("provision_flow", flow.pk))
    return plan_row.provisioned_at is not None


def _source_partitions(
    flow: Flow, plan_row: FlowPlan, listings: SourceListings | None = None
) -> list[tuple[str, int]] | None:
    """Source partitions matching the flow, listed at `refresh.topics.interval.seconds` or after an edit; None in a
    tick that did not list them (not due, still listing, or the listing failed): the plan row keeps the last ones.

    A source that cannot be listed keeps the last known partitions, with the error on the plan, and is asked again
    only after the retry delay: a cluster that is down must not hold every tick for the listing's timeout.
    """
    now = timezone.now()
    interval = timedelta(seconds=flow.refresh_topics_interval_seconds)
    due = plan_row.refreshed_at is None or plan_row.refreshed_at + interval < now
    retry_due = plan_row.list_failed_at is None or plan_row.list_failed_at + retry_delay() < now
    edited = plan_row.refreshed_at is not None and flow.updated_at > plan_row.refreshed_at
    if not ((due or edited) and retry_due):
        return None
    config = flow_config(flow)

    def listing() -> dict[str, int]:  # network only: it may run in a listing thread
        admin = ClientFactory().admin(config.source)
        return TopicSync(config, admin, admin).source_topics(timeout=LIST_TIMEOUT)

    topics: dict[str, int] | None = None
    error: BaseException | None = None
    if listings is None:
        try:
            topics = listing()
        except Exception as exc:
            error = exc
    elif (done := listings.result(flow.pk, flow.updated_at, listing)) is None:
        return None
    elif (error := done.exception()) is None:
        topics = done.result()
    if topics is None:
        log.warning("controller: flow %s: listing source topics: %s", flow.pk, error)
        plan_row.last_error, plan_row.list_failed_at = f"listing source topics: {error}", now
        plan_row.save(update_fields=["last_error", "list_failed_at"])
        return None
    plan_row.refreshed_at, plan_row.last_error, plan_row.list_failed_at = now, "", None
    plan_row.save(update_fields=["refreshed_at", "last_error", "list_failed_at"])
    return [(t, p) for t, n in sorted(topics.items()) for p in range(n)]


def _keep_listing(plan_row: FlowPlan, listed: list[tuple[str, int]]) -> None:
    """Store a listing and its digest when it differs from the stored one: a tick then knows from the digest alone
    whether the partitions changed, without decoding them."""
    digest = _digest(listed)
    if digest != plan_row.partitions_signature:
        plan_row.partitions, plan_row.partitions_signature = [[t, p] for t, p in listed], digest
        plan_row.save(update_fields=["partitions", "partitions_signature"])


def _listed(plan_row: FlowPlan) -> list[tuple[str, int]]:
    """The source partitions last listed (a deferred field: read from the database on first use)."""
    return [(str(t), int(p)) for t, p in plan_row.partitions]


def _signature(plan_row: FlowPlan, tasks_max: int) -> str:
    """What a plan depends on besides the stored assignments, which only the controller writes."""
    if not plan_row.partitions_signature:  # a row listed before the field existed: once
        plan_row.partitions_signature = _digest(_listed(plan_row))
        plan_row.save(update_fields=["partitions_signature"])
    return _digest((tasks_max, plan_row.partitions_signature))


def _digest(value: object) -> str:
    return hashlib.blake2b(repr(value).encode(), digest_size=16).hexdigest()


def _rebalance_due(plan_row: FlowPlan) -> bool:
    since = plan_row.imbalance_since
    return since is not None and timezone.now() - since >= rebalance_delay()


def _plan(flow: Flow, plan_row: FlowPlan, partitions: list[tuple[str, int]]) -> dict[int, list[tuple[str, int]]]:
    current = {a.task_id: [(str(t), int(p)) for t, p in a.partitions] for a in flow.assignments.defer("status")}
    sticky = plan_assignment(partitions, flow.tasks_max, current)
    if is_balanced(sticky):
        _set_imbalance(plan_row, None)
        return sticky
    if current and set(current) != set(range(flow.tasks_max)):
        # The operator changed tasks.max: that is the rebalance asked for, not churn to damp; move partitions now.
        _set_imbalance(plan_row, None)
        log.info("controller: rebalancing flow %s for tasks.max %s", flow.pk, flow.tasks_max)
        return plan_assignment(partitions, flow.tasks_max, current, rebalance=True)
    _set_imbalance(plan_row, plan_row.imbalance_since or timezone.now())
    assert plan_row.imbalance_since is not None
    if timezone.now() - plan_row.imbalance_since < rebalance_delay():
        return sticky
    _set_imbalance(plan_row, None)
    log.info("controller: rebalancing flow %s after %s", flow.pk, rebalance_delay())
    return plan_assignment(partitions, flow.tasks_max, current, rebalance=True)


def _set_imbalance(plan_row: FlowPlan, since: datetime | None) -> None:
    if plan_row.imbalance_since != since:
        plan_row.imbalance_since = since
        plan_row.save(update_fields=["imbalance_since"])


def _store(flow: Flow, plan: dict[int, list[tuple[str, int]]]) -> bool:
    """Write the plan into the assignments, handing a partition over only once its last owner let it go; True when
    every partition is where the plan puts it.

    A task that loses partitions (a rebalance, tasks.max lowered) runs them until its next lease renewal sees it.
    Given to another task at once, a partition had two writers meanwhile, and the new one started on positions its
    last owner was still moving. So a partition goes to its new task only when no other task with a live lease has
    it in its desired or reported list; a task beyond tasks.max is emptied first and deleted once its lease is gone.
    """
    rows = list(flow.assignments.defer("status"))
    held: dict[tuple[str, int], int] = {}
    for row in rows:
        if leases.holds_live_lease(row):
            for t, p in [*row.partitions, *row.reported_partitions]:
                held[(str(t), int(p))] = row.task_id
    complete = True
    for row in rows:
        if row.task_id < flow.tasks_max:
            continue
        if not leases.holds_live_lease(row):
            TaskAssignment.objects.filter(pk=row.pk).only("pk").delete()  # the cascade to its reports loads no status
            continue
        complete = False  # its runner stops at its next renewal and lets its lease go
        if row.partitions:
            TaskAssignment.objects.filter(pk=row.pk).update(partitions=[])
    existing = {row.task_id: row for row in rows}
    for task_id, tps in plan.items():
        free = [tp for tp in tps if held.get(tp, task_id) == task_id]
        complete = complete and len(free) == len(tps)
        wanted = [[t, p] for t, p in sorted(free)]  # sorted as the runner reports them: ``flow_status`` compares both
        stored = existing.get(task_id)
        if stored is None:
            TaskAssignment.objects.create(flow=flow, task_id=task_id, partitions=wanted)
        elif stored.partitions != wanted:
            TaskAssignment.objects.filter(pk=stored.pk).update(partitions=wanted)
    return complete


def _dispatch(flow: Flow, room: capacity.Capacity) -> list[int]:
    """Queue a runner for every assignment that `runs` and has no live lease (not too often, and not after data
    loss), as far as the live workers have free slots; the others are marked unplaced with the reason."""
    now = timezone.now()
    # A task's status runs to hundreds of KB and its partitions (desired and reported) to thousands each: the tick
    # needs only whether it has any.
    rows = flow.assignments.defer("status", "partitions", "reported_partitions").annotate(
        idle=ExpressionWrapper(Q(partitions=[]), output_field=BooleanField())
    )
    waiting = [
        a
        for a in rows
        if runs(a.task_id, 0 if a.idle else 1) and not leases.holds_live_lease(a) and _may_dispatch(a, now)
    ]
    placed, reason = room.place(len(waiting))
    dispatched = []
    for assignment in waiting[:placed]:
        # A conditional UPDATE: when the tick and a provisioning job dispatch at once, one of them queues it.
        claimed = TaskAssignment.objects.filter(pk=assignment.pk, dispatched_at=assignment.dispatched_at).update(
            dispatched_at=now, unplaced_reason=""
        )
        if claimed:
            transaction.on_commit(Dispatch("run_assignment", assignment.pk))
            dispatched.append(assignment.pk)
    unplaced = [a.pk for a in waiting[placed:]]
    if any(a.unplaced_reason != reason for a in waiting[placed:]):
        log.warning("controller: flow %s: %d task(s) not placed: %s", flow.pk, len(unplaced), reason)
    if unplaced:
        TaskAssignment.objects.filter(pk__in=unplaced).update(unplaced_reason=reason)
    flow.assignments.exclude(pk__in=unplaced).exclude(unplaced_reason="").update(unplaced_reason="")
    return dispatched


def _dispatch_topic_sync(flow: Flow, plan_row: FlowPlan) -> None:
    """Topic config and ACL sync is a periodic Celery job of its own, at the flow's sync interval."""
    if not (flow.sync_topic_configs_enabled or flow.sync_topic_acls_enabled):
        return
    interval = min(flow.sync_topic_configs_interval_seconds, flow.sync_topic_acls_interval_seconds)
    now = timezone.now()
    if plan_row.topics_synced_at and plan_row.topics_synced_at + timedelta(seconds=interval) > now:
        return
    plan_row.topics_synced_at = now
    plan_row.save(update_fields=["topics_synced_at"])
    transaction.on_commit(Dispatch("sync_topic_configs_and_acls", flow.pk))


def _may_dispatch(assignment: TaskAssignment, now: datetime) -> bool:
    if assignment.dispatched_at and assignment.dispatched_at + timedelta(seconds=leases.lease_seconds()) > now:
        return False  # a runner is probably on its way; don't flood the queue
    if assignment.state == TaskState.FAILED:
        if assignment.failure == TaskFailure.DATA_LOSS:
            # Reported loss stays stopped until an operator restarts the flow, which accepts it.
            return assignment.generation != assignment.flow.generation
        return assignment.updated_at + retry_delay() < now
    return True

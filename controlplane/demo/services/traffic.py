"""The demo's traffic generator, seen and switched from the control plane (``manage.py demo`` runs it).

The generator and the web process share only two files under the state dir (localkafka.traffic's
TrafficControl): the switch the API writes and the status the generator publishes. Nothing here waits for Kafka.

The generator and its group always run on ``TRAFFIC_CLUSTER``. Once a completed failover has moved the group to
another cluster, resuming would restart the producers and the group where the group no longer reads (its offsets
there are the ones it left behind): the resume is refused unless the caller names that cluster to confirm it.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings

from controlplane.failover.choices import Status
from controlplane.failover.models import Failover
from localkafka.traffic import TrafficControl, demo_control_dir

TRAFFIC_CLUSTER = "us-west"  # where `manage.py demo` runs the generator and its group


class NotRunning(Exception):
    """No demo traffic generator runs (no demo, ``--no-traffic``, or the generator exited)."""


class MovedAway(Exception):
    """The demo's group was failed over to another cluster and the resume did not confirm the generator's cluster."""


def control() -> TrafficControl:
    return TrafficControl(demo_control_dir(settings.STATE_DIR))


def state() -> dict[str, Any]:
    """running, paused (what the generator does), pending (a switch it has not acted on yet), rate, topics, and the
    consumer group that reads them (None without one)."""
    switch = control()
    status = switch.status()
    if status is None:
        return {
            "running": False,
            "paused": False,
            "pending": False,
            "rate": None,
            "topics": [],
            "produced": None,
            "group": None,
            "cluster": None,
            "moved": None,
        }
    topics = [str(t) for t in status.get("topics", [])]
    paused = bool(status.get("paused"))
    group = str(status["group"]) if status.get("group") else None
    return {
        "running": True,
        "paused": paused,
        "pending": switch.requested_paused() != paused,
        "rate": float(status.get("rate", 0)) * len(topics),  # records per second over all its topics
        "topics": topics,
        "produced": int(status.get("produced", 0)),
        "group": group,
        "cluster": TRAFFIC_CLUSTER,
        "moved": moved(group) if group else None,
    }


def moved(group: str) -> dict[str, Any] | None:
    """Where the newest completed failover (not a dry run) of ``group`` moved it, when that is not the generator's
    cluster: {"group", "to", "failover"}; None when the group still reads on ``TRAFFIC_CLUSTER`` (never moved, or
    failed back)."""
    done = Failover.objects.filter(status=Status.COMPLETED, dry_run=False).select_related("target")
    for failover in done.order_by("-updated_at", "-id").only("id", "groups", "target__alias")[:200]:
        if group in failover.groups:
            to = failover.target.alias
            return None if to == TRAFFIC_CLUSTER else {"group": group, "to": to, "failover": failover.pk}
    return None


def set_paused(paused: bool, confirm_cluster: str = "") -> dict[str, Any]:
    """Ask the running generator to pause or resume; it acts within about half a second. A resume after the group
    was failed over away needs ``confirm_cluster`` to name the generator's cluster (MovedAway otherwise)."""
    switch = control()
    if switch.status() is None:
        raise NotRunning("no demo traffic generator is running")
    away = state()["moved"]
    if not paused and away is not None and confirm_cluster != TRAFFIC_CLUSTER:
        raise MovedAway(
            f"{away['group']} was failed over to {away['to']} (failover {away['failover']}): resuming restarts the "
            f"demo's producers and {away['group']} on {TRAFFIC_CLUSTER}, from the offsets it left there, while its "
            f"offsets now live on {away['to']}. To resume on {TRAFFIC_CLUSTER} anyway, send confirm_cluster "
            f'"{TRAFFIC_CLUSTER}".'
        )
    switch.request(paused)
    return state()

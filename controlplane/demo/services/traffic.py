"""The demo's traffic generator, seen and switched from the control plane (``manage.py demo`` runs it).

The generator and the web process share only two files under the state dir (localkafka.traffic's
TrafficControl): the switch the API writes and the status the generator publishes. Nothing here waits for Kafka.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings

from localkafka.traffic import TrafficControl, demo_control_dir


class NotRunning(Exception):
    """No demo traffic generator runs (no demo, ``--no-traffic``, or the generator exited)."""


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
        }
    topics = [str(t) for t in status.get("topics", [])]
    paused = bool(status.get("paused"))
    return {
        "running": True,
        "paused": paused,
        "pending": switch.requested_paused() != paused,
        "rate": float(status.get("rate", 0)) * len(topics),  # records per second over all its topics
        "topics": topics,
        "produced": int(status.get("produced", 0)),
        "group": str(status["group"]) if status.get("group") else None,
    }


def set_paused(paused: bool) -> dict[str, Any]:
    """Ask the running generator to pause or resume; it acts within about half a second."""
    switch = control()
    if switch.status() is None:
        raise NotRunning("no demo traffic generator is running")
    switch.request(paused)
    return state()

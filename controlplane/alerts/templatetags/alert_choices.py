"""``{% alert_choices as choices %}``: the alert and target kinds, for the Notifications page's forms (one definition,
in ``choices.py``)."""

from __future__ import annotations

from typing import Any

from django import template

from controlplane.alerts.choices import CLUSTER_KINDS, AlertKind, TargetKind

register = template.Library()


@register.simple_tag
def alert_choices() -> dict[str, list[Any]]:
    return {
        "kinds": [[str(value), str(label)] for value, label in AlertKind.choices],
        "clusterKinds": sorted(str(kind) for kind in CLUSTER_KINDS),
        "targetKinds": [[str(value), str(label)] for value, label in TargetKind.choices],
    }

"""The flow form's preview as a background job (kind ``flow.preview``): listing a large source cluster's topics
takes seconds, so the request only stores the form's values and a worker lists and filters."""

from __future__ import annotations

from typing import Any

from controlplane.clusters.models import Cluster
from controlplane.core.permissions import VIEWER
from controlplane.flows.models import Flow
from controlplane.jobs.models import Job
from controlplane.jobs.services import JobFailed, Kind
from controlplane.ui.services import preview

PREVIEW = "flow.preview"


def preview_inputs(values: dict[str, Any]) -> dict[str, Any]:
    """Validated preview values as JSON: clusters by alias, the edited flow by id."""
    flow: Flow | None = values.get("flow")
    plain = {name: value for name, value in values.items() if name not in ("source", "target", "flow")}
    return {
        **plain,
        "source": values["source"].alias,
        "target": values["target"].alias,
        "flow": flow.pk if flow is not None else None,
    }


def run_preview(job: Job) -> dict[str, Any]:
    values = dict(job.inputs)
    clusters = Cluster.objects.in_bulk([values["source"], values["target"]], field_name="alias")
    for side in ("source", "target"):
        if values[side] not in clusters:
            raise JobFailed(f"{side}: cluster {values[side]!r} was deleted before the preview ran")
        values[side] = clusters[values[side]]
    flow = Flow.objects.filter(pk=values.pop("flow")).first() if values.get("flow") is not None else None
    return preview.preview(values, flow)


KIND = Kind(name=PREVIEW, role=VIEWER, run=run_preview)

"""The pages' forms post only fields of the API's serializers: an unknown one would be refused (400)."""

from __future__ import annotations

import re
from pathlib import Path

from controlplane.clusters.api.serializers import ClusterSerializer
from controlplane.failover.api.serializers import FailoverSerializer
from controlplane.flows.api.serializers import FlowSerializer
from controlplane.ui.forms import cluster_sections, flow_sections

TEMPLATES = Path(__file__).resolve().parents[3] / "frontend" / "templates" / "ui"


def test_the_flow_and_cluster_forms_name_only_serializer_fields() -> None:
    flow = {field.name for section in flow_sections(["us-west", "us-east"]) for field in section.fields}
    cluster = {field.name for section in cluster_sections() for field in section.fields}
    assert flow <= set(FlowSerializer().fields)
    assert cluster <= set(ClusterSerializer().fields)
    assert {"tasks_max", "topics", "source"} <= flow and {"alias", "sasl_password"} <= cluster


def test_the_failover_plan_form_names_only_serializer_fields() -> None:
    # forms.collect() posts the inputs with a data-kind; failovers.js adds the checked mode.
    page = (TEMPLATES / "failover_list.html").read_text()
    posted = set(re.findall(r'name="([a-z_]+)" data-kind=', page)) | {"mode"}
    assert posted == {"source", "target", "groups", "drain_threshold", "dry_run", "mode"}
    assert posted <= set(FailoverSerializer().fields)

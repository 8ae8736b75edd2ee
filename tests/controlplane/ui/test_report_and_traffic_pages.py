"""The flow page's report form and the dashboard's traffic control: operators get the controls, viewers only see."""

from __future__ import annotations

import pytest
from django.test import Client

from controlplane.clusters.models import Cluster
from controlplane.flows.models import Flow
from tests.controlplane.api.base import make_user

pytestmark = pytest.mark.django_db


def page(role: str, url: str) -> str:
    client = Client()
    client.force_login(make_user(f"{role}-page", role))
    response = client.get(url)
    assert response.status_code == 200
    return response.content.decode()


def test_operators_can_run_a_report_from_the_flow_page_and_viewers_only_see_the_runs() -> None:
    source = Cluster.objects.create(alias="us-west", bootstrap_servers="us-west:9092")
    target = Cluster.objects.create(alias="us-east", bootstrap_servers="us-east:9092")
    flow = Flow.objects.create(source=source, target=target)
    operator, viewer = page("operator", f"/flows/{flow.pk}/"), page("viewer", f"/flows/{flow.pk}/")
    assert 'id="report-form"' in operator and 'id="report-form"' not in viewer
    assert 'id="report-runs"' in operator and 'id="report-runs"' in viewer


def test_the_dashboard_loads_the_traffic_control_with_the_role_it_may_use() -> None:
    assert 'data-can-operate="1"' in page("operator", "/")
    viewer = page("viewer", "/")
    assert 'data-can-operate="0"' in viewer and "js/demo-traffic.js" in viewer

"""Flows write replication facts to the control plane's lake by default; a setting and a per-flow field change it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from django.conf import settings as django_settings

from controlplane.flows.models import Flow
from controlplane.flows.services import flow_config
from tests.controlplane.flows.test_api import Api, flow, post_flow


@pytest.mark.django_db
def test_a_new_flow_writes_facts_under_the_state_dir(settings: Any) -> None:
    settings.MIRRORPLANE_FACTS_LAKE = ""
    assert flow_config(flow("us-west", "us-east")).facts_lake == str(Path(settings.STATE_DIR) / "lake")


@pytest.mark.django_db
def test_the_setting_moves_or_disables_the_lake_for_every_flow(settings: Any) -> None:
    settings.MIRRORPLANE_FACTS_LAKE = "s3a://bucket/lake"
    one = flow("us-west", "us-east")
    assert flow_config(one).facts_lake == "s3a://bucket/lake"
    settings.MIRRORPLANE_FACTS_ENABLED = False
    assert flow_config(one).facts_lake == ""


@pytest.mark.django_db
def test_a_flow_names_its_own_lake_or_opts_out(api: Api) -> None:
    response = post_flow(api, facts_lake="/data/lake-a")
    assert response.status_code == 201, response.content
    assert response.json()["facts_enabled"] is True
    created = Flow.objects.get(pk=response.json()["id"])
    assert flow_config(created).facts_lake == "/data/lake-a"
    patched = api("admin").patch(f"/api/v1/flows/{created.pk}/", {"facts_enabled": False}, format="json")
    assert patched.status_code == 200, patched.content
    created.refresh_from_db()
    assert flow_config(created).facts_lake == ""


@pytest.mark.django_db
def test_a_lake_with_a_nul_byte_is_refused(api: Api) -> None:
    response = post_flow(api, facts_lake="/data/\x00lake")
    assert response.status_code == 400
    assert "facts_lake" in response.json()


def test_facts_are_on_by_default() -> None:
    assert django_settings.MIRRORPLANE_FACTS_ENABLED is True

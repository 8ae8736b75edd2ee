"""The flow page's Export MM2 properties button downloads that flow alone, with its two clusters, as a file the
import reads back."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import Page
from pytest_django.live_server_helper import LiveServer

from controlplane.clusters.models import Cluster
from controlplane.flows.models import Flow
from replication.config.mm2properties import load_flows
from replication.mm2.properties import parse_properties
from tests.browser.conftest import log_in, make_user

pytestmark = pytest.mark.django_db(transaction=True)


def test_the_flow_page_exports_its_flow_alone(page: Page, live_server: LiveServer) -> None:
    west, east, backup = (
        Cluster.objects.create(alias=a, bootstrap_servers=f"10.255.0.{n}:9092")
        for n, a in enumerate(("us-west", "us-east", "backup"), start=1)
    )
    Flow.objects.create(source=west, target=east, topics=["orders"], enabled=False)
    flow = Flow.objects.create(source=east, target=backup, topics=["payments.*"], enabled=False)
    make_user("viewer-export", "viewer")
    log_in(page, live_server.url, "viewer-export")
    page.goto(f"{live_server.url}/flows/{flow.pk}/")
    with page.expect_download() as download:
        page.click("#export-mm2")
    assert download.value.suggested_filename == f"mirrorplane-flow-{flow.pk}.properties"
    text = Path(download.value.path()).read_text()
    properties = parse_properties(text)
    assert sorted(c.strip() for c in properties["clusters"].split(",")) == ["backup", "us-east"]
    (config,) = load_flows(properties)
    assert (config.name, config.topics, config.enabled) == ("us-east->backup", ("payments.*",), False)

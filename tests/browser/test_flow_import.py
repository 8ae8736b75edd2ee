"""The MM2 import page: a valid mm2.properties creates its clusters and flow, shown in the result; Preview shows
what a changed file would do, old -> new, and Import then applies exactly that; a bad file shows every error
naming the property as written, one per line, and saves nothing at all."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect
from pytest_django.live_server_helper import LiveServer

from controlplane.audit.models import AuditRecord
from controlplane.clusters.models import Cluster
from controlplane.flows.models import Flow
from tests.browser.conftest import log_in, make_user, shoot
from tests.browser.wizard import jobs_env
from tests.support.celery import Processes, start_celery

pytestmark = [pytest.mark.kafka, pytest.mark.django_db(transaction=True)]


def mm2_file(kafka_clusters: dict[str, str], west: str, east: str, *extra: str) -> str:
    return "\n".join(
        [
            "# ported from MirrorMaker 2",
            f"clusters = {west}, {east}",
            f"{west}.bootstrap.servers = {kafka_clusters['us-west']}",
            f"{east}.bootstrap.servers = {kafka_clusters['us-east']}",
            f"{west}->{east}.enabled = true",
            f"{west}->{east}.topics = orders.*, payments",
            *extra,
        ]
    )


def import_text(page: Page, text: str) -> None:
    page.fill("#f-properties", text)
    page.get_by_role("button", name="Import").click()


def saved() -> tuple[list[tuple[str, str]], list[str], int]:
    """What an import writes: clusters, flows, and audit records other than the refused import's own."""
    clusters = sorted(Cluster.objects.values_list("alias", "bootstrap_servers"))
    audited = AuditRecord.objects.exclude(action="flow.import_failed").count()
    return clusters, [f.name for f in Flow.objects.select_related("source", "target")], audited


def test_an_mm2_file_creates_its_clusters_and_flow_and_a_bad_one_saves_nothing(
    page: Page, live_server: LiveServer, kafka_clusters: dict[str, str]
) -> None:
    make_user("ada", "admin")
    log_in(page, live_server.url, "ada")
    page.goto(f"{live_server.url}/flows/")
    page.get_by_role("link", name="Import MM2 properties").click()
    page.wait_for_url(f"{live_server.url}/flows/import/")

    import_text(page, mm2_file(kafka_clusters, "imp-west", "imp-east"))
    expect(page.locator("#result .alert.ok")).to_have_text(
        "Imported 2 clusters: 2 created, 0 changed, 0 unchanged; 1 flow: 1 created, 0 changed, 0 unchanged."
    )
    expect(page.locator('#result tr[data-item^="cluster:"] .mono')).to_have_text(["imp-west", "imp-east"])
    flow = Flow.objects.select_related("source", "target").get()
    expect(page.get_by_role("link", name="imp-west->imp-east")).to_have_attribute("href", f"/flows/{flow.pk}/")
    shoot(page, "flow-import")
    bootstraps = [("imp-east", kafka_clusters["us-east"]), ("imp-west", kafka_clusters["us-west"])]
    assert sorted(Cluster.objects.values_list("alias", "bootstrap_servers")) == bootstraps
    assert (flow.source.alias, flow.target.alias, flow.enabled) == ("imp-west", "imp-east", True)
    assert flow.topics == ["orders.*", "payments"]
    before = saved()

    def bad_file(line: str) -> str:
        return mm2_file(kafka_clusters, "new-west", "new-east", line)

    bad = {
        # an invalid value of one flow, named with its flow as the file writes it
        "new-west->new-east.topics": bad_file("new-west->new-east.topics = ord[("),
        # a flow from a cluster the file does not define
        "nowhere->new-east.enabled": bad_file("nowhere->new-east.enabled = true"),
        # refused only after new-west was created inside the import's transaction: it must be rolled back
        "new-east.client.id": bad_file("new-east.client.id = mm2"),
    }
    for name, text in bad.items():
        import_text(page, text)
        errors = page.locator('[data-errors-for="properties"]')
        expect(errors).to_contain_text(re.compile(rf"^line \d+: {re.escape(name)}: "))
        expect(page.locator('.field[data-field="properties"]')).to_have_class(re.compile(r"\binvalid\b"))
        expect(page.locator("#result")).to_have_text("Nothing was imported.")
        assert saved() == before, name
    shoot(page, "flow-import-error")


def test_preview_shows_what_a_changed_file_would_do_and_import_applies_exactly_that(
    page: Page, live_server: LiveServer, kafka_clusters: dict[str, str]
) -> None:
    make_user("ada", "admin")
    log_in(page, live_server.url, "ada")
    page.goto(f"{live_server.url}/flows/import/")
    import_text(page, mm2_file(kafka_clusters, "imp-west", "imp-east"))
    expect(page.locator("#result .alert.ok")).to_contain_text("Imported 2 clusters: 2 created")
    before = saved()

    changed = mm2_file(kafka_clusters, "imp-west", "imp-east", "imp-west->imp-east.tasks.max = 3").replace(
        "orders.*, payments", "orders.*"
    )
    page.fill("#f-properties", changed)
    page.get_by_role("button", name="Preview").click()
    expect(page.locator("#result .alert.info")).to_contain_text(
        "2 clusters: 0 created, 0 changed, 2 unchanged; 1 flow: 0 created, 1 changed, 0 unchanged."
    )
    row = page.locator('#result tr[data-item="flow:imp-west->imp-east"]')
    expect(row).to_have_attribute("data-outcome", "changed")
    expect(row.locator("ul.diff li")).to_have_text(["topics: orders.*, payments → orders.*", "tasks.max: 1 → 3"])
    expect(page.locator('#result tr[data-item="cluster:imp-west"]')).to_have_attribute("data-outcome", "unchanged")
    shoot(page, "flow-import-preview")
    assert saved() == before  # a preview writes nothing

    page.get_by_role("button", name="Import").click()
    expect(page.locator("#result .alert.ok")).to_contain_text("1 flow: 0 created, 1 changed, 0 unchanged.")
    flow = Flow.objects.get()
    assert (flow.tasks_max, flow.topics) == (3, ["orders.*"])


def test_every_error_of_a_file_is_listed_with_its_line(
    page: Page, live_server: LiveServer, kafka_clusters: dict[str, str]
) -> None:
    make_user("ada", "admin")
    log_in(page, live_server.url, "ada")
    page.goto(f"{live_server.url}/flows/import/")
    text = mm2_file(
        kafka_clusters,
        "new-west",
        "new-east",
        "new-west->new-east.tasks.max = many",
        "new-west->new-east.emit.checkpoints.enabled = maybe",
        "new-east.client.id = mm2",
    )
    page.fill("#f-properties", text)
    page.get_by_role("button", name="Preview").click()
    problems = page.locator('[data-errors-for="properties"] ul.problems li')
    expect(problems).to_have_count(3)
    expect(problems).to_have_text(
        [
            re.compile(r"^line 7: new-west->new-east\.tasks\.max: "),
            re.compile(r"^line 8: new-west->new-east\.emit\.checkpoints\.enabled: "),
            re.compile(r"^line 9: new-east\.client\.id: "),
        ]
    )
    expect(page.locator("#result")).to_have_text("Nothing would be imported.")
    assert not Cluster.objects.exists() and not Flow.objects.exists()


def test_a_take_over_where_mm2_never_ran_is_refused_by_name_and_the_flows_stay_paused(
    page: Page,
    live_server: LiveServer,
    kafka_clusters: dict[str, str],
    celery_env: dict[str, str],
    celery_processes: Processes,
    tmp_path: Path,
) -> None:
    """The "Take over from MM2" choice runs its job in a worker; with no MM2 offsets storage topic in the target
    there is nothing to start from, so the page names the topic, nothing is stored, and the flow waits paused."""
    start_celery(jobs_env(celery_env), celery_processes, tmp_path, "w1", concurrency=2)
    make_user("ada", "admin")
    log_in(page, live_server.url, "ada")
    page.goto(f"{live_server.url}/flows/import/")
    page.fill("#f-properties", mm2_file(kafka_clusters, "tko-west", "tko-east"))
    page.check("#f-takeover")
    page.get_by_role("button", name="Import").click()
    expect(page.locator("#result .alert.ok")).to_contain_text("The flows wait paused until the takeover ends.")
    refused = page.locator("#takeover .alert.error")
    expect(refused).to_contain_text("not taken over from MM2, left paused", timeout=90_000)
    expect(refused).to_contain_text(
        "MM2's offsets storage topic mm2-offsets.tko-west.internal does not exist in target cluster tko-east"
    )
    shoot(page, "flow-import-takeover-refused")
    flow = Flow.objects.get()
    assert (flow.name, flow.paused) == ("tko-west->tko-east", True)

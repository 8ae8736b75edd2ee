"""The alerts acceptance test on real brokers, a real worker and beat: a flow replicates under traffic; the operator
pauses it while the producers keep writing, so its lag (read by the observer from the source's end offsets, since
the stopped tasks' reports are frozen) crosses a small lag rule: the alert fires on the Notifications page, in the
nav's count and at a webhook receiver in Alertmanager's format; the operator resumes it, the tasks catch up and the
alert resolves in all three places."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, expect
from pytest_django.live_server_helper import LiveServer

from controlplane.alerts.choices import AlertKind, AlertState
from controlplane.alerts.models import Alert, AlertRule, WebhookTarget
from controlplane.alerts.services.webhooks import origin
from controlplane.audit.models import AuditRecord
from controlplane.clusters import crypto
from controlplane.clusters.models import Cluster
from controlplane.flows.models import Flow
from tests.browser.conftest import log_in, make_user, shoot
from tests.browser.traffic import Traffic
from tests.browser.wizard import failover_flow, healthy, jobs_env
from tests.support.celery import Processes, start_celery
from tests.support.kafka import create_topic, unique_topic, wait_until

pytestmark = [pytest.mark.kafka, pytest.mark.django_db(transaction=True)]
PARTITIONS, RATE = 2, 200  # records/s: a paused flow falls THRESHOLD behind in a few seconds
THRESHOLD, FOR_SECONDS = 300, 4
INTERVALS = {  # beat's periods, short so the whole episode takes about a minute
    "MIRRORPLANE_ALERT_INTERVAL_SECONDS": "2",
    "MIRRORPLANE_OBSERVE_INTERVAL_SECONDS": "2",
    "MIRRORPLANE_SAMPLE_INTERVAL_SECONDS": "2",
}
# The receiver listens on 127.0.0.1, which webhooks reach only when the host is allow-listed.
RECEIVER_ALLOWED = {"MIRRORPLANE_WEBHOOK_ALLOWED_HOSTS": "127.0.0.1"}


class Receiver:
    """An HTTP endpoint in a thread that keeps every JSON body POSTed to it."""

    def __init__(self) -> None:
        self.bodies: list[dict[str, Any]] = []
        lock, bodies = threading.Lock(), self.bodies

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with lock:
                    bodies.append(body)
                self.send_response(200)
                self.end_headers()

            def log_message(self, *_: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook?token=secret"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True, name="webhook-receiver")
        self._thread.start()

    def received(self, status: str) -> list[dict[str, Any]]:
        return [b for b in list(self.bodies) if b["status"] == status]

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    running = Receiver()
    yield running
    running.close()


def lag_alert(flow: Flow, state: str) -> Alert | None:
    return Alert.objects.filter(kind=AlertKind.LAG_RECORDS, flow=flow, state=state).first()


def operate(page: Page, base: str, flow: Flow, op: str) -> None:
    """Pause or resume on the flow's page, as an operator would."""
    page.goto(f"{base}/flows/{flow.pk}/")
    page.locator(f"button[data-op='{op}']").click()
    expect(page.locator("#op-result")).to_contain_text(f"{op.capitalize()} requested.")


def test_a_paused_flow_under_traffic_fires_the_lag_alert_and_resuming_resolves_it(
    page: Page,
    live_server: LiveServer,
    kafka_clusters: dict[str, str],
    celery_env: dict[str, str],
    celery_processes: Processes,
    receiver: Receiver,
    tmp_path: Path,
) -> None:
    west = kafka_clusters["us-west"]
    topic = unique_topic("alerts")
    create_topic(west, topic, partitions=PARTITIONS)
    clusters = {a: Cluster.objects.create(alias=a, bootstrap_servers=kafka_clusters[a]) for a in ("us-west", "us-east")}
    flow = failover_flow(clusters["us-west"], clusters["us-east"], topic, f"{topic}-group.*")
    # Only the lag rule, small and quick: the other kinds are not what this test watches.
    AlertRule.objects.exclude(kind=AlertKind.LAG_RECORDS).delete()
    AlertRule.objects.update_or_create(
        kind=AlertKind.LAG_RECORDS, flow=None, defaults={"threshold": THRESHOLD, "for_seconds": FOR_SECONDS}
    )
    WebhookTarget.objects.create(
        name="test-receiver", url_encrypted=crypto.encrypt(receiver.url), url_origin=origin(receiver.url)
    )
    start_celery(
        {**jobs_env(celery_env), **INTERVALS, **RECEIVER_ALLOWED},
        celery_processes,
        tmp_path,
        "w1",
        "beat",
        concurrency=4,
    )
    make_user("olga", "operator")
    log_in(page, live_server.url, "olga")
    base = live_server.url

    with Traffic(west, topic, PARTITIONS, rate=RATE) as traffic:
        wait_until(lambda: traffic.sent > 1000 and healthy(flow), timeout=120, interval=0.5, what="a healthy flow")
        assert not Alert.objects.filter(state=AlertState.FIRING).exists(), "a flow keeping up fired an alert"

        operate(page, base, flow, "pause")
        firing = wait_until(lambda: lag_alert(flow, AlertState.FIRING), timeout=60, interval=0.5, what="firing")
        assert firing.value is not None and THRESHOLD < firing.value <= traffic.sent, (firing.value, traffic.sent)

        page.goto(f"{base}/alerts/")
        row = page.locator(f"#alerts tr[data-alert='{firing.pk}']")
        expect(row).to_have_attribute("data-state", "firing")
        expect(row).to_contain_text(flow.name)
        expect(row).to_contain_text("lag_records")
        expect(page.locator("#firing-count")).to_have_text("1")
        sent = wait_until(lambda: receiver.received("firing"), timeout=30, interval=0.2, what="a firing webhook")
        assert len(sent) == 1, sent
        (item,) = sent[0]["alerts"]
        assert (sent[0]["version"], sent[0]["receiver"], item["status"]) == ("4", "test-receiver", "firing")
        assert item["labels"]["flow"] == flow.name
        assert item["labels"]["alertname"] == "MirrorplaneReplicationLag"
        assert float(item["annotations"]["value"]) > THRESHOLD
        assert item["endsAt"] == "0001-01-01T00:00:00Z"
        shoot(page, "alerts-1-firing")

        operate(page, base, flow, "resume")
        resolved = wait_until(lambda: lag_alert(flow, AlertState.RESOLVED), timeout=90, interval=0.5, what="resolved")
        assert resolved.pk == firing.pk and resolved.resolved_at is not None

        page.goto(f"{base}/alerts/")
        row = page.locator(f"#alerts tr[data-alert='{firing.pk}']")
        expect(row).to_have_attribute("data-state", "resolved")
        expect(row).to_contain_text(flow.name)
        expect(page.locator("#firing-count")).to_be_hidden()
        done = wait_until(lambda: receiver.received("resolved"), timeout=30, interval=0.2, what="a resolved webhook")
        assert len(done) == 1, done
        (item,) = done[0]["alerts"]
        assert (item["status"], item["labels"]["flow"]) == ("resolved", flow.name)
        assert item["endsAt"] != "0001-01-01T00:00:00Z"
        shoot(page, "alerts-2-resolved")

    assert len(receiver.bodies) == 2, receiver.bodies  # told once of each change, nothing else
    assert list(Alert.objects.values_list("state", flat=True)) == [AlertState.RESOLVED]
    audited = AuditRecord.objects.filter(object_id=str(firing.pk), action__startswith="alert.")
    assert sorted(audited.values_list("action", flat=True)) == ["alert.fire", "alert.resolve"]
    assert AuditRecord.objects.filter(action="flow.pause", actor__username="olga").count() == 1

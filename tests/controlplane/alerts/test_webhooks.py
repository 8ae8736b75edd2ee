"""Webhook delivery to a real local HTTP receiver: the Alertmanager payload, and a failing receiver that does not
stop the evaluation nor the other targets."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from django.utils import timezone

from controlplane.alerts.choices import AlertKind, AlertState
from controlplane.alerts.models import Alert, AlertRule, WebhookTarget
from controlplane.alerts.services.evaluate import evaluate
from controlplane.clusters import crypto
from controlplane.flows.models import Flow
from tests.controlplane.alerts.conftest import running

pytestmark = pytest.mark.django_db
TOKEN = "s3cr3t-token-in-the-path"


class Receiver:
    """A local HTTP server that stores every POST's path and JSON body and answers ``status``."""

    def __init__(self, status: int = 200) -> None:
        self.bodies: list[tuple[str, Any]] = []
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers["Content-Length"])
                receiver.bodies.append((self.path, json.loads(self.rfile.read(length))))
                self.send_response(status)
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}/hooks/{TOKEN}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


@pytest.fixture
def receiver() -> Iterator[Callable[[int], Receiver]]:
    started: list[Receiver] = []

    def start(status: int = 200) -> Receiver:
        started.append(Receiver(status))
        return started[-1]

    yield start
    for r in started:
        r.server.shutdown()
        r.server.server_close()


def target(name: str, url: str) -> WebhookTarget:
    return WebhookTarget.objects.create(name=name, url_encrypted=crypto.encrypt(url), url_origin="http://127.0.0.1")


def test_a_firing_then_resolved_alert_reaches_the_receiver_as_alertmanager_json(
    flow: Flow, set_status: Callable[..., None], receiver: Callable[[int], Receiver]
) -> None:
    AlertRule.objects.create(kind=AlertKind.LAG_RECORDS, threshold=1000, for_seconds=0)
    hook = receiver(200)
    target("ops", hook.url)
    set_status(running(lag=7000))
    now = timezone.now()
    evaluate(now)

    ((path, body),) = hook.bodies
    assert path == f"/hooks/{TOKEN}"
    assert (body["version"], body["status"], body["receiver"]) == ("4", "firing", "ops")
    (item,) = body["alerts"]
    assert item["status"] == "firing"
    assert item["labels"] == {
        "alertname": "MirrorplaneReplicationLag",
        "kind": "lag_records",
        "severity": "warning",
        "flow": "us-west->us-east",
    }
    assert item["annotations"]["value"] == "7000"
    assert "7,000 records above 1,000" in item["annotations"]["summary"]
    assert item["startsAt"] == now.isoformat().replace("+00:00", "Z")
    assert item["endsAt"] == "0001-01-01T00:00:00Z"
    assert item["generatorURL"] == f"/flows/{flow.pk}/"

    set_status(running(lag=0))
    evaluate(now)
    assert [b["status"] for _, b in hook.bodies] == ["firing", "resolved"]
    assert hook.bodies[1][1]["alerts"][0]["endsAt"] == now.isoformat().replace("+00:00", "Z")
    stored = WebhookTarget.objects.get()
    assert (stored.last_status, stored.last_error) == (200, "")


def test_a_failing_receiver_is_recorded_and_does_not_stop_the_evaluation_nor_other_targets(
    flow: Flow, set_status: Callable[..., None], receiver: Callable[[int], Receiver], caplog: pytest.LogCaptureFixture
) -> None:
    AlertRule.objects.create(kind=AlertKind.LAG_RECORDS, threshold=1000, for_seconds=0)
    broken, good = receiver(500), receiver(200)
    target("a-broken", broken.url)
    target("b-refused", f"http://127.0.0.1:1/hooks/{TOKEN}")  # nothing listens on port 1
    target("c-good", good.url)
    set_status(running(lag=7000))

    fired = evaluate(timezone.now())

    assert [a.state for a in fired] == [AlertState.FIRING] and Alert.objects.get().state == AlertState.FIRING
    assert len(broken.bodies) == 1 and len(good.bodies) == 1
    results = {t.name: (t.last_status, t.last_error) for t in WebhookTarget.objects.all()}
    assert results["a-broken"][0] == 500 and results["a-broken"][1].startswith("HTTP 500")
    assert results["b-refused"][0] is None and "Connection refused" in results["b-refused"][1]
    assert results["c-good"] == (200, "")
    assert TOKEN not in caplog.text and all(TOKEN not in error for _, error in results.values())

"""Webhook delivery to a real local HTTP receiver: the Alertmanager payload, a failing receiver that does not
stop the evaluation nor the other targets, and outbound requests only where intended: internal addresses refused
unless allow-listed, the checked address the one connected to, redirects not followed."""

from __future__ import annotations

import contextlib
import datetime
import json
import socket
import ssl
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from django.test import override_settings
from django.utils import timezone

from controlplane.alerts.choices import AlertKind, AlertState
from controlplane.alerts.models import Alert, AlertRule, WebhookTarget
from controlplane.alerts.services import outbound
from controlplane.alerts.services.evaluate import evaluate
from controlplane.alerts.services.webhooks import deliver, origin
from controlplane.audit.models import AuditRecord
from controlplane.clusters import crypto
from controlplane.flows.models import Flow
from tests.controlplane.alerts.conftest import DNS, PUBLIC_ADDRESS, fake_getaddrinfo, running

pytestmark = pytest.mark.django_db
TOKEN = "s3cr3t-token-in-the-path"
QUERY_TOKEN = "s3cr3t-token-in-the-query"
PASSWORD = "s3cr3t-userinfo-password"


class Receiver:
    """A local HTTP server that stores every POST's path, JSON body and Host header and answers ``status`` (with
    ``location`` as its Location header, if given)."""

    def __init__(self, status: int = 200, location: str = "") -> None:
        self.bodies: list[tuple[str, Any]] = []
        self.hosts: list[str] = []
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers["Content-Length"])
                receiver.bodies.append((self.path, json.loads(self.rfile.read(length))))
                receiver.hosts.append(self.headers["Host"])
                self.send_response(status)
                if location:
                    self.send_header("Location", location)
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}/hooks/{TOKEN}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


@pytest.fixture(autouse=True)
def allow_local_receivers() -> Iterator[None]:
    """The receivers listen on 127.0.0.1, which webhooks reach only when an admin allow-lists it."""
    with override_settings(MIRRORPLANE_WEBHOOK_ALLOWED_HOSTS=["127.0.0.1"]):
        yield


@pytest.fixture
def receiver() -> Iterator[Callable[..., Receiver]]:
    started: list[Receiver] = []

    def start(status: int = 200, location: str = "") -> Receiver:
        started.append(Receiver(status, location))
        return started[-1]

    yield start
    for r in started:
        r.server.shutdown()
        r.server.server_close()


def target(name: str, url: str) -> WebhookTarget:
    return WebhookTarget.objects.create(name=name, url_encrypted=crypto.encrypt(url), url_origin="http://127.0.0.1")


def test_a_firing_then_resolved_alert_reaches_the_receiver_as_alertmanager_json(
    flow: Flow, set_status: Callable[..., None], receiver: Callable[..., Receiver]
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
    flow: Flow, set_status: Callable[..., None], receiver: Callable[..., Receiver], caplog: pytest.LogCaptureFixture
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


def sent(name: str, url: str) -> tuple[bool, int | None, str]:
    """Deliver a test body to a new target of this URL: whether it went, and the target's last status and error."""
    hook = target(name, url)
    went = deliver(hook, {"test": name})
    hook.refresh_from_db()
    return went, hook.last_status, hook.last_error


@pytest.mark.parametrize(
    ("host", "kind"),
    [
        ("127.0.0.1", "loopback"),
        ("2130706433", "loopback"),
        ("localhost", "loopback"),
        ("[::ffff:127.0.0.1]", "loopback"),
    ],
)
def test_a_receiver_on_an_internal_address_gets_nothing_when_its_host_is_not_allow_listed(
    receiver: Callable[..., Receiver], host: str, kind: str
) -> None:
    hook = receiver(200)
    url = hook.url.replace("127.0.0.1", host)

    with override_settings(MIRRORPLANE_WEBHOOK_ALLOWED_HOSTS=[]):
        went, status, error = sent("internal", url)

    assert (went, status, hook.bodies) == (False, None, [])
    assert error.startswith("RefusedHost:") and f"127.0.0.1, a {kind} address" in error and TOKEN not in error


def test_an_allow_listed_host_is_reached_at_its_checked_address_with_its_own_name_in_the_host_header(
    receiver: Callable[..., Receiver], monkeypatch: pytest.MonkeyPatch
) -> None:
    hook = receiver(200)
    monkeypatch.setitem(DNS, "alerts.internal.example", ["127.0.0.1"])
    url = hook.url.replace("127.0.0.1", "alerts.internal.example")

    with override_settings(MIRRORPLANE_WEBHOOK_ALLOWED_HOSTS=["Alerts.Internal.Example"]):
        assert sent("internal", url) == (True, 200, "")

    assert hook.hosts == [f"alerts.internal.example:{hook.server.server_port}"]
    assert [path for path, _ in hook.bodies] == [f"/hooks/{TOKEN}"]


def test_a_name_that_rebinds_to_loopback_is_connected_to_only_at_the_address_that_was_checked(
    receiver: Callable[..., Receiver], monkeypatch: pytest.MonkeyPatch
) -> None:
    """DNS rebinding: the first answer is public, every later one loopback. The first delivery goes to the public
    address it checked (which refuses: tests never leave the machine), the second checks the loopback answer and
    refuses it; the receiver on loopback never hears of either."""
    hook = receiver(200)
    lookups: list[str] = []

    def rebinding(host: str, port: int, *args: Any, **kwargs: Any) -> list[Any]:
        lookups.append(host)
        answer = PUBLIC_ADDRESS if len(lookups) == 1 else "127.0.0.1"
        return fake_getaddrinfo(answer, port)

    connected: list[tuple[str, int]] = []
    real_connect = socket.create_connection

    def connect(address: tuple[str, int], *args: Any, **kwargs: Any) -> socket.socket:
        """socket.create_connection, resolving a name the rebinding way; the public address refuses (a test never
        leaves the machine)."""
        host, port = address
        resolved = host if host in (PUBLIC_ADDRESS, "127.0.0.1") else rebinding(host, port)[0][4][0]
        connected.append((resolved, port))
        if resolved != "127.0.0.1":
            raise ConnectionRefusedError(111, "Connection refused")
        return real_connect((resolved, port), *args, **kwargs)

    monkeypatch.setattr(outbound, "getaddrinfo", rebinding)
    monkeypatch.setattr(socket, "create_connection", connect)
    url = hook.url.replace("127.0.0.1", "rebind.example.com")
    first, second = sent("rebind-1", url), sent("rebind-2", url)

    assert hook.bodies == [] and connected == [(PUBLIC_ADDRESS, hook.server.server_port)]
    assert first[:2] == (False, None) and "Connection refused" in first[2]
    assert second[:2] == (False, None) and "resolves to 127.0.0.1, a loopback address" in second[2]


def test_a_redirect_is_a_failed_delivery_naming_its_status_and_is_not_followed(
    receiver: Callable[..., Receiver],
) -> None:
    final = receiver(200)
    hook = receiver(302, location=final.url)

    went, status, error = sent("redirecting", hook.url)

    assert (went, status) == (False, 302)
    assert error.startswith("HTTP 302") and "not followed" in error
    assert len(hook.bodies) == 1 and final.bodies == []


def test_https_goes_to_the_checked_address_with_the_urls_host_as_server_name_and_verifies_its_certificate(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A local TLS listener with a self-signed certificate: the client names the URL's host (SNI) and refuses the
    certificate it cannot verify, so nothing is POSTed."""
    names: list[str | None] = []
    listener = socket.create_server(("127.0.0.1", 0))
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "alerts.internal.example")])
    now = datetime.datetime.now(datetime.UTC).replace(tzinfo=None)
    cert = (
        x509.CertificateBuilder(subject, subject, key.public_key(), x509.random_serial_number(), now)
        .not_valid_after(now + datetime.timedelta(hours=1))
        .sign(key, hashes.SHA256())
    )
    (tmp_path / "cert.pem").write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    (tmp_path / "key.pem").write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    server_tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server_tls.load_cert_chain(tmp_path / "cert.pem", tmp_path / "key.pem")
    server_tls.sni_callback = lambda sock, name, context: names.append(name)  # type: ignore[assignment,func-returns-value]

    def serve_one() -> None:
        conn, _ = listener.accept()
        with contextlib.suppress(OSError), server_tls.wrap_socket(conn, server_side=True) as tls:
            tls.recv(1)

    thread = threading.Thread(target=serve_one, daemon=True)
    thread.start()
    monkeypatch.setitem(DNS, "alerts.internal.example", ["127.0.0.1"])
    url = f"https://alerts.internal.example:{listener.getsockname()[1]}/hooks/{TOKEN}"
    with override_settings(MIRRORPLANE_WEBHOOK_ALLOWED_HOSTS=["alerts.internal.example"]):
        went, status, error = sent("tls", url)
    thread.join(5)
    listener.close()

    assert (went, status) == (False, None) and "CERTIFICATE_VERIFY_FAILED" in error
    assert names == ["alerts.internal.example"]


def tokened(name: str, hook_url: str) -> WebhookTarget:
    """A target whose URL carries a secret in its userinfo, its path and its query, saved as the API saves one."""
    url = hook_url.replace("http://", f"http://alerts:{PASSWORD}@") + f"?token={QUERY_TOKEN}"
    return WebhookTarget.objects.create(name=name, url_encrypted=crypto.encrypt(url), url_origin=origin(url))


def deliveries() -> dict[str, dict[str, Any]]:
    """The delivery audit records by webhook name, after checking each is the system's and holds no secret."""
    rows = AuditRecord.objects.filter(action="alert_webhook.deliver")
    for row in rows:
        assert (row.actor_id, row.actor_username, row.object_type) == (None, "", "alerts.webhooktarget")
        text = json.dumps([row.object_repr, row.before, row.after])
        assert all(secret not in text for secret in (TOKEN, QUERY_TOKEN, PASSWORD, "/hooks", "?", "@")), text
    return {row.object_repr: {"id": int(row.object_id), **row.after} for row in rows}


def test_a_delivery_is_audited_once_by_the_system_with_the_urls_origin_only(
    flow: Flow, set_status: Callable[..., None], receiver: Callable[..., Receiver], api: Callable[..., Any]
) -> None:
    AlertRule.objects.create(kind=AlertKind.LAG_RECORDS, threshold=1000, for_seconds=0)
    hook = receiver(200)
    ops = tokened("ops", hook.url)
    set_status(running(lag=7000))

    (alert,) = evaluate(timezone.now())

    assert [path for path, _ in hook.bodies] == [f"/hooks/{TOKEN}?token={QUERY_TOKEN}"]
    assert deliveries() == {
        "ops": {
            "id": ops.pk,
            "webhook": "ops",
            "kind": "webhook",
            "origin": f"http://127.0.0.1:{hook.server.server_port}",
            "alerts": [alert.pk],
            "delivered": True,
        }
    }
    listed = api("viewer").get("/api/v1/audit/", {"action": "alert_webhook.deliver"})
    assert [(r["object_repr"], r["actor"]) for r in listed.json()["results"]] == [("ops", "")]


def test_a_failed_delivery_is_audited_as_undelivered_and_what_the_address_answered_stays_with_admins(
    flow: Flow, set_status: Callable[..., None], receiver: Callable[..., Receiver]
) -> None:
    AlertRule.objects.create(kind=AlertKind.LAG_RECORDS, threshold=1000, for_seconds=0)
    tokened("broken", receiver(503).url)
    tokened("refused", f"http://127.0.0.1:1/hooks/{TOKEN}")  # nothing listens on port 1
    set_status(running(lag=7000))

    (alert,) = evaluate(timezone.now())

    audited = deliveries()
    outcomes = {name: (row["alerts"], row["delivered"], set(row)) for name, row in audited.items()}
    keys = {"id", "webhook", "kind", "origin", "alerts", "delivered"}
    assert outcomes == {"broken": ([alert.pk], False, keys), "refused": ([alert.pk], False, keys)}
    assert audited["refused"]["origin"] == "http://127.0.0.1:1"
    # The status and the error, which the targets keep for admins, never reach the audit log every role reads.
    stored = {t.name: t.last_error for t in WebhookTarget.objects.all()}
    assert stored["broken"].startswith("HTTP 503 Service Unavailable") and "Connection refused" in stored["refused"]
    text = json.dumps(audited)
    assert all(said not in text for said in ("503", "Service Unavailable", "Connection refused", "ConnectionRefused"))

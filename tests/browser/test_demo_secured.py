"""The demo's secured cluster, against `manage.py demo` itself: `backup` runs SASL_SSL with SCRAM-SHA-512, is
registered as the least-privilege `replicator` with its CA, and is granted exactly what its flow needs.

The tests run in file order on one demo: a wrong password typed into the cluster form is named as one within 15 s
and the right one restored; then the flow into backup copies records, and no password and no private key appears in
the demo's output (its web server's, worker's and beat's logs), in an API response or in a page; last, the demo is
stopped and started again on the same state, and backup still replicates with the same grants.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Consumer, KafkaException, TopicPartition
from confluent_kafka.admin import AclBindingFilter, AclOperation, AclPermissionType, ResourcePatternType, ResourceType
from playwright.sync_api import Page, expect

from tests.browser.conftest import shoot
from tests.browser.demo import Demo, log_in_as_admin, running_demo, start_demo, stop_demo
from tests.support.kafka import admin as kafka_admin
from tests.support.kafka import wait_until

pytestmark = [pytest.mark.kafka]
BACKUP, BACKUP_ID, FLOW_ID = "backup", 3, 2  # the demo's third cluster and its second flow, us-east->backup
REMOTE_ORDERS, PARTITIONS = "us-east.us-west.orders", 4
WRONG_PASSWORD = "not-the-replicators-password"
# Exactly the grants of flow_grants for us-east->backup (ACL sync off), and the reports' heartbeat group.
EXPECTED_ACLS = {
    ("GROUP", "mirrorplane-", "PREFIXED", "DESCRIBE"),
    ("GROUP", "__mirrorplane-heartbeat-facts", "LITERAL", "READ"),
    *(("TOPIC", "mirrorplane-positions.us-east.internal", "LITERAL", op) for op in ("CREATE", "READ", "WRITE")),
    *(("TOPIC", "us-east.checkpoints.internal", "LITERAL", op) for op in ("CREATE", "READ", "WRITE")),
    # us-east->backup's heartbeats go into backup's own heartbeats, where MirrorMaker 2 writes them.
    *(("TOPIC", "heartbeats", "LITERAL", op) for op in ("ALTER_CONFIGS", "CREATE", "DESCRIBE_CONFIGS", "WRITE")),
    *(
        ("TOPIC", "us-east.", "PREFIXED", op)
        for op in ("ALTER", "ALTER_CONFIGS", "CREATE", "DESCRIBE_CONFIGS", "READ", "WRITE")
    ),
}
API_PATHS = [
    "/api/v1/clusters/",
    f"/api/v1/clusters/{BACKUP_ID}/",
    "/api/v1/flows/",
    "/api/v1/flows/export/",
    f"/api/v1/flows/{FLOW_ID}/status/",
    "/api/v1/audit/",
    "/api/v1/reports/",
    "/api/v1/failovers/",
    "/api/v1/dashboard/",
]
PAGES = [
    "/",
    "/clusters/",
    f"/clusters/{BACKUP_ID}/",
    f"/clusters/{BACKUP_ID}/browse/",
    "/flows/",
    f"/flows/{FLOW_ID}/",
]


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Demo]:
    with running_demo(tmp_path_factory.mktemp("demo-secured")) as running:
        yield running


def _tls(demo: Demo) -> Path:
    return demo.state_dir / "demo-kafka" / BACKUP / "tls"


def _properties(demo: Demo, principal: str) -> dict[str, str]:
    """The client properties file the demo names for principal, as a user would read it."""
    line = next(line for line in demo.lines if line.startswith(f"{BACKUP}: SASL_SSL with SCRAM-SHA-512"))
    path = Path(line.split(f"{principal}: ", 1)[1].split(",")[0].rstrip(")"))
    return dict(row.split("=", 1) for row in path.read_text().splitlines() if row)


def _secrets(demo: Demo) -> list[str]:
    """Both principals' SCRAM passwords, and every private key's PEM body (the CA's, the broker's, the clients')."""
    tls = _tls(demo)
    passwords = [(tls / f"{who}.password").read_text().strip() for who in ("admin", "replicator")]
    keys = [line for path in tls.glob("*.key") for line in path.read_text().splitlines() if "-----" not in line]
    return passwords + keys


def _copied(config: dict[str, str]) -> int:
    consumer = Consumer({**config, "group.id": "mp-test-probe", "enable.auto.commit": False})
    try:
        return sum(
            consumer.get_watermark_offsets(TopicPartition(REMOTE_ORDERS, p), timeout=10)[1] for p in range(PARTITIONS)
        )
    except KafkaException:
        return 0  # the remote topic not created yet
    finally:
        consumer.close()


def _replicator_acls(admin_config: dict[str, str]) -> set[tuple[str, str, str, str]]:
    everything = AclBindingFilter(
        ResourceType.ANY,
        None,  # type: ignore[arg-type]  # None matches any name and host
        ResourcePatternType.ANY,
        "User:replicator",
        None,  # type: ignore[arg-type]
        AclOperation.ANY,
        AclPermissionType.ANY,
    )
    client = kafka_admin(admin_config)  # kept while its future is pending: a collected client cancels it
    bindings = client.describe_acls(everything).result(timeout=30)
    return {(b.restype.name, b.name, b.resource_pattern_type.name, b.operation.name) for b in bindings}


def test_a_wrong_password_typed_into_the_cluster_form_is_reported_within_15_s(page: Page, demo: Demo) -> None:
    base = demo.url
    log_in_as_admin(page, base)
    page.goto(f"{base}/clusters/{BACKUP_ID}/")
    expect(page.locator("#f-alias")).to_have_value(BACKUP)
    expect(page.locator("#f-security_protocol")).to_have_value("SASL_SSL")
    expect(page.locator("#f-sasl_username")).to_have_value("replicator")
    expect(page.locator("#f-sasl_password")).to_have_value("")  # write-only: never sent back to the form
    page.fill("#f-sasl_password", WRONG_PASSWORD)
    typed = time.monotonic()
    page.get_by_role("button", name="Save changes").click()
    page.wait_for_url(f"{base}/clusters/")
    page.goto(f"{base}/clusters/{BACKUP_ID}/")
    page.click("#check")
    error = page.locator("#check-result .alert.error")
    expect(error).to_contain_text("a wrong password", timeout=max(0.0, 15 - (time.monotonic() - typed)) * 1000)
    reported = time.monotonic() - typed
    shoot(page, "demo-secured-wrong-password")
    expect(error).to_contain_text("refused the SASL credentials")
    assert reported <= 15, f"the wrong password was reported after {reported:.1f} s"

    page.fill("#f-sasl_password", (_tls(demo) / "replicator.password").read_text().strip())
    page.get_by_role("button", name="Save changes").click()
    page.wait_for_url(f"{base}/clusters/")
    page.goto(f"{base}/clusters/{BACKUP_ID}/")
    page.click("#check")
    expect(page.locator("#check-result .alert.ok")).to_contain_text("Connected: 1 broker", timeout=60_000)
    shoot(page, "demo-secured-password-restored")


def test_backup_copies_records_with_exactly_its_grants_and_no_credential_shows(page: Page, demo: Demo) -> None:
    base = demo.url
    admin = _properties(demo, "admin")
    assert admin["security.protocol"] == "SASL_SSL" and admin["sasl.mechanism"] == "SCRAM-SHA-512"
    before = _copied(admin)
    wait_until(lambda: _copied(admin) >= before + 100, timeout=180, interval=2, what="records copied into backup")
    assert _replicator_acls(admin) == EXPECTED_ACLS

    log_in_as_admin(page, base)
    responses: dict[str, str] = {}
    for path in API_PATHS:
        response = page.request.get(f"{base}{path}")
        assert response.ok, f"GET {path}: {response.status}"
        responses[path] = response.text()
    cluster: dict[str, Any] = page.request.get(f"{base}/api/v1/clusters/{BACKUP_ID}/").json()
    assert (cluster["security_protocol"], cluster["sasl_mechanism"], cluster["sasl_username"]) == (
        "SASL_SSL",
        "SCRAM-SHA-512",
        "replicator",
    )
    assert cluster["has_sasl_password"] is True and "sasl_password" not in cluster
    assert (
        cluster["ssl_ca_pem"].strip() == (_tls(demo) / "ca.pem").read_text().strip()
    )  # TLS verifies the broker, host name too
    assert f"{BACKUP}.sasl.password = ********\n" in responses["/api/v1/flows/export/"]
    for path in PAGES:
        page.goto(f"{base}{path}", wait_until="networkidle", timeout=60_000)
        responses[path] = page.content()  # the page as its scripts rendered it
    shoot(page, "demo-secured-flow")

    secrets = _secrets(demo)
    assert len(secrets) >= 6
    for where, text in {**responses, "the demo's output": demo.output()}.items():
        assert "PRIVATE KEY" not in text, where
        shown = [secret[:4] + "…" for secret in secrets if secret in text]
        assert not shown, f"{where} shows a credential: {shown}"
    assert "client-replicator.properties" in demo.output()


@pytest.mark.slow  # a second demo start (2-3 min under CI's load): make test-faults
def test_a_restarted_demo_keeps_backup_secured_and_replicating(demo: Demo) -> None:
    """Ctrl-C, then `manage.py demo` again on the same state: backup's credentials are registered again, its flow
    copies records again, and the second run prints no credential either."""
    assert stop_demo(demo) == 0, demo.output()[-3000:]
    again = start_demo(demo.state_dir, web_port=int(demo.url.rsplit(":", 1)[1]), broker_port_base=_broker_base(demo))
    try:
        assert "demo flows: present" in again.output()
        admin = _properties(again, "admin")
        before = _copied(admin)
        wait_until(lambda: _copied(admin) >= before + 100, timeout=180, interval=2, what="records copied after restart")
        assert _replicator_acls(admin) == EXPECTED_ACLS
    finally:
        assert stop_demo(again) == 0, again.output()[-3000:]
    output = again.output()
    assert "PRIVATE KEY" not in output
    assert not [secret[:4] for secret in _secrets(again) if secret in output]


def _broker_base(demo: Demo) -> int:
    return min(int(bootstrap.rsplit(":", 1)[1]) for bootstrap in demo.bootstraps.values())

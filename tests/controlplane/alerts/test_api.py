"""The alerts API: lists and filters, rules CRUD by role with 400s naming the field, webhook URLs never shown, and
the Prometheus rules file on metrics /metrics exports."""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest
import yaml
from django.utils import timezone
from rest_framework.test import APIClient

from controlplane.alerts.choices import AlertKind, AlertState
from controlplane.alerts.models import Alert, AlertRule, WebhookTarget
from controlplane.audit.models import AuditRecord
from controlplane.flows.models import Flow
from controlplane.orchestration.services.status import prometheus_text

pytestmark = pytest.mark.django_db
Api = Callable[[str | None], APIClient]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"kind": "lag_records", "threshold": -1}, "threshold"),
        ({"kind": "lag_records", "threshold": 1, "for_seconds": 10**9}, "for_seconds"),
        ({"kind": "nonsense", "threshold": 1}, "kind"),
        ({"kind": "lag_records", "threshold": 1, "flow": 999999}, "flow"),
        ({"kind": "cluster_unreachable", "threshold": 0, "flow": "FLOW"}, "flow"),
        ({"kind": "lag_records", "threshold": 5}, "kind"),  # the global lag rule exists already
        ({"kind": "lag_records", "threshold": 5, "flow": "FLOW"}, "flow"),  # so does the flow's own
    ],
)
def test_a_bad_rule_is_a_400_naming_the_field(api: Api, flow: Flow, body: dict[str, object], field: str) -> None:
    AlertRule.objects.create(kind=AlertKind.LAG_RECORDS, threshold=10)
    AlertRule.objects.create(kind=AlertKind.LAG_RECORDS, flow=flow, threshold=10)
    body = {k: (flow.pk if v == "FLOW" else v) for k, v in body.items()}
    response = api("operator").post("/api/v1/alert-rules/", body, format="json")
    assert response.status_code == 400, response.content
    assert list(response.json()) == [field]


def test_operators_manage_rules_viewers_read_them_and_every_change_is_audited(api: Api, flow: Flow) -> None:
    body = {"kind": "lag_records", "flow": flow.pk, "threshold": 500, "for_seconds": 30}
    assert api("viewer").post("/api/v1/alert-rules/", body, format="json").status_code == 403
    created = api("operator").post("/api/v1/alert-rules/", body, format="json")
    assert created.status_code == 201, created.content
    rule_id = created.json()["id"]
    url = f"/api/v1/alert-rules/{rule_id}/"
    assert api("viewer").get(url).json()["threshold"] == 500
    assert api("operator").patch(url, {"enabled": False}, format="json").json()["enabled"] is False
    assert api("operator").delete(url).status_code == 204
    actions = AuditRecord.objects.filter(object_type="alerts.alertrule").order_by("id").values_list("action", flat=True)
    assert list(actions) == ["alert_rule.create", "alert_rule.update", "alert_rule.delete"]


def test_alerts_list_firing_first_and_filter_by_state_and_flow(api: Api, flow: Flow) -> None:
    now = timezone.now()
    common = {"kind": AlertKind.LAG_RECORDS, "subject": f"flow:{flow.pk}", "name": flow.name, "flow": flow}
    old = Alert.objects.create(**common, state=AlertState.RESOLVED, threshold=1, started_at=now, resolved_at=now)
    firing = Alert.objects.create(**common, state=AlertState.FIRING, threshold=1, started_at=now.replace(year=2000))
    rows = api("viewer").get("/api/v1/alerts/").json()
    assert [r["id"] for r in rows] == [firing.pk, old.pk]
    assert rows[0]["flow_url"] == f"/flows/{flow.pk}/"
    assert [r["id"] for r in api("viewer").get("/api/v1/alerts/?state=resolved").json()] == [old.pk]
    assert api("viewer").get(f"/api/v1/alerts/?flow={flow.pk + 1}").json() == []
    assert list(api("viewer").get("/api/v1/alerts/?state=burning").json()) == ["state"]
    assert list(api("viewer").get("/api/v1/alerts/?flow=x").json()) == ["flow"]
    assert api("admin").post("/api/v1/alerts/", {}, format="json").status_code == 405  # alerts are beat's alone


def test_a_webhook_url_is_stored_encrypted_and_only_its_origin_is_ever_shown(api: Api, flow: Flow) -> None:
    secret_url = "https://hooks.example.com:8443/services/T0/B0/very-secret-token?x=1"
    body = {"name": "ops", "url": secret_url}
    assert api("operator").post("/api/v1/alert-webhooks/", body, format="json").status_code == 403
    created = api("admin").post("/api/v1/alert-webhooks/", body, format="json")
    assert created.status_code == 201, created.content
    assert created.json()["url_origin"] == "https://hooks.example.com:8443"
    listed = api("viewer").get("/api/v1/alert-webhooks/")
    stored = WebhookTarget.objects.get()
    audit = AuditRecord.objects.get(action="alert_webhook.create")
    for text in (created.content.decode(), listed.content.decode(), stored.url_encrypted, str(audit.after)):
        assert "very-secret-token" not in text
    # An edit without a URL keeps the stored one.
    assert (
        api("admin").patch(f"/api/v1/alert-webhooks/{stored.pk}/", {"enabled": False}, format="json").status_code == 200
    )
    assert WebhookTarget.objects.get().url_encrypted == stored.url_encrypted


@pytest.mark.parametrize("url", ["ftp://example.com/x", "not a url", "http:///nohost", "http://h:99999/"])
def test_a_bad_webhook_url_is_a_400_naming_url(api: Api, url: str) -> None:
    response = api("admin").post("/api/v1/alert-webhooks/", {"name": "x", "url": url}, format="json")
    assert response.status_code == 400 and list(response.json()) == ["url"], response.content


def test_the_prometheus_rules_file_uses_only_metrics_that_metrics_exports(api: Api, flow: Flow) -> None:
    for kind in AlertKind:
        AlertRule.objects.create(kind=kind, threshold=5, for_seconds=60)
    AlertRule.objects.create(kind=AlertKind.LAG_RECORDS, flow=flow, threshold=50, for_seconds=30)
    response = api("viewer").get("/api/v1/alerts/prometheus-rules/")
    assert response.status_code == 200 and response["Content-Type"].startswith("text/yaml")
    rules = yaml.safe_load(response.content)["groups"][0]["rules"]
    exported = set(re.findall(r"^# TYPE (\S+) ", prometheus_text(), re.MULTILINE))
    used = {name for rule in rules for name in re.findall(r"mirrorplane_[a-z0-9_]+", rule["expr"])}
    assert used and used <= exported, used - exported
    lag = [r for r in rules if r["alert"] == "MirrorplaneReplicationLag"]
    assert sorted(r["expr"] for r in lag) == [
        'sum by (flow) (mirrorplane_replication_record_lag{flow!~"us-west->us-east"}) > 5',
        'sum by (flow) (mirrorplane_replication_record_lag{flow="us-west->us-east"}) > 50',
    ]
    assert {r["for"] for r in lag} == {"60s", "30s"}
    assert "MirrorplaneClusterUnreachable" not in response.content.decode()  # /metrics has no reachability


def test_how_deliveries_went_is_shown_to_admins_only_in_the_api_and_never_in_the_audit_log(api: Api) -> None:
    created = api("admin").post(
        "/api/v1/alert-webhooks/", {"name": "ops", "url": "https://hooks.example.com/"}, format="json"
    )
    pk = created.json()["id"]
    WebhookTarget.objects.filter(pk=pk).update(last_status=502, last_error="HTTP 502 Bad Gateway from 10.0.0.7:5432")
    api("admin").patch(f"/api/v1/alert-webhooks/{pk}/", {"enabled": False}, format="json")

    for role in ("viewer", "operator"):
        shown = [api(role).get("/api/v1/alert-webhooks/").json()[0], api(role).get(f"/api/v1/alert-webhooks/{pk}/")]
        for row in (shown[0], shown[1].json()):
            assert row["name"] == "ops" and "last_status" not in row and "last_error" not in row
    admin_row = api("admin").get(f"/api/v1/alert-webhooks/{pk}/").json()
    assert (admin_row["last_status"], admin_row["last_error"]) == (502, "HTTP 502 Bad Gateway from 10.0.0.7:5432")
    audit = api("viewer").get("/api/v1/audit/").content.decode()
    assert "alert_webhook.update" in audit and "502" not in audit

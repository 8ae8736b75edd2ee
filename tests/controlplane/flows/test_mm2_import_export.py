"""MirrorMaker 2 properties files in and out: an MM2 user moves over in one request, and can move back."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from rest_framework.test import APIClient

from bench.mm2_import import properties_file
from controlplane.audit.models import AuditRecord
from controlplane.clusters.models import Cluster
from controlplane.flows.mm2import import NO_FLOWS
from controlplane.flows.models import Flow
from replication.config import ClusterConfig, FlowConfig
from replication.config.mm2properties import load_flows
from replication.mm2.properties import parse_properties

Api = Callable[[str | None], APIClient]

# KIP-382, "Running a dedicated MirrorMaker cluster", with its flow enabled.
KIP_382 = """\
# mm2.properties
clusters = us-west, us-east
us-west.bootstrap.servers = host1:9092
us-east.bootstrap.servers = host2:9092

topics = .*
groups = .*
emit.checkpoints.interval.seconds = 10

us-west.offset.storage.topic = mm2-offsets
us-west->us-east.enabled = true
us-west->us-east.emit.heartbeats = false
"""

ACTIVE_ACTIVE = """\
clusters = us-west, us-east, backup
us-west.bootstrap.servers = 127.0.0.1:19092
us-east.bootstrap.servers = 127.0.0.1:19093
backup.bootstrap.servers = 127.0.0.1:19094
us-east.producer.linger.ms = 10
tasks.max = 2
us-west->us-east.enabled = true
us-west->us-east.topics = orders.*, payments
us-west->us-east.exactly.once = true
us-east->us-west.enabled = true
us-east->us-west.groups.exclude = test-.*
us-west->backup.enabled = false
us-west->backup.replication.policy.class = IdentityReplicationPolicy
us-west->backup.consumer.fetch.min.bytes = 1024
"""


def import_text(api: Api, text: str, role: str = "admin") -> Any:
    return api(role).post("/api/v1/flows/import/", text, content_type="text/plain")


def export_text(api: Api) -> str:
    response = api("viewer").get("/api/v1/flows/export/")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/plain")
    return response.content.decode()


def without_protocol(config: FlowConfig) -> FlowConfig:
    """The export names security.protocol=PLAINTEXT, librdkafka's default, which the KIP file leaves out."""

    def strip(cluster: ClusterConfig) -> ClusterConfig:
        client = {k: v for k, v in cluster.client.items() if (k, v) != ("security.protocol", "PLAINTEXT")}
        return ClusterConfig(cluster.alias, client)

    return dataclasses.replace(config, source=strip(config.source), target=strip(config.target))


def flows_of(text: str) -> dict[str, FlowConfig]:
    return {config.name: without_protocol(config) for config in load_flows(parse_properties(text))}


@pytest.mark.django_db
def test_importing_the_kip_382_example_creates_its_clusters_and_flow(api: Api) -> None:
    response = import_text(api, KIP_382)
    assert response.status_code == 201, response.content
    body = response.json()
    assert {c["alias"]: c["bootstrap_servers"] for c in body["clusters"]} == {
        "us-west": "host1:9092",
        "us-east": "host2:9092",
    }
    [flow] = body["flows"]
    assert flow["name"] == "us-west->us-east"
    assert (flow["enabled"], flow["topics"], flow["groups"]) == (True, [".*"], [".*"])
    assert flow["emit_checkpoints_interval_seconds"] == 10.0
    assert flow["emit_heartbeats_enabled"] is False
    assert flow["topics_exclude"] == [r".*[\-\.]internal", r".*\.replica", r"__.*"]  # MM2's default
    assert Flow.objects.count() == 1 and Cluster.objects.count() == 2
    actions = sorted(AuditRecord.objects.values_list("action", flat=True))
    assert actions == ["cluster.create", "cluster.create", "flow.create", "flow.import"]


@pytest.mark.django_db
@pytest.mark.parametrize("text", [KIP_382, ACTIVE_ACTIVE], ids=["kip-382", "active-active"])
def test_export_round_trips_an_imported_file(api: Api, text: str) -> None:
    assert import_text(api, text).status_code == 201
    exported = export_text(api)
    assert flows_of(exported) == flows_of(text)
    # And into an empty control plane: the same rows, so the same export.
    Flow.objects.all().delete()
    Cluster.objects.all().delete()
    assert import_text(api, exported).status_code == 201
    assert export_text(api) == exported


@pytest.mark.django_db
def test_import_takes_json_too(api: Api) -> None:
    response = api("admin").post("/api/v1/flows/import/", {"properties": KIP_382}, format="json")
    assert response.status_code == 201, response.content


@pytest.mark.django_db
def test_import_reuses_an_existing_cluster_with_the_same_settings(api: Api) -> None:
    Cluster.objects.create(alias="us-west", bootstrap_servers="host1:9092")
    assert import_text(api, KIP_382).status_code == 201
    assert Cluster.objects.count() == 2


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("text", "message"),
    [
        (KIP_382 + "us-west->us-east.topics = (unclosed\n", "us-west->us-east.topics: invalid regular expression"),
        (KIP_382 + "us-west->us-east.tasks.max = many\n", "us-west->us-east.tasks.max: expected an integer"),
        (KIP_382 + "us-west->us-east.producer.acks = 0\n", "us-west->us-east.producer: 'acks' is not"),
        (KIP_382 + "us-west->nowhere.enabled = true\n", "us-west->nowhere.enabled: not source->target"),
        (KIP_382 + "us-west->us-west.enabled = true\n", "source and target must be different clusters"),
        (KIP_382.replace("us-east.bootstrap", "#"), "us-east.bootstrap.servers: missing"),
        (KIP_382 + "us-west.client.id = mm2\n", "us-west.client.id: not a cluster setting Mirrorplane stores"),
        (
            KIP_382 + "us-east->us-west.enabled = true\nus-east->us-west.replication.policy.class = "
            "IdentityReplicationPolicy\n",
            "us-east -> us-west -> us-east",
        ),
        ("not a properties file at all", "clusters: required"),
        (KIP_382.replace("us-west", "us+west"), "source.cluster.alias: 'us+west' may contain only letters"),
    ],
)
def test_a_bad_file_gets_a_400_naming_the_property_and_saves_nothing(api: Api, text: str, message: str) -> None:
    response = import_text(api, text)
    assert response.status_code == 400
    assert message in " ".join(response.json()["properties"]), response.json()
    assert not Cluster.objects.exists() and not Flow.objects.exists()
    assert not AuditRecord.objects.filter(action__endswith=".create").exists()


def rows() -> list[tuple[Any, ...]]:
    """Every cluster and flow as stored, and the audit records: what an import may change."""
    clusters = list(Cluster.objects.order_by("pk").values_list())
    flows = list(Flow.objects.order_by("pk").values_list())
    return [*clusters, *flows, (AuditRecord.objects.count(),)]


@pytest.mark.django_db
def test_a_reimport_counts_created_changed_and_unchanged_clusters_and_flows(api: Api) -> None:
    assert import_text(api, ACTIVE_ACTIVE).status_code == 201
    text = (
        ACTIVE_ACTIVE.replace(
            "backup.bootstrap.servers = 127.0.0.1:19094", "backup.bootstrap.servers = 127.0.0.1:29094"
        )
        .replace("us-west->us-east.topics = orders.*, payments", "us-west->us-east.topics = orders.*")
        .replace("clusters = us-west, us-east, backup", "clusters = us-west, us-east, backup, dr")
        + "dr.bootstrap.servers = 127.0.0.1:19095\nus-east->dr.enabled = true\n"
    )
    response = import_text(api, text)
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["counts"] == {
        "clusters": {"created": 1, "changed": 1, "unchanged": 2},
        "flows": {"created": 1, "changed": 1, "unchanged": 2},
    }
    outcomes = {(item["kind"], item["name"]): (item["outcome"], item["changes"]) for item in body["items"]}
    assert outcomes[("cluster", "backup")] == (
        "changed",
        [{"property": "bootstrap.servers", "old": "127.0.0.1:19094", "new": "127.0.0.1:29094"}],
    )
    assert outcomes[("flow", "us-west->us-east")] == (
        "changed",
        [{"property": "topics", "old": ["orders.*", "payments"], "new": ["orders.*"]}],
    )
    assert outcomes[("cluster", "us-west")] == ("unchanged", [])
    assert outcomes[("cluster", "dr")][0] == outcomes[("flow", "us-east->dr")][0] == "created"
    assert Cluster.objects.get(alias="backup").bootstrap_servers == "127.0.0.1:29094"
    assert Flow.objects.get(source__alias="us-west", target__alias="us-east").topics == ["orders.*"]
    actions = AuditRecord.objects.filter(action__in=["cluster.update", "flow.update"]).values_list(
        "action", "object_repr"
    )
    assert sorted(actions) == [("cluster.update", "backup"), ("flow.update", "us-west->us-east")]
    audited = AuditRecord.objects.filter(action="flow.import").latest("at").after
    assert audited["clusters"] == {"created": ["dr"], "changed": ["backup"], "unchanged": ["us-west", "us-east"]}


@pytest.mark.django_db
def test_a_dry_run_changes_nothing_and_its_digest_applies_exactly_what_it_showed(api: Api) -> None:
    assert import_text(api, KIP_382).status_code == 201
    text = KIP_382.replace("us-east.bootstrap.servers = host2:9092", "us-east.bootstrap.servers = host3:9092")
    before = rows()
    client = api("admin")

    preview = client.post("/api/v1/flows/import/?dry_run=true", text, content_type="text/plain")

    assert preview.status_code == 200, preview.content
    body = preview.json()
    assert (body["dry_run"], body["clusters"], body["flows"]) == (True, [], [])
    assert body["counts"]["clusters"] == {"created": 0, "changed": 1, "unchanged": 1}
    [east] = [item for item in body["items"] if item["name"] == "us-east"]
    assert east["changes"] == [{"property": "bootstrap.servers", "old": "host2:9092", "new": "host3:9092"}]
    assert rows() == before

    Cluster.objects.filter(alias="us-west").update(bootstrap_servers="host9:9092")  # changed since the preview
    url = f"/api/v1/flows/import/?expect={body['digest']}"
    stale = client.post(url, text, content_type="text/plain")
    assert stale.status_code == 409
    assert "preview the file again" in stale.json()["detail"]
    assert Cluster.objects.get(alias="us-east").bootstrap_servers == "host2:9092"

    Cluster.objects.filter(alias="us-west").update(bootstrap_servers="host1:9092")
    applied = client.post(url, text, content_type="text/plain")
    assert applied.status_code == 201, applied.content
    assert applied.json()["items"] == body["items"] and applied.json()["dry_run"] is False
    assert Cluster.objects.get(alias="us-east").bootstrap_servers == "host3:9092"


@pytest.mark.django_db
def test_credentials_never_appear_in_the_diff_only_that_one_is_set(api: Api) -> None:
    secret = "s3cr3t-of-the-file"
    text = KIP_382.replace(
        "us-east.bootstrap.servers = host2:9092\n",
        "us-east.bootstrap.servers = host2:9092\nus-east.security.protocol = SASL_SSL\n"
        f"us-east.sasl.mechanism = PLAIN\nus-east.sasl.username = bob\nus-east.sasl.password = {secret}\n",
    )
    for dry_run in ("true", "false"):
        response = api("admin").post(f"/api/v1/flows/import/?dry_run={dry_run}", text, content_type="text/plain")
        assert response.status_code in (200, 201), response.content
        assert secret not in response.content.decode()
        [east] = [item for item in response.json()["items"] if item["name"] == "us-east"]
        assert {"property": "sasl.password", "old": None, "new": "(set)"} in east["changes"]
    assert Cluster.objects.get(alias="us-east").sasl_password == secret


@pytest.mark.django_db
def test_a_file_with_three_errors_gets_all_three_with_their_lines(api: Api) -> None:
    # Two in one flow, one in a cluster of that flow: each used to hide another.
    text = KIP_382 + "us-west->us-east.tasks.max = many\nus-west->us-east.topics = (a\nus-east.client.id = x\n"
    response = import_text(api, text)
    assert response.status_code == 400
    assert [problem.split(": ")[:2] for problem in response.json()["properties"]] == [
        ["line 13", "us-west->us-east.tasks.max"],
        ["line 14", "us-west->us-east.topics"],
        ["line 15", "us-east.client.id"],
    ]
    assert not Cluster.objects.exists() and not Flow.objects.exists()


@pytest.mark.django_db
def test_a_flow_of_a_refused_cluster_still_gets_its_own_errors(api: Api) -> None:
    text = KIP_382 + "us-east.client.id = x\nus-west->us-east.producer.acks = 0\n"
    response = import_text(api, text)
    assert response.status_code == 400
    named = [problem.split(": ")[1] for problem in response.json()["properties"]]
    assert named == ["us-east.client.id", "us-west->us-east.producer"]


@pytest.mark.django_db
@pytest.mark.parametrize("role", ["viewer", "operator"])
def test_only_an_admin_imports(api: Api, role: str) -> None:
    assert import_text(api, KIP_382, role=role).status_code == 403
    assert not Cluster.objects.exists()


@pytest.mark.django_db
@pytest.mark.parametrize("body", [{"properties": 7}, {"properties": ["a"]}, {}, ["clusters = a"]])
def test_import_with_wrong_types_gets_a_400(api: Api, body: Any) -> None:
    response = api("admin").post("/api/v1/flows/import/", body, format="json")
    assert response.status_code == 400


@pytest.mark.django_db
def test_a_literal_comma_written_as_x2c_exports_and_matches(api: Api) -> None:
    import_text(api, KIP_382)
    flow = Flow.objects.get()
    response = api("admin").patch(f"/api/v1/flows/{flow.pk}/", {"topics": [r"a\x2cb"]}, format="json")
    assert response.status_code == 200, response.content
    [config] = flows_of(export_text(api)).values()
    assert config.topics == (r"a\x2cb",)


# --- large files: linear, every error by line, nothing half-applied ----------------------------------------


def queries_to_import(api: Api, size: int) -> int:
    client = api("admin")
    with CaptureQueriesContext(connection) as queries:
        response = client.post("/api/v1/flows/import/", properties_file(size, size), content_type="text/plain")
    assert response.status_code == 201, response.content[:500]
    assert Flow.objects.count() == size and Cluster.objects.count() == size
    Flow.objects.all().delete()
    Cluster.objects.all().delete()
    return len(queries)


@pytest.mark.django_db
def test_an_import_reads_and_writes_the_database_a_fixed_number_of_times_whatever_its_size(api: Api) -> None:
    api("admin")  # the user exists before counting
    assert queries_to_import(api, 60) == queries_to_import(api, 6)


@pytest.mark.django_db
def test_an_import_reports_every_error_with_its_line_and_saves_nothing(api: Api) -> None:
    text = properties_file(6, 6)
    text += "c0000->c0001.tasks.max = many\nc0002.client.id = mm2\nc0004->c0005.topics = (unclosed\nbogus = 1\n"
    response = import_text(api, text)
    assert response.status_code == 400
    first = len(properties_file(6, 6).splitlines()) + 1
    assert response.json()["properties"] == [
        f"line {first}: c0000->c0001.tasks.max: expected an integer, got 'many'",
        f"line {first + 1}: c0002.client.id: not a cluster setting Mirrorplane stores "
        "(bootstrap.servers, sasl.mechanism, sasl.mechanisms, sasl.password, sasl.username, security.protocol, "
        "ssl.ca.pem, ssl.certificate.pem, ssl.key.pem)",
        f"line {first + 2}: c0004->c0005.topics: invalid regular expression '(unclosed': missing ), unterminated "
        "subpattern at position 0",
        f"line {first + 3}: bogus: unknown property",
    ]
    assert not Cluster.objects.exists() and not Flow.objects.exists()


@pytest.mark.django_db
def test_a_global_property_error_points_at_its_own_line(api: Api) -> None:
    response = import_text(api, KIP_382.replace("topics = .*", "topics = (a"))
    assert response.status_code == 400
    assert response.json()["properties"][0].startswith("line 6: topics: invalid regular"), response.json()


@pytest.mark.django_db
def test_a_file_with_clusters_but_no_flow_is_a_400_not_an_empty_201(api: Api) -> None:
    response = import_text(api, KIP_382.replace("us-west->us-east.enabled = true\n", "").split("us-west->")[0])
    assert response.status_code == 400
    assert response.json() == {"properties": [f"line 2: clusters: {NO_FLOWS}"]}
    assert not Cluster.objects.exists()


@pytest.mark.django_db
def test_a_line_without_a_name_is_one_error_among_the_others_in_line_order(api: Api) -> None:
    text = KIP_382 + "= orphan value\nus-west->us-east.tasks.max = many\n"
    response = import_text(api, text)
    assert response.status_code == 400
    assert response.json()["properties"] == [
        "line 13: no property name before the value",
        "line 14: us-west->us-east.tasks.max: expected an integer, got 'many'",
    ]
    assert not Cluster.objects.exists()


# The keys of MM2's integration tests (MirrorConnectorsIntegrationBaseTest, ...ExactlyOnceTest) beside the KIP's.
MM2_INTEGRATION_TEST = """\
clusters = primary, backup
primary.bootstrap.servers = host1:9092
backup.bootstrap.servers = host2:9092
primary->backup.enabled = true
backup->primary.enabled = true
offset.lag.max = 0
use.defaults.from = source
backup.exactly.once.source.support = enabled
primary.exactly.once.source.support = preparing
primary.offset.flush.interval.ms = 5000
offset.storage.replication.factor = 1
"""


@pytest.mark.django_db
@pytest.mark.parametrize("dry_run", [True, False])
def test_an_import_maps_connect_worker_keys_and_lists_those_without_effect_with_their_lines(
    api: Api, dry_run: bool
) -> None:
    response = api("admin").post(
        f"/api/v1/flows/import/?dry_run={str(dry_run).lower()}", MM2_INTEGRATION_TEST, content_type="text/plain"
    )
    assert response.status_code == (200 if dry_run else 201), response.content
    body = response.json()
    ignored = body["ignored"]
    assert [line.split(": ")[:2] for line in ignored] == [
        ["line 6", "offset.lag.max"],
        ["line 9", "primary.exactly.once.source.support"],
        ["line 11", "offset.storage.replication.factor"],
    ]
    assert "rolling upgrade" in ignored[1]
    if not dry_run:
        flows = {flow.name: flow for flow in Flow.objects.select_related("source", "target")}
        assert flows["primary->backup"].exactly_once is True
        assert flows["backup->primary"].exactly_once is False
        assert flows["backup->primary"].offset_flush_interval_ms == 5000
        assert flows["primary->backup"].offset_flush_interval_ms == 1000
        assert flows["primary->backup"].use_defaults_from == "source"


@pytest.mark.django_db
def test_an_import_whose_flow_contradicts_its_workers_exactly_once_support_names_both_keys(api: Api) -> None:
    text = MM2_INTEGRATION_TEST + "primary->backup.exactly.once = false\n"
    response = import_text(api, text)
    assert response.status_code == 400
    assert response.json()["properties"] == [
        "line 12: primary->backup.exactly.once: primary->backup.exactly.once = false contradicts "
        "backup.exactly.once.source.support = enabled: remove one of them"
    ]
    assert Flow.objects.count() == 0


@pytest.mark.django_db
def test_one_flow_exports_alone_with_only_its_clusters_and_round_trips(api: Api) -> None:
    assert import_text(api, ACTIVE_ACTIVE).status_code == 201
    wanted = Flow.objects.get(source__alias="us-west", target__alias="backup")
    response = api("viewer").get(f"/api/v1/flows/export/?flows={wanted.pk}")
    assert response.status_code == 200
    assert response["Content-Disposition"] == f'attachment; filename="mirrorplane-flow-{wanted.pk}.properties"'
    text = response.content.decode()
    assert flows_of(text) == {"us-west->backup": flows_of(ACTIVE_ACTIVE)["us-west->backup"]}
    clusters = parse_properties(text)["clusters"]
    assert sorted(c.strip() for c in clusters.split(",")) == ["backup", "us-west"]
    record = AuditRecord.objects.filter(action="flow.export").latest("pk")
    assert record.after == {"flows": 1}


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("query", "field"), [("flows=abc", "flows"), ("flows=999999", "flows"), ("flows=", "flows"), ("flow=1", "flow")]
)
def test_a_bad_export_query_is_a_400_naming_the_field(api: Api, query: str, field: str) -> None:
    response = api("viewer").get(f"/api/v1/flows/export/?{query}")
    assert response.status_code == 400 and field in response.json(), response.content

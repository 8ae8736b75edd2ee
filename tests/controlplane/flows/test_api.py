from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from rest_framework.test import APIClient

from controlplane.audit.models import AuditRecord
from controlplane.clusters.models import Cluster
from controlplane.flows.models import Flow
from controlplane.flows.services import flow_config
from tests.controlplane.api.base import ViewSetContract

Api = Callable[[str | None], APIClient]
IDENTITY = "IdentityReplicationPolicy"


def cluster(alias: str) -> Cluster:
    return Cluster.objects.get_or_create(alias=alias, defaults={"bootstrap_servers": f"{alias}:9092"})[0]


def flow(source: str, target: str, **fields: Any) -> Flow:
    return Flow.objects.create(source=cluster(source), target=cluster(target), **fields)


class TestFlowAPI(ViewSetContract):
    url = "/api/v1/flows/"
    model = Flow
    audit_name = "flow"

    def make_object(self) -> Flow:
        return flow("backup", "us-east")

    def create_data(self) -> dict[str, Any]:
        cluster("us-west"), cluster("us-east")
        return {"source": "us-west", "target": "us-east", "topics": ["orders.*", "payments"]}

    def update_data(self) -> dict[str, Any]:
        return {"topics_exclude": ["orders\\.internal"], "tasks_max": 4, "producer_overrides": {"linger.ms": "10"}}


@pytest.mark.django_db
def test_a_new_flow_gets_mm2_defaults_and_the_data_plane_gets_the_same_values(api: Api) -> None:
    cluster("us-west"), cluster("us-east")
    response = api("admin").post("/api/v1/flows/", {"source": "us-west", "target": "us-east"}, format="json")
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["name"] == "us-west->us-east"
    assert body["topics_exclude"] == [r".*[\-\.]internal", r".*\.replica", r"__.*"]
    assert (body["paused"], body["generation"], body["enabled"]) == (False, 0, True)
    config = flow_config(Flow.objects.get())
    assert config.topics_exclude == tuple(body["topics_exclude"])
    assert config.source.bootstrap_servers == "us-west:9092"


def post_flow(api: Api, **fields: Any) -> Any:
    cluster("us-west"), cluster("us-east")
    data = {"source": "us-west", "target": "us-east", **fields}
    return api("admin").post("/api/v1/flows/", data, format="json")


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("fields", "field", "message"),
    [
        ({"topics": ["orders.*", "(unclosed"]}, "topics", "invalid regular expression '(unclosed'"),
        ({"groups_exclude": ["*bad"]}, "groups_exclude", "invalid regular expression"),
        ({"topics": ["a{1,2}"]}, "topics", "a pattern cannot contain ','"),
        ({"source": "nowhere"}, "source", "does not exist"),
        ({"target": "us-west"}, "target", "different clusters"),
        ({"replication_policy_class": "MyPolicy"}, "replication_policy_class", "not a valid choice"),
        ({"replication_policy_separator": "/"}, "replication_policy_separator", "topic characters"),
        ({"replication_policy_separator": "-"}, "source", "contains the replication.policy.separator"),
        ({"tasks_max": 0}, "tasks_max", ""),
        ({"tasks_max": "four"}, "tasks_max", "valid integer"),
        ({"emit_heartbeats_interval_seconds": 0}, "emit_heartbeats_interval_seconds", ""),
        ({"emit_checkpoints_interval_seconds": "NaN"}, "emit_checkpoints_interval_seconds", ""),
        ({"topics": "orders.*"}, "topics", "list"),
        ({"topics": ["x" * 100_000]}, "topics", "1000 characters"),
        ({"record_handler_class": "m" * 100_000}, "record_handler_class", ""),
        ({"producer_overrides": {"acks": "0"}}, "producer_overrides", "'acks' is not an allowed override"),
        ({"consumer_overrides": {"enable.auto.commit": "true"}}, "consumer_overrides", "not an allowed override"),
        ({"producer_overrides": {"linger.ms": "soon"}}, "producer_overrides", "Invalid value"),
        ({"producer_overrides": ["linger.ms"]}, "producer_overrides", "dictionary"),
        ({"enabled": "perhaps"}, "enabled", "valid boolean"),
    ],
)
def test_bad_flow_input_gets_a_field_level_400_and_saves_nothing(
    api: Api, fields: dict[str, Any], field: str, message: str
) -> None:
    response = post_flow(api, **fields)
    assert response.status_code == 400
    assert field in response.json(), response.json()
    assert message in str(response.json()[field])
    assert not Flow.objects.exists()
    assert not AuditRecord.objects.exists()


@pytest.mark.django_db
def test_a_second_flow_for_the_same_pair_is_refused(api: Api) -> None:
    flow("us-west", "us-east")
    response = post_flow(api)
    assert response.status_code == 400
    assert response.json() == {"target": ["a flow us-west->us-east already exists"]}
    assert Flow.objects.count() == 1


@pytest.mark.django_db
def test_the_opposite_direction_is_a_different_flow_and_default_policy_loops_are_allowed(api: Api) -> None:
    flow("us-east", "us-west")
    assert post_flow(api).status_code == 201


@pytest.mark.django_db
def test_an_identity_policy_loop_is_refused_with_a_message_naming_the_cycle(api: Api) -> None:
    flow("us-west", "us-east")
    flow("us-east", "backup", replication_policy_class=IDENTITY)
    cluster("backup")
    data = {"source": "backup", "target": "us-west"}
    response = api("admin").post("/api/v1/flows/", data, format="json")
    assert response.status_code == 400
    [message] = response.json()["target"]
    assert "backup -> us-west -> us-east -> backup" in message
    assert not Flow.objects.filter(source__alias="backup").exists()


@pytest.mark.django_db
def test_switching_a_flow_to_the_identity_policy_is_refused_when_it_closes_a_loop(api: Api) -> None:
    flow("us-east", "us-west")
    existing = flow("us-west", "us-east")
    response = api("admin").patch(
        f"/api/v1/flows/{existing.pk}/", {"replication_policy_class": IDENTITY}, format="json"
    )
    assert response.status_code == 400
    assert "us-west -> us-east -> us-west" in response.json()["target"][0]
    existing.refresh_from_db()
    assert existing.replication_policy_class == "DefaultReplicationPolicy"


@pytest.mark.django_db
def test_source_and_target_cannot_be_changed(api: Api) -> None:
    existing = flow("us-west", "us-east")
    cluster("backup")
    response = api("admin").patch(f"/api/v1/flows/{existing.pk}/", {"target": "backup"}, format="json")
    assert response.status_code == 400
    assert "target" in response.json()


# --- operations ---------------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_an_operator_pauses_resumes_and_restarts_with_an_audit_record_each(api: Api) -> None:
    existing = flow("us-west", "us-east")
    client, url = api("operator"), f"/api/v1/flows/{existing.pk}/"
    assert client.post(url + "pause/").json()["paused"] is True
    assert client.post(url + "resume/").json()["paused"] is False
    assert client.post(url + "restart/").json()["generation"] == 1
    assert client.post(url + "restart/").json()["generation"] == 2
    records = AuditRecord.objects.order_by("id")
    assert [r.action for r in records] == ["flow.pause", "flow.resume", "flow.restart", "flow.restart"]
    pause = records[0]
    assert (pause.before["paused"], pause.after["paused"], pause.actor_username) == (False, True, "operator-user")
    assert records[3].before["generation"] == 1 and records[3].after["generation"] == 2


@pytest.mark.django_db
@pytest.mark.parametrize("operation", ["pause", "resume", "restart"])
def test_a_viewer_cannot_operate_a_flow(api: Api, operation: str) -> None:
    existing = flow("us-west", "us-east")
    assert api("viewer").post(f"/api/v1/flows/{existing.pk}/{operation}/").status_code == 403
    existing.refresh_from_db()
    assert (existing.paused, existing.generation) == (False, 0)


@pytest.mark.django_db
def test_status_lists_the_flows_tasks_for_a_viewer(api: Api) -> None:
    existing = flow("us-west", "us-east")
    response = api("viewer").get(f"/api/v1/flows/{existing.pk}/status/")
    assert response.status_code == 200
    assert response.json()["tasks"] == []


@pytest.mark.django_db
def test_the_flow_list_pages_by_default_and_searches_aliases_and_topics(api: Api) -> None:
    made = [flow(f"src-{n}", "sink").pk for n in range(5)]
    client = api("viewer")
    default = client.get("/api/v1/flows/").json()
    assert (default["count"], [f["id"] for f in default["results"]], default["next"]) == (5, made, None)
    assert [f["id"] for f in client.get("/api/v1/flows/?search=SRC-3").json()["results"]] == [made[3]]
    assert client.get("/api/v1/flows/?search=sink").json()["count"] == 5
    assert client.get("/api/v1/flows/?search=nothing-like-it").json() == {
        "count": 0,
        "next": None,
        "previous": None,
        "results": [],
    }
    page = client.get("/api/v1/flows/?limit=2&offset=1").json()
    assert (page["count"], [f["id"] for f in page["results"]]) == (5, made[1:3])
    assert page["next"].endswith("limit=2&offset=3") and page["previous"] is not None
    assert client.get("/api/v1/flows/?limit=5000").json()["count"] == 5  # capped at max_limit, never an error
    payments = flow("eu", "sink", topics=["payments\\.eu.*"]).pk
    assert [f["id"] for f in client.get("/api/v1/flows/?search=payments").json()["results"]] == [payments]
    assert client.get("/api/v1/clusters/?limit=1").json()["count"] == 7
    for path in ("/api/v1/flows/", "/api/v1/clusters/?limit=1", "/api/v1/audit/"):
        for offset in ("142381867652888985600", "-1", "abc"):  # past Postgres' bigint was a 500; DRF read abc as 0
            response = api("admin").get(f"{path}{'&' if '?' in path else '?'}offset={offset}")
            assert (response.status_code, list(response.json())) == (400, ["offset"]), (path, offset)


@pytest.mark.django_db
def test_a_nul_byte_in_a_cluster_alias_is_a_400_naming_the_field(api: Api) -> None:
    cluster("us-west")
    response = api("admin").post("/api/v1/flows/", {"source": "us-west", "target": "us-\x00east"}, format="multipart")
    assert response.status_code == 400
    assert response.json()["target"] == ["NUL bytes are not allowed."]
    assert Flow.objects.count() == 0

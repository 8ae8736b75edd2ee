"""Pre-flight's ACL check on real brokers with SimpleAclAuthorizer: a group ACL of the source that the target lacks
fails the check, naming it; once the target has it too, the check passes."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from confluent_kafka.admin import (
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    ResourcePatternType,
    ResourceType,
)

from controlplane.clusters.models import Cluster
from controlplane.failover.choices import Check
from controlplane.failover.models import Failover
from controlplane.failover.services import preflight
from tests.support.kafka import admin, unique_topic, wait_until

pytestmark = [pytest.mark.kafka, pytest.mark.django_db]


@pytest.fixture
def group(kafka_clusters: dict[str, str]) -> Iterator[str]:
    name = unique_topic("acl-group")
    yield name
    wanted = AclBindingFilter(
        ResourceType.GROUP, name, ResourcePatternType.LITERAL, None, None, AclOperation.ANY, AclPermissionType.ANY
    )
    for alias in ("us-west", "us-east"):
        client = admin(kafka_clusters[alias])
        client.delete_acls([wanted])[wanted].result(timeout=30)


def test_a_group_acl_missing_on_the_target_fails_preflight_by_name_until_it_exists(
    kafka_clusters: dict[str, str], group: str
) -> None:
    west, east = (Cluster.objects.create(alias=a, bootstrap_servers=kafka_clusters[a]) for a in ("us-west", "us-east"))
    failover = Failover(mode="planned", source=west, target=east, groups=[group])
    inputs = preflight.Inputs(failover, None, True, "")  # type: ignore[arg-type]  # the ACL check reads no flow
    binding = AclBinding(
        ResourceType.GROUP,
        group,
        ResourcePatternType.LITERAL,
        "User:alice",
        "*",
        AclOperation.READ,
        AclPermissionType.ALLOW,
    )
    source_admin, target_admin = admin(kafka_clusters["us-west"]), admin(kafka_clusters["us-east"])

    assert preflight.acls_on_target(inputs).detail == "0 group ACL(s) of the source exist on the target"
    source_admin.create_acls([binding])[binding].result(timeout=30)
    failed = wait_until(
        lambda: (r := preflight.acls_on_target(inputs)).status == Check.FAIL and r, timeout=30, what="a FAIL"
    )
    assert failed.detail == f"missing on the target: User:alice READ ALLOW on group {group}"

    target_admin.create_acls([binding])[binding].result(timeout=30)
    passed = wait_until(
        lambda: (r := preflight.acls_on_target(inputs)).status == Check.PASS and r, timeout=30, what="a PASS"
    )
    assert passed.detail == "1 group ACL(s) of the source exist on the target"

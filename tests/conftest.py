"""Session fixtures: real local Kafka clusters, started once per run (or reused via KAFKA_CLUSTERS)."""

from __future__ import annotations

import os
import shutil
import signal
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka.admin import (
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    AdminClient,
    ResourcePatternType,
    ResourceType,
)

from localkafka import LocalKafka
from localkafka.dist import default_version
from localkafka.manager import ClusterChoice, parse_clusters
from localkafka.security import ADMIN, REPLICATOR, Security
from tests.support import workers

TEST_ALIASES = ("us-west", "us-east", "backup")
# Per-alias Kafka versions of the test clusters, e.g. `us-west:2.3.0` for an old source beside new targets (the
# mixed-version run of .ci/run); an alias not named runs MIRRORPLANE_KAFKA_VERSION, by default the pinned 4.x.
TEST_VERSIONS_ENV = "MIRRORPLANE_TEST_KAFKA_VERSIONS"
REPO = Path(__file__).resolve().parent.parent


def pytest_configure(config: pytest.Config) -> None:
    """SIGTERM (a CI timeout, a killed run) ends the session like Ctrl-C, so fixtures stop their brokers."""

    def interrupt(*_: Any) -> None:
        raise KeyboardInterrupt("SIGTERM")

    signal.signal(signal.SIGTERM, interrupt)
    if hasattr(config.option, "numprocesses") and config.option.numprocesses and not hasattr(config, "workerinput"):
        return  # the xdist controller runs no test: each worker sets up its own below
    _private_facts_lake(config)
    _private_celery_broker()


def _private_facts_lake(config: pytest.Config) -> None:
    """Flows write facts to <state dir>/lake by default; a run's flows (in this process and in the worker processes
    it starts, which inherit the variable) write to a lake of the run's own, never to the demo's in var/lake."""
    if "MIRRORPLANE_FACTS_LAKE" not in os.environ:  # under xdist, each worker (the controller sets none)
        lake = tempfile.mkdtemp(prefix="mirrorplane-test-lake-")
        config.add_cleanup(lambda: shutil.rmtree(lake, ignore_errors=True))
        os.environ["MIRRORPLANE_FACTS_LAKE"] = lake
    from django.conf import settings  # after pytest-django chose the settings module

    settings.MIRRORPLANE_FACTS_LAKE = os.environ["MIRRORPLANE_FACTS_LAKE"]


def _private_celery_broker() -> None:
    """An xdist worker's Celery broker database, for the workers its tests start and the tasks they queue."""
    from django.conf import settings

    from controlplane.celery import app

    url = workers.redis_url(str(settings.CELERY_BROKER_URL))
    if url != settings.CELERY_BROKER_URL:
        os.environ["CELERY_BROKER_URL"] = settings.CELERY_BROKER_URL = url
        app.conf.broker_url = url


def fresh_local_kafka(name: str, broker_port_base: int) -> LocalKafka:
    """Clusters in a fixed state dir (one per xdist worker, on the worker's ports): whatever an earlier, killed run
    left there is stopped first (by PID)."""
    base = workers.port(broker_port_base)
    kafka = LocalKafka(REPO / "var" / workers.state_name(name), broker_port_base=base, zk_port_base=base - 7000)
    kafka.down(purge=True)
    return kafka


def _parse_kafka_clusters(value: str) -> dict[str, str]:
    pairs = [item.split("=", 1) for item in value.split(",") if item.strip()]
    if any(len(pair) != 2 for pair in pairs):
        raise pytest.UsageError("KAFKA_CLUSTERS must look like 'us-west=127.0.0.1:19092,us-east=127.0.0.1:19093'")
    return {alias.strip(): bootstrap.strip() for alias, bootstrap in pairs}


@pytest.fixture(scope="session")
def local_kafka() -> Iterator[LocalKafka | None]:
    """The LocalKafka that owns the test clusters; None when KAFKA_CLUSTERS points at running ones."""
    if os.environ.get("KAFKA_CLUSTERS"):
        yield None
        return
    kafka = fresh_local_kafka("test-kafka", int(os.environ.get("MIRRORPLANE_TEST_PORT_BASE", "29092")))
    try:
        kafka.up(test_cluster_versions())
        yield kafka
    finally:
        kafka.down(purge=True)


SECURED_ALIASES = {"sec-scram": Security.SCRAM, "sec-mtls": Security.MTLS}
SECURED_PORT_OFFSET = 10  # beside the test clusters' ports, within a worker's stride


@pytest.fixture(scope="session")
def secured_kafka() -> Iterator[LocalKafka]:
    """Two secured clusters with enforcing authorizers, started on first use: `sec-scram` (SASL_SSL with
    SCRAM-SHA-512) and `sec-mtls` (SSL with client certificates). Clients: `secured_kafka.client_config(alias,
    principal)`, principal `admin` (a super user) or `replicator` (no ACL until a test grants one)."""
    base = int(os.environ.get("MIRRORPLANE_TEST_PORT_BASE", "29092")) + SECURED_PORT_OFFSET
    kafka = fresh_local_kafka("secured-kafka", base)
    try:
        kafka.up({alias: ClusterChoice(default_version(), security) for alias, security in SECURED_ALIASES.items()})
        yield kafka
    finally:
        kafka.down(purge=True)


@pytest.fixture
def replicator_grants_revoked(secured_kafka: LocalKafka) -> Iterator[None]:
    """The test starts and ends with no ACL for the secured clusters' `replicator` on either cluster."""
    yield
    for alias in SECURED_ALIASES:
        admin = AdminClient(dict[str, Any](secured_kafka.client_config(alias, ADMIN)))
        everything = AclBindingFilter(
            ResourceType.ANY,
            None,  # type: ignore[arg-type]  # None matches any name, principal and host
            ResourcePatternType.ANY,
            f"User:{REPLICATOR}",
            None,  # type: ignore[arg-type]
            AclOperation.ANY,
            AclPermissionType.ANY,
        )
        admin.delete_acls([everything])[everything].result(timeout=30)


def test_cluster_versions() -> dict[str, str]:
    """alias -> Kafka version of the test clusters (MIRRORPLANE_TEST_KAFKA_VERSIONS over the default)."""
    versions = dict.fromkeys(TEST_ALIASES, default_version())
    named = parse_clusters(os.environ.get(TEST_VERSIONS_ENV, ""))
    if set(named) - set(TEST_ALIASES):
        raise pytest.UsageError(f"{TEST_VERSIONS_ENV} names an alias that is not a test cluster's: {sorted(named)}")
    return versions | named


@pytest.fixture(scope="session")
def kafka_versions(local_kafka: LocalKafka | None) -> dict[str, str]:
    """alias -> the Kafka version each test cluster runs (as configured, for clusters from KAFKA_CLUSTERS)."""
    return test_cluster_versions() if local_kafka is None else local_kafka.versions()


@pytest.fixture(scope="session")
def kafka_clusters(local_kafka: LocalKafka | None) -> dict[str, str]:
    """alias -> bootstrap servers of at least three independent real clusters."""
    if local_kafka is None:
        return _parse_kafka_clusters(os.environ["KAFKA_CLUSTERS"])
    return local_kafka.bootstraps()


@pytest.fixture(autouse=True)
def _migration_data(request: pytest.FixtureRequest) -> None:
    """What the data migrations write (role groups, global alert rules), for every test that uses the database.

    A transactional test (live server, real workers) ends with a flush that deletes it. In one process pytest-django
    ran those tests last; on xdist workers files run in any order, so a later test in the same worker found none.
    After a flush, the project's data migrations run again, in order, as `migrate` ran them."""
    if request.node.get_closest_marker("django_db") is None and not {"db", "transactional_db", "live_server"} & set(
        request.fixturenames
    ):
        return
    request.getfixturevalue("db")  # the test's own database set-up (transactional or not), decided by its marker
    from django.contrib.auth.models import Group

    from controlplane.core.permissions import VIEWER

    if not Group.objects.filter(name=VIEWER).exists():  # flushed since the migrations ran
        _run_data_migrations()


def _run_data_migrations() -> None:
    from django.apps import apps
    from django.db import connection
    from django.db.migrations.loader import MigrationLoader
    from django.db.migrations.operations import RunPython

    graph = MigrationLoader(connection).graph
    plan = list(dict.fromkeys(key for leaf in graph.leaf_nodes() for key in graph.forwards_plan(leaf)))
    for key in plan:
        migration = graph.nodes[key]
        if not type(migration).__module__.startswith("controlplane."):
            continue
        for operation in migration.operations:
            if isinstance(operation, RunPython):
                operation.code(apps, None)  # ours ask `apps` for models and never use the schema editor

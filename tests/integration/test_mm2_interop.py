"""Interoperability with MirrorMaker 2 on real Kafka 4.3.1 clusters, both ways.

- Kafka's own mirror-client (`RemoteClusterUtils.translateOffsets`, `MirrorClient`, run from Java by
  `tests/support/java/Harness.java`) reads what a Mirrorplane flow wrote, and gets the offsets Mirrorplane's CLI
  translates.
- Mirrorplane reads what Apache's MM2 wrote: its MirrorClient and `offsets translate --from checkpoints` give what
  Java's translateOffsets gives, and the failover wizard moves an MM2-replicated group from MM2's records, re-reading
  no more records per partition than its preview states.

One MM2 run and one Mirrorplane run for the module: each fixture sets up its records once.
"""

from __future__ import annotations

import contextlib
import io
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from controlplane.clusters.models import Cluster
from controlplane.failover.choices import Check, Mode
from controlplane.failover.models import Failover
from controlplane.failover.services import drain, machine, offsets, steps
from controlplane.monitoring.services.readers import latest_checkpoints
from localkafka.mirrormaker2 import MirrorMaker2, dedicated_properties
from replication.__main__ import main
from replication.config import ClusterConfig
from replication.emitters.checkpoints import CheckpointEmitter
from replication.offsets.mirrorclient import MirrorClient
from replication.offsets.syncstore import OffsetSyncReader
from replication.offsets.translation import translate_downstream
from tests.support.failover import exactness, read_rest, values_from
from tests.support.kafka import create_topic, end_offsets, unique_topic, wait_until
from tests.support.mm2interop import JavaView, Offsets, java_view
from tests.support.replication import make_flow, produce_known
from tests.support.translation import place_groups, replicate

pytestmark = pytest.mark.kafka
PARTITIONS = 2


@dataclass(frozen=True)
class Replicated:
    topic: str  # in us-west; its copy in us-east is us-west.<topic>
    group: str  # committed in us-west at `positions`
    positions: dict[int, int]

    @property
    def remote(self) -> str:
        return f"us-west.{self.topic}"


def _cluster(kafka_clusters: dict[str, str], alias: str) -> ClusterConfig:
    return ClusterConfig(alias, {"bootstrap.servers": kafka_clusters[alias]})


def _cli_csv(config: Path, group: str, *options: str) -> Offsets:
    """`python -m replication offsets translate --format csv` as {(remote topic, partition): offset}."""
    out = io.StringIO()
    args = ["offsets", "translate", "--config", str(config), "--group", group, "--source", "us-west"]
    with contextlib.redirect_stdout(out):
        assert main([*args, "--target", "us-east", "--format", "csv", *options]) == 0
    rows = [line.split(",") for line in out.getvalue().splitlines()]
    return {(topic, int(partition)): int(offset) for topic, partition, offset in rows}


def _properties(path: Path, kafka_clusters: dict[str, str], topic: str) -> Path:
    path.write_text(
        "clusters = us-west, us-east\n"
        f"us-west.bootstrap.servers = {kafka_clusters['us-west']}\n"
        f"us-east.bootstrap.servers = {kafka_clusters['us-east']}\n"
        "us-west->us-east.enabled = true\n"
        f"us-west->us-east.topics = {topic}\n"
    )
    return path


def _placed(bootstrap: str, prefix: str, topic: str, positions: dict[int, int]) -> str:
    """A group committed at positions; a fresh cluster refuses commits until its group coordinator is loaded."""

    def placed() -> str | None:
        try:
            return place_groups(bootstrap, prefix, topic, {p: [o] for p, o in positions.items()})[0]
        except AssertionError:  # a partition refused: the coordinator is still loading
            return None

    group = wait_until(placed, timeout=60, interval=1, what=f"{prefix} committed in {topic}")
    assert group is not None
    return group


# -- Java reads Mirrorplane ---------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def mirrorplane_records(kafka_clusters: dict[str, str]) -> Replicated:
    """A Mirrorplane flow us-west->us-east copied 600 records; a group committed at 57 and 143; one checkpoint round."""
    topic = unique_topic("interop-mp")
    west, east = kafka_clusters["us-west"], kafka_clusters["us-east"]
    create_topic(west, topic, partitions=PARTITIONS)
    produce_known(west, topic, partitions=PARTITIONS, count=600)
    flow = make_flow(kafka_clusters, "us-west", "us-east", topic)
    remote = f"us-west.{topic}"
    replicate(flow, lambda: sum(end_offsets(east, remote, range(PARTITIONS)).values()) >= 600, "600 records")
    positions = {0: 57, 1: 143}
    group = _placed(west, unique_topic("interop-mp-grp"), topic, positions)
    emitter = CheckpointEmitter(flow.replace(groups=(group,)))
    try:
        emitter.run_once()
    finally:
        emitter.close()
    return Replicated(topic, group, positions)


def test_kafkas_translate_offsets_reads_mirrorplane_checkpoints_as_mirrorplane_translates(
    kafka_clusters: dict[str, str], mirrorplane_records: Replicated, tmp_path: Path
) -> None:
    r = mirrorplane_records
    java = java_view(kafka_clusters["us-east"], "us-west", [r.group])
    config = _properties(tmp_path / "mp.properties", kafka_clusters, r.topic)

    exact = {(r.remote, p): o for p, o in r.positions.items()}  # Mirrorplane's syncs translate them one for one
    assert java.translated[r.group] == exact
    assert _cli_csv(config, r.group) == exact  # from the committed offsets, through the offset syncs
    assert _cli_csv(config, r.group, "--from", "checkpoints") == exact
    assert "us-west.checkpoints.internal" in java.checkpoint_topics
    _same_mirror_view(java, MirrorClient(_cluster(kafka_clusters, "us-east")), r.remote)


def _same_mirror_view(java: JavaView, client: MirrorClient, remote: str) -> None:
    """Kafka's MirrorClient and Mirrorplane's see the same remote topics, upstream clusters and hops."""
    assert remote in java.remote_topics
    # Kafka 4's ReplicationPolicy counts only MM2's own `.internal` topics as internal: it reads Mirrorplane's
    # positions topic `mirrorplane-positions.<source>.internal` as a remote topic from a cluster named
    # "mirrorplane-positions". Mirrorplane leaves every `.internal` topic out, as MM2's topic filter does.
    ours = {t for t in java.remote_topics if t.startswith("mirrorplane-positions.")}
    assert client.remote_topics() == java.remote_topics - ours
    assert client.upstream_clusters() == java.upstream_clusters
    assert client.replication_hops("us-west") == java.replication_hops


# -- Mirrorplane reads MM2 ----------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def mm2_records(kafka_clusters: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> Iterator[Replicated]:
    """Apache's MM2 copied 500 records per partition us-west->us-east with checkpoints (offset.lag.max at its
    default, 100: sparse offset syncs), a group committed in us-west at 333 and 250; MM2 checkpointed it, then
    stopped."""
    topic = unique_topic("interop-mm2")
    west, east = kafka_clusters["us-west"], kafka_clusters["us-east"]
    create_topic(west, topic, partitions=PARTITIONS)
    produce_known(west, topic, partitions=PARTITIONS, count=1000)
    positions = {0: 333, 1: 250}
    group = _placed(west, unique_topic("interop-mm2-grp"), topic, positions)
    clusters = {"us-west": west, "us-east": east}
    extra = {
        "us-west->us-east.topics": topic,
        "us-west->us-east.groups": group,
        "us-west->us-east.emit.checkpoints.enabled": "true",
        "us-west->us-east.sync.group.offsets.enabled": "false",
    }
    mm2 = MirrorMaker2(dedicated_properties(clusters, [("us-west", "us-east")], extra), tmp_path_factory.mktemp("mm2"))
    r = Replicated(topic, group, positions)
    with mm2:
        wait_until(
            lambda: _ends(east, r.remote) == {0: 500, 1: 500},
            timeout=180,
            interval=1,
            what=f"MM2 to copy 1000 records:\n{mm2.log_tail()}",
        )
        wait_until(
            lambda: _checkpointed(kafka_clusters, r),
            timeout=120,
            interval=1,
            what=f"MM2 to checkpoint {group}:\n{mm2.log_tail()}",
        )
    yield r


def _ends(bootstrap: str, topic: str) -> dict[int, int] | None:
    try:
        return end_offsets(bootstrap, topic, range(PARTITIONS), timeout=5)
    except Exception:  # not created yet
        return None


def _checkpointed(kafka_clusters: dict[str, str], r: Replicated) -> bool:
    """Every partition of the group checkpointed at its committed offset."""
    found = latest_checkpoints(_cluster(kafka_clusters, "us-east"), "us-west").get(r.group, {})
    return {p: cp.upstream_offset for (_, p), cp in found.items()} == r.positions


def test_mirrorplane_reads_mm2_checkpoints_as_kafkas_translate_offsets(
    kafka_clusters: dict[str, str], mm2_records: Replicated, tmp_path: Path
) -> None:
    r = mm2_records
    java = java_view(kafka_clusters["us-east"], "us-west", [r.group])
    client = MirrorClient(_cluster(kafka_clusters, "us-east"))
    config = _properties(tmp_path / "mm2.properties", kafka_clusters, r.topic)

    translated = java.translated[r.group]
    # MM2 checkpointed by its rule over its offset syncs: Mirrorplane's reading of that rule gives the same numbers.
    syncs = OffsetSyncReader(make_flow(kafka_clusters, "us-west", "us-east", r.topic))
    try:
        syncs.update()
        by_rule = {(r.remote, p): translate_downstream(syncs.store, r.topic, p, o) for p, o in r.positions.items()}
    finally:
        syncs.close()
    assert translated == {tp: found[0] for tp, found in by_rule.items() if found is not None}
    assert sorted(translated) == [(r.remote, 0), (r.remote, 1)]
    assert client.remote_consumer_offsets(r.group, "us-west") == translated
    assert _cli_csv(config, r.group, "--from", "checkpoints") == translated
    # From MM2's offset syncs by default: its rule, not Mirrorplane's one-for-one interpolation, which MM2's sparse
    # syncs do not support (it could land past a record's copy and skip it).
    assert _cli_csv(config, r.group) == translated
    _same_mirror_view(java, client, r.remote)


# -- the failover wizard on MM2's records -------------------------------------------------------------------------
@pytest.mark.django_db
def test_the_wizard_fails_over_an_mm2_group_reading_again_no_more_than_its_preview_states(
    kafka_clusters: dict[str, str], mm2_records: Replicated
) -> None:
    r = mm2_records
    west, east = kafka_clusters["us-west"], kafka_clusters["us-east"]
    source = Cluster.objects.create(alias="us-west", bootstrap_servers=west)
    target = Cluster.objects.create(alias="us-east", bootstrap_servers=east)
    failover = Failover.objects.create(mode=Mode.PLANNED, source=source, target=target, groups=[r.group])

    preflight, done = _run(failover, steps.preflight_step, {"proceed": True, "acknowledge": _warnings(failover)})
    assert done, preflight
    healthy = next(c for c in preflight.checks if c.code == "flow_healthy")
    assert "MirrorMaker 2" in healthy.detail
    assert next(c for c in preflight.checks if c.code == "checkpoints_exist").status == Check.PASS
    drained = [_run(failover, drain.drain_step, {}) for _ in range(2)]  # a drain to 0 needs end offsets still
    assert drained[-1][1], drained[-1][0]
    assert [(p.partition, p.lag) for p in drained[-1][0].partitions] == [(0, 0), (1, 0)]  # MM2 copied all 500
    assert _run(failover, steps.fence_step, {"confirmed": True})[1]

    checkpoint, done = _run(failover, offsets.checkpoint_step, {})
    assert done, checkpoint
    plans = {p.partition: p for p in checkpoint.preview}
    assert sorted(plans) == [0, 1] and all(p.method == "mm2-sync" and p.reread is not None for p in plans.values())
    bound = max(p.reread or 0 for p in plans.values())
    assert f"up to {bound} records per partition may be read again" in checkpoint.precision
    java = java_view(east, "us-west", [r.group]).translated[r.group]
    for p, plan in plans.items():  # never behind MM2's own checkpoint: a sync at least as recent as MM2's
        assert plan.upstream_offset == r.positions[p]
        assert plan.downstream_offset is not None and plan.downstream_offset >= java[(r.remote, p)]
    assert _run(failover, offsets.apply_step, {})[1]
    verify, done = _run(failover, offsets.verify_step, {})
    assert done and [row.committed for row in verify.rows] == [plans[0].downstream_offset, plans[1].downstream_offset]

    # Counted against the brokers: what the group reads in us-east from the applied offsets, against what it had
    # already read (below its committed offsets in us-west) and what it had left.
    source_values = values_from(west, r.topic, dict.fromkeys(range(PARTITIONS), 0))
    already = {p: values[: r.positions[p]] for p, values in source_values.items()}
    rest = {p: values[r.positions[p] :] for p, values in source_values.items()}
    read = read_rest(east, r.group, r.remote, PARTITIONS)
    for p, plan in plans.items():
        counted = exactness({p: already[p]}, {p: rest[p]}, {p: read[p]})
        assert counted.skipped == 0 and counted.reread <= (plan.reread or 0), (p, counted, plan)
        assert read[p][counted.reread :] == rest[p]
    assert exactness(already, rest, read).reread == sum(p.reread or 0 for p in plans.values()) > 0


def _warnings(failover: Failover) -> list[str]:
    checks, _ = steps.preflight_step(failover, {})
    return [c.code for c in checks.checks if c.status == Check.WARN]


def _run(failover: Failover, step: Any, inputs: dict[str, Any]) -> tuple[Any, bool]:
    """One step as the wizard's job runs it, its result stored with the failover (later steps read it)."""
    result, complete = step(failover, inputs)
    machine.store(failover, result.STEP, inputs, result, None, complete)
    failover.save()
    return result, complete

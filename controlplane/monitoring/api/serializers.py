"""Responses of the monitoring endpoints. The services build plain dicts; these describe them for the schema (and for
a reader of the API), field by field, so a field added to a service without one here is a visible gap."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from controlplane.monitoring.choices import Health
from controlplane.monitoring.models import FlowSample, PartitionLagSample


class FlowSampleSerializer(serializers.Serializer[dict[str, Any]]):
    """One point of a flow's history: a sample as the sampler took it, or a bucket of them merged."""

    at = serializers.DateTimeField(help_text="when the sample was taken (a bucket: its last sample)")
    records = serializers.IntegerField(help_text=FlowSample._meta.get_field("records").help_text)
    records_per_second = serializers.FloatField(allow_null=True)
    entering_per_second = serializers.FloatField(allow_null=True)
    lag = serializers.IntegerField(allow_null=True, help_text=FlowSample._meta.get_field("lag").help_text)
    latency_p99_ms = serializers.FloatField(allow_null=True)
    health = serializers.ChoiceField(choices=Health.choices)


class PartitionLagPointSerializer(serializers.ModelSerializer[PartitionLagSample]):
    class Meta:
        model = PartitionLagSample
        fields = ["at", "lag"]


class PartitionLagHistorySerializer(serializers.Serializer[dict[str, Any]]):
    """A source partition's sampled lag over the window. Partitions are sampled while they are among their flow's
    highest lag or while someone watches them (this request sets a watch), so a quiet partition's history starts
    when it was first asked for."""

    flow = serializers.IntegerField(help_text="the flow's id")
    topic = serializers.CharField(help_text="source topic")
    partition = serializers.IntegerField(help_text="source partition")
    minutes = serializers.IntegerField(help_text="the window")
    lag = serializers.IntegerField(allow_null=True, help_text="the lag the task last reported; null: no report")
    watched_until = serializers.DateTimeField(
        allow_null=True, help_text="sampled every tick until then; null: the flow has no report of this partition"
    )
    samples = PartitionLagPointSerializer(many=True, help_text="oldest first; empty: no data in the window")


class GraphNodeSerializer(serializers.Serializer[dict[str, Any]]):
    """A cluster on the replication graph, with what the sampler last read from it."""

    id = serializers.IntegerField(help_text="the cluster's id")
    alias = serializers.CharField(help_text="the cluster's alias")
    url = serializers.CharField(help_text="the cluster's page")
    reachable = serializers.BooleanField(allow_null=True, help_text="answered the last check; null: never checked")
    topic_count = serializers.IntegerField(allow_null=True, help_text="topics at the last check; null: unknown")
    error = serializers.CharField(allow_blank=True, help_text="why the last check or heartbeat read failed, or empty")


class GraphEdgeSerializer(serializers.Serializer[dict[str, Any]]):
    """A flow on the replication graph: its health and live figures, summed over its tasks."""

    id = serializers.IntegerField(help_text="the flow's id")
    name = serializers.CharField(help_text="the flow's name")
    url = serializers.CharField(help_text="the flow's page")
    source = serializers.CharField(help_text="source cluster alias")  # type: ignore[assignment]  # the API's name; a DRF field's own "source" attribute has it too
    target = serializers.CharField(help_text="target cluster alias")
    health = serializers.ChoiceField(choices=Health.choices, help_text="the edge's colour")
    paused = serializers.BooleanField(help_text="an operator paused the flow")
    records_per_second = serializers.FloatField(
        help_text="records/s the flow copies, from its partitions' positions over the last minute of samples"
    )
    entering_per_second = serializers.FloatField(
        help_text="of those, records/s of topics that originate at the source (not remote topics): entering here"
    )
    lag = serializers.IntegerField(
        allow_null=True,
        help_text="source records not yet replicated, every desired partition included (those of unplaced, stopped "
        "or paused tasks: source end offset minus the stored position); null: no data",
    )
    latency_p99_ms = serializers.FloatField(allow_null=True, help_text="worst partition's p99 replication latency")
    errors = serializers.ListField(child=serializers.CharField(), help_text="the first three errors, as worded")  # type: ignore[assignment]  # the API's name; a serializer's own "errors" has it too
    unplaced = serializers.IntegerField(help_text="tasks no live worker has a free slot for")
    unplaced_reason = serializers.CharField(allow_blank=True, help_text="the first unplaced task's reason, or empty")


class GraphHopSerializer(serializers.Serializer[dict[str, Any]]):
    """A remote-topic path seen in heartbeats with no flow between its two clusters (drawn dotted)."""

    source = serializers.CharField(help_text="upstream cluster alias the heartbeats come from")  # type: ignore[assignment]  # the API's name; a DRF field's own "source" attribute has it too
    target = serializers.CharField(help_text="cluster alias that hears them")
    hops = serializers.IntegerField(help_text="fewest flows the heartbeats crossed")


class CapacityTileSerializer(serializers.Serializer[dict[str, Any]]):
    """The live workers' replication slots."""

    slots = serializers.IntegerField(help_text="slots the live workers advertise")
    used = serializers.IntegerField(help_text="slots held by running tasks")
    starting = serializers.IntegerField(help_text="slots reserved by tasks dispatched and not running yet")
    free = serializers.IntegerField(help_text="slots a task can be dispatched to")
    workers = serializers.IntegerField(help_text="live workers")


class OldestCheckpointSerializer(serializers.Serializer[dict[str, Any]]):
    """The consumer group whose newest checkpoint is the oldest: how stale a failover's starting point would be.
    Idle groups (nothing committed on the source since their newest checkpoint) are not stale: only counted."""

    flow = serializers.CharField(allow_null=True, help_text="the flow's name; null: every group is idle")
    group = serializers.CharField(allow_null=True, help_text="consumer group; null: every group is idle")
    timestamp = serializers.IntegerField(
        allow_null=True, help_text="the group's newest checkpoint, ms since the epoch; null: every group is idle"
    )
    age_seconds = serializers.FloatField(
        allow_null=True, help_text="its age when the dashboard was built; null: every group is idle"
    )
    idle_groups = serializers.IntegerField(
        help_text="groups that committed nothing since their newest checkpoint: current, not stale"
    )


class OriginRateSerializer(serializers.Serializer[dict[str, Any]]):
    """Records/s entering replication at one cluster: its own topics, copied out by its flows."""

    cluster = serializers.CharField(help_text="the origin cluster's alias")
    records_per_second = serializers.FloatField(help_text="records/s of its own topics its flows copy")


class DashboardTilesSerializer(serializers.Serializer[dict[str, Any]]):
    """The summary tiles above the graph."""

    entering_per_second = serializers.FloatField(
        help_text="records/s entering replication: each record counted once, on the flow out of its origin cluster"
    )
    entering_by_origin = OriginRateSerializer(many=True, help_text="the same per origin cluster (source of a flow)")
    copied_per_second = serializers.FloatField(
        help_text="records/s copied by all flows: a record through two hops counts twice"
    )
    total_lag = serializers.IntegerField(
        allow_null=True, help_text="the edges' lag summed (the figure the lag alerts read); null: no flow has data"
    )
    flows = serializers.IntegerField(help_text="flows on the graph")
    unhealthy = serializers.IntegerField(help_text="flows starting, lagging or failing")
    unplaced_tasks = serializers.IntegerField(help_text="tasks no live worker has a free slot for")
    capacity = CapacityTileSerializer()
    oldest_checkpoint = OldestCheckpointSerializer(allow_null=True, help_text="null: no checkpoint observed yet")


class DashboardSerializer(serializers.Serializer[dict[str, Any]]):
    """The replication graph and its tiles, as ``GET /api/v1/dashboard/`` returns them."""

    at = serializers.DateTimeField(help_text="when the dashboard was built")
    nodes = GraphNodeSerializer(many=True, help_text="clusters")
    edges = GraphEdgeSerializer(many=True, help_text="flows")
    hops = GraphHopSerializer(many=True, help_text="remote-topic paths with no direct flow")
    tiles = DashboardTilesSerializer()


class FlowEdgesSerializer(serializers.Serializer[dict[str, Any]]):
    edges = GraphEdgeSerializer(many=True, help_text="the named flows that exist, by id")


class HistoryWindowSerializer(serializers.Serializer[dict[str, Any]]):
    """The window a chart's history covers: the last ``minutes``, or since to until."""

    minutes = serializers.IntegerField(allow_null=True, help_text="the window asked for; null for since and until")
    since = serializers.DateTimeField(help_text="the window's start")
    until = serializers.DateTimeField(help_text="the window's end")


class FlowHistorySerializer(HistoryWindowSerializer):
    """A flow's samples over the window, oldest first."""

    flow = serializers.IntegerField(help_text="the flow's id")
    bucket_seconds = serializers.IntegerField(
        help_text="0: one point per sampler tick; else the samples of each bucket of this many seconds merged into "
        "one point (rates averaged, lag and p99 at their highest), so a long window stays within 720 points"
    )
    samples = FlowSampleSerializer(many=True, help_text="one per sampler tick, or per bucket")


class TotalPointSerializer(serializers.Serializer[dict[str, Any]]):
    """All flows in one bucket: each flow's mean rate and highest lag in it, summed; null over no flow with a value."""

    at = serializers.DateTimeField(help_text="the bucket's newest sample")
    flows = serializers.IntegerField(help_text="the flows with a sample in the bucket, which the sums cover")
    records_per_second = serializers.FloatField(allow_null=True, help_text="records/s copied, every hop counted")
    entering_per_second = serializers.FloatField(
        allow_null=True, help_text="records/s entering replication (each cluster's own topics, counted once)"
    )
    lag = serializers.IntegerField(allow_null=True, help_text="source records not yet replicated, over all flows")


class TotalHistorySerializer(HistoryWindowSerializer):
    """All flows together over the window, oldest first: the dashboard's charts."""

    bucket_seconds = serializers.IntegerField(
        help_text="the width of each point's bucket: at least one sampler tick, a minute past an hour's window, and "
        "wide enough that the window stays within 720 points"
    )
    samples = TotalPointSerializer(many=True, help_text="one per bucket with any flow's sample")


class CheckpointFreshnessSerializer(serializers.Serializer[dict[str, Any]]):
    """How fresh one consumer group's checkpoints on the target cluster are."""

    timestamp = serializers.IntegerField(allow_null=True, help_text="the newest checkpoint, ms since the epoch")
    oldest = serializers.IntegerField(allow_null=True, help_text="the oldest of its partitions' latest checkpoints")
    partitions = serializers.IntegerField(help_text="partitions with a checkpoint")


class FlowCheckpointsSerializer(serializers.Serializer[dict[str, Any]]):
    """Checkpoint freshness per consumer group, as the sampler last read it from the target cluster."""

    flow = serializers.IntegerField(help_text="the flow's id")
    at = serializers.DateTimeField(allow_null=True, help_text="when they were read; null: not yet")
    error = serializers.CharField(allow_blank=True, help_text="why the last read failed, or empty")
    groups = serializers.DictField(child=CheckpointFreshnessSerializer(), help_text="consumer group -> freshness")

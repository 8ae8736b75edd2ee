"""What is known of the running flows over time and of the clusters: flow samples and the latest observations."""

from __future__ import annotations

from django.db import models

from controlplane.monitoring.choices import Health


class FlowSample(models.Model):
    """One point of a flow's time series, taken by the sampler from what its running tasks reported."""

    flow = models.ForeignKey("flows.Flow", on_delete=models.CASCADE, related_name="samples")
    at = models.DateTimeField(db_index=True)
    records = models.BigIntegerField(default=0, help_text="records replicated by the running tasks (cumulative)")
    records_per_second = models.FloatField(
        null=True,
        blank=True,
        help_text="records/s copied over the last minute of samples, from the partitions' positions; null: no earlier "
        "sample that recent (no data)",
    )
    lag = models.BigIntegerField(null=True, blank=True, help_text="source records not yet replicated")
    offsets = models.BigIntegerField(
        null=True, blank=True, help_text="the flow's data partitions' replicated positions summed (source offsets)"
    )
    origin_offsets = models.BigIntegerField(
        null=True,
        blank=True,
        help_text="the same over the topics that originate at the source (not remote topics): entering replication",
    )
    partitions = models.IntegerField(null=True, blank=True, help_text="the data partitions the sums cover")
    entering_per_second = models.FloatField(
        null=True, blank=True, help_text="records/s of topics that originate at the source; null: no data"
    )
    latency_p99_ms = models.FloatField(null=True, blank=True)
    health = models.CharField(max_length=16, choices=Health.choices)

    class Meta:
        ordering = ["at"]
        indexes = [models.Index(fields=["flow", "at"], name="flowsample_flow_at")]


class ClusterObservation(models.Model):
    """The latest look at one cluster: reachable or not, and the heartbeats that reached it (MirrorClient)."""

    cluster = models.OneToOneField("clusters.Cluster", on_delete=models.CASCADE, related_name="observation")
    at = models.DateTimeField()
    reachable = models.BooleanField(default=False)
    error = models.TextField(blank=True, default="")
    topic_count = models.IntegerField(null=True, blank=True)
    upstream_hops = models.JSONField(default=dict, help_text="upstream alias -> fewest hops, from heartbeat topics")
    heartbeats = models.JSONField(default=dict, help_text="heartbeat topic -> newest heartbeat timestamp (ms)")
    failures = models.PositiveIntegerField(default=0, help_text="probes failed in a row (0 while reachable)")
    next_probe_at = models.DateTimeField(
        null=True, blank=True, help_text="an unreachable cluster is not asked again before this (doubling back-off)"
    )


class FlowObservation(models.Model):
    """The latest checkpoints of a flow, per consumer group, read from ``<source>.checkpoints.internal``."""

    flow = models.OneToOneField("flows.Flow", on_delete=models.CASCADE, related_name="observation")
    at = models.DateTimeField()
    error = models.TextField(blank=True, default="")
    checkpoints = models.JSONField(default=dict, help_text="group -> {timestamp (ms), partitions}")
    # A running task reports its own lag; a paused, stopped or unplaced task's last report is frozen (or missing)
    # while the source grows.
    stopped_lag = models.BigIntegerField(
        null=True,
        blank=True,
        help_text="the partitions of the tasks in stopped_tasks: source end offsets minus the flow's stored "
        "positions; null when every task runs, or nothing could be read",
    )
    stopped_tasks = models.JSONField(
        default=list, help_text="the task ids stopped_lag covers: those holding no live lease when observed"
    )


class PartitionLagSample(models.Model):
    """One point of a source partition's lag, taken by the sampler for a bounded few partitions per tick (those
    someone is looking at and those with the highest lag; see ``services.partition_lag``)."""

    flow = models.ForeignKey("flows.Flow", on_delete=models.CASCADE, related_name="partition_lag_samples")
    topic = models.CharField(max_length=255)
    partition = models.PositiveIntegerField()
    at = models.DateTimeField(db_index=True)
    lag = models.BigIntegerField(help_text="source records of the partition not yet replicated")

    class Meta:
        ordering = ["at"]
        indexes = [models.Index(fields=["flow", "topic", "partition", "at"], name="partlag_flow_tp_at")]


class PartitionLagWatch(models.Model):
    """A partition someone opened the lag chart of: sampled every tick until ``until`` even when its lag is low."""

    flow = models.ForeignKey("flows.Flow", on_delete=models.CASCADE, related_name="partition_lag_watches")
    topic = models.CharField(max_length=255)
    partition = models.PositiveIntegerField()
    until = models.DateTimeField(db_index=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["flow", "topic", "partition"], name="unique_partition_lag_watch")
        ]


class BrokerHealth(models.Model):
    """The latest broker health of one cluster (``services.brokerhealth``): brokers, controller, partitions at risk.
    A null figure is no data, and ``error`` says why."""

    cluster = models.OneToOneField("clusters.Cluster", on_delete=models.CASCADE, related_name="broker_health")
    at = models.DateTimeField()
    error = models.TextField(blank=True, default="", help_text="why a figure is null, or how one was read")
    brokers = models.JSONField(default=list, help_text="the broker ids in the cluster's metadata")
    known_brokers = models.JSONField(
        default=list, help_text="every broker id seen since the cluster was last edited: those missing now are down"
    )
    controller_id = models.IntegerField(null=True, blank=True, help_text="the active controller (DescribeCluster)")
    partitions = models.IntegerField(null=True, blank=True)
    under_replicated = models.IntegerField(null=True, blank=True, help_text="partitions with ISR smaller than replicas")
    offline = models.IntegerField(null=True, blank=True, help_text="partitions without a live leader")
    under_min_isr = models.IntegerField(
        null=True, blank=True, help_text="partitions without a leader or with ISR below the topic's min.insync.replicas"
    )
    examples = models.JSONField(default=dict, help_text="figure -> the first few topic-partitions it counts")

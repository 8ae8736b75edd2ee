"""The MirrorMaker 2 properties the benchmark runs dedicated MM2 with (bench/replicators.py launches it).

Tuned for throughput as the MM2 and Connect documentation suggests for high-volume flows (bench/README.md, "How
MM2 is tuned", says why each key is there); `latency=True` keeps the producer's batching at Kafka's defaults for the
fixed-rate latency runs, where lingering 100 ms for a fuller batch would only add 100 ms to every record.
"""

from __future__ import annotations

from collections.abc import Mapping

from localkafka.mirrormaker2 import dedicated_properties

# The target's producer (the Connect worker's) and the source consumer (MirrorSourceTask's), per cluster alias.
THROUGHPUT_PRODUCER = {
    "batch.size": "327680",  # 320 KiB batches: 20x Kafka's 16 KiB default, fewer and fuller produce requests
    "linger.ms": "100",  # let a batch fill before it is sent
    "buffer.memory": "67108864",  # 64 MiB, so the fuller batches of every partition fit in the send buffer
}
THROUGHPUT_CONSUMER = {
    "fetch.max.bytes": "52428800",  # 50 MiB per fetch response (Kafka's default, written out)
    "max.partition.fetch.bytes": "1048576",  # 1 MiB per partition per fetch
    "max.poll.records": "2000",  # bigger polls: fewer SourceTask.poll() round trips per record
    "fetch.min.bytes": "65536",  # the source broker answers with at least 64 KiB once it has them
}
WORKER = {
    # Connect commits source offsets every 60 s by default; a flush of many outstanding records must not time out
    # at the 5 s default (the high-volume advice), or the offsets lag further behind and more are copied again.
    "offset.flush.interval.ms": "60000",
    "offset.flush.timeout.ms": "10000",
    # One worker: after a SIGKILL its successor takes the connectors over at once instead of waiting up to 5 min
    # for the dead member to come back (incremental cooperative rebalancing's default delay).
    "scheduled.rebalance.max.delay.ms": "0",
    "plugin.discovery": "service_load",
}


def mm2_bench_properties(
    source_alias: str,
    source: str,
    target_alias: str,
    target: str,
    topic: str,
    tasks: int,
    exactly_once: bool = False,
    latency: bool = False,
) -> dict[str, str]:
    """Dedicated MM2 copying `topic` from `source_alias` to `target_alias` with `tasks` tasks, MM2's own defaults
    for everything the benchmark does not tune (intervals, replication policy), one replica for what it creates."""
    flow = f"{source_alias}->{target_alias}"
    extra: dict[str, str] = {
        f"{flow}.topics": topic,
        # What MM2 logs at start-up itself: every plugin has a ServiceLoader manifest, so the default hybrid_warn
        # scan of the whole classpath (about 10 s of a core each time, once per herder) finds nothing more.
        "plugin.discovery": "service_load",
        "tasks.max": str(tasks),
        "replication.factor": "1",
        **{f"{name}.replication.factor": "1" for name in ("checkpoints.topic", "heartbeats.topic")},
        **{f"{name}.replication.factor": "1" for name in ("offset-syncs.topic", "offset.storage")},
        **{f"{name}.replication.factor": "1" for name in ("status.storage", "config.storage")},
        # Both herders' workers: the flow's (into the target) and the reverse heartbeats' (into the source).
        **_prefixed(f"{target_alias}.", WORKER),
        **_prefixed(f"{source_alias}.", WORKER),
    }
    if not latency:
        extra.update(_prefixed(f"{target_alias}.producer.", THROUGHPUT_PRODUCER))
        extra.update(_prefixed(f"{source_alias}.consumer.", THROUGHPUT_CONSUMER))
    if exactly_once:
        # MM2's documentation: set exactly.once.source.support=enabled for each target cluster written to
        # exactly once (dedicated mode, Kafka 3.5+); the worker's producer is then transactional on the target.
        extra[f"{target_alias}.exactly.once.source.support"] = "enabled"
    clusters = {source_alias: source, target_alias: target}
    return dedicated_properties(clusters, [(source_alias, target_alias)], extra, local_defaults=False)


def _prefixed(prefix: str, values: Mapping[str, str]) -> dict[str, str]:
    return {prefix + key: value for key, value in values.items()}

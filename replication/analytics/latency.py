"""Latency: replication-latency-ms and record-age-ms percentiles, and multi-hop end-to-end latency per path.

Pure DataFrame -> DataFrame transforms over facts (replication.facts.writer) and heartbeat arrivals
(replication.facts.heartbeats). Each fact is one sampled record, the last of its run, so percentiles are over
sampled records, with the same definition as the per-batch metrics the engine exports:

- replication_latency_ms = target ack time - record timestamp
- record_age_ms = consume time - record timestamp

Percentiles are nearest-rank (the smallest value with at least p of the values at or below it). They come from
KLL sketches (Apache DataSketches, k = SKETCH_K) built once per partition and minute and merged for every
coarser grouping, so the facts are read once: exact for groups of up to SKETCH_K facts, and beyond that within
about 0.2 % of rank (p99 is a value between p98.8 and p99.2).

End to end: record timestamps survive every hop, so a fact of flow b->c about topic `a.t` gives the latency of
path a->b->c (ack at c - creation at a); heartbeats give it from the heartbeat's own timestamp to its arrival.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

PERCENTILES = (0.5, 0.95, 0.99)
SKETCH_K = 2000
SERIES_POINTS = 120  # at most this many buckets per flow and path over a window: what a chart needs, no more
METRICS = ("replication_latency_ms", "record_age_ms")
PARTITION_KEYS = ("flow", "topic", "partition")
TOTALS = ["records", "bytes"]


def with_latencies(facts: DataFrame) -> DataFrame:
    """Facts with replication_latency_ms, record_age_ms and the minute of the ack."""
    return facts.select(
        *PARTITION_KEYS,
        "path",
        "count",
        "bytes",
        (F.col("acked_ms") - F.col("timestamp")).alias("replication_latency_ms"),
        (F.col("consumed_ms") - F.col("timestamp")).alias("record_age_ms"),
        F.timestamp_millis(F.col("acked_ms") - F.col("acked_ms") % 60_000).alias("minute"),
    )


def minute_sketches(latencies: DataFrame) -> DataFrame:
    """The one pass over the facts: per flow, topic, partition and minute, a sketch per metric and the totals.

    Only what must be read row by row is aggregated here: the number of facts and the maxima come out of the
    sketches (a KLL sketch counts its items and keeps its smallest and largest exactly).
    """
    sketches = [F.kll_sketch_agg_bigint(m, SKETCH_K).alias(f"{m}_sketch") for m in METRICS]
    return latencies.groupBy(*PARTITION_KEYS, "minute").agg(
        F.any_value("path").alias("path"),  # a function of flow and topic
        F.sum("count").alias("records"),
        F.sum("bytes").alias("bytes"),
        *sketches,
    )


def _quantiles(frame: DataFrame, keys: list[str], metrics: tuple[str, ...], extra: list[str]) -> DataFrame:
    """<metric>_sketch columns turned into <metric>_p50, _p95, _p99 and _max, and `facts` (the sketch's count)."""
    ranks = F.array(*[F.lit(p) for p in (*PERCENTILES, 1.0)])
    columns: list[Column | str] = [*keys, F.kll_sketch_get_n_bigint(f"{metrics[0]}_sketch").alias("facts"), *extra]
    for metric in metrics:
        values = F.kll_sketch_get_quantile_bigint(f"{metric}_sketch", ranks)
        columns += [values[i].alias(f"{metric}_p{round(p * 100)}") for i, p in enumerate(PERCENTILES)]
        columns.append(values[len(PERCENTILES)].alias(f"{metric}_max"))
    return frame.select(*columns)


def merge(sketches: DataFrame, keys: list[str]) -> DataFrame:
    """Sketches merged to a coarser grouping (minute -> partition -> flow or path), with their totals summed."""
    merged = [F.kll_merge_agg_bigint(f"{m}_sketch").alias(f"{m}_sketch") for m in METRICS]
    path = [] if "path" in keys else [F.any_value("path").alias("path")]
    return sketches.groupBy(*keys).agg(*path, *[F.sum(t).alias(t) for t in TOTALS], *merged)


def per_minute(minute_sketches: DataFrame) -> DataFrame:
    """One row per flow, topic, partition and minute (of the ack)."""
    return _quantiles(minute_sketches, [*PARTITION_KEYS, "minute"], METRICS, TOTALS)


def per_partition(partition_sketches: DataFrame) -> DataFrame:
    """One row per flow, topic and partition over the whole window, from merge(minute sketches, PARTITION_KEYS)."""
    return _quantiles(partition_sketches, list(PARTITION_KEYS), METRICS, TOTALS)


def per_flow(partition_sketches: DataFrame) -> DataFrame:
    return _quantiles(merge(partition_sketches, ["flow"]), ["flow"], METRICS, TOTALS)


def series_minutes(span_minutes: float) -> int:
    """The bucket of the series: one minute, or as many as keep a span to SERIES_POINTS buckets."""
    return max(1, -(-int(span_minutes) // SERIES_POINTS))


def series(minute_sketches: DataFrame, bucket_minutes: int) -> DataFrame:
    """Per flow, path and bucket of `bucket_minutes` (`at`, of the ack): replication latency over time."""
    size = bucket_minutes * 60
    start = F.unix_seconds("minute")
    bucketed = minute_sketches.withColumn("at", F.timestamp_seconds(start - start % size))
    keys = ["flow", "path", "at"]
    return _quantiles(merge(bucketed, keys), keys, ("replication_latency_ms",), [])


def _by_path(frame: DataFrame, kind: str) -> DataFrame:
    """(path, latency_ms_sketch) -> origin, destination, hops and latency stats (samples: the sketch's count)."""
    stats = _quantiles(frame, ["path"], ("latency_ms",), [])
    return stats.select(
        F.lit(kind).alias("derived_from"),
        F.col("path")[0].alias("origin"),
        F.element_at("path", -1).alias("destination"),
        (F.size("path") - 1).alias("hops"),
        F.array_join("path", "->").alias("path"),
        F.col("facts").alias("samples"),
        "latency_ms_p50",
        "latency_ms_p95",
        "latency_ms_p99",
        "latency_ms_max",
    )


def end_to_end_from_records(partition_sketches: DataFrame) -> DataFrame:
    """Per path of the replicated records: ack at the last cluster minus creation at the origin."""
    merged = merge(partition_sketches, ["path"]).select(
        F.split("path", "->").alias("path"), F.col("replication_latency_ms_sketch").alias("latency_ms_sketch")
    )
    return _by_path(merged, "records")


def end_to_end_from_heartbeats(arrivals: DataFrame) -> DataFrame:
    """Per path heartbeats travelled (more than one cluster): arrival minus the heartbeat's timestamp.

    Only the heartbeats of the path's first flow count: the ones it writes into its source, keyed with the path's
    first hop as their source and its origin as their target (MM2's heartbeat connector of the reverse pair). A
    cluster's heartbeats topic holds every flow's heartbeats into it, and a flow started later copies the backlog
    of the others' at once: hours-old heartbeats arriving now are no measure of its latency (they still prove the
    link alive, in the topology report). A reverse flow writes the same key: one started long before this one had
    its backlog copied too, so a window should start once both run. The arrival is exact where the topic is
    stamped by its broker (LogAppendTime, as Mirrorplane creates every heartbeats topic) and an upper bound where
    the collector had to stamp it."""
    latency = F.col("arrival_ms") - F.col("timestamp")
    grouped = (
        arrivals.where(
            (F.size("path") > 1) & (F.col("source") == F.col("path")[1]) & (F.col("target") == F.col("path")[0])
        )
        .groupBy("path")
        .agg(F.kll_sketch_agg_bigint(latency, SKETCH_K).alias("latency_ms_sketch"))
    )
    return _by_path(grouped, "heartbeats")


def end_to_end(partition_sketches: DataFrame, arrivals: DataFrame) -> DataFrame:
    return end_to_end_from_records(partition_sketches).unionByName(end_to_end_from_heartbeats(arrivals))

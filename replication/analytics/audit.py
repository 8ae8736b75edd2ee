"""Audit (uReplicator's Chaperone idea): per tumbling window of record time and topic-partition, count records at
the source and at the target, and flag windows with loss together with the offsets involved.

Each fact covers upstream offsets first_offset..last_offset of one source partition (replication.facts.writer). Ordered
by offset, the facts of a partition must tile the log:

- missing: offsets after everything covered so far and before where the consumer next read from
  (`fetched_from`). Offsets between fetched_from and first_offset were skipped by the consumer itself
  (transaction markers, compaction, dropped records), which is not loss.
- duplicates: records of a fact whose offsets an earlier fact already covered (replicated twice, e.g. after a
  restart at least once).
- target records: what the target acknowledged, duplicates included; source records: what the source held,
  each once: target - duplicates + missing. Completeness is (source - missing) / source, and null (unknown,
  not 100 %) when there are no source records.
- late: records acknowledged more than `late_after_ms` after the end of their window.

Missing offsets are counted in the window of the fact that follows the gap (they have no timestamp of their own).
A fact's records are counted in the window of its timestamp (its last record's). The job counts the facts
acknowledged in [since, until), grouped by record time; selecting by record time instead would cut holes into a
partition's offsets wherever timestamps are out of order, and report them as loss. Facts acknowledged in a
lookback before `since` are read too, so that what they covered is neither missing nor new (replays count as
duplicates). A gap older than the lookback is not seen, and a window whose records were acknowledged across two
job windows is split between them.
"""

from __future__ import annotations

from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F

KEYS = ("flow", "topic", "partition")


def coverage(facts: DataFrame) -> DataFrame:
    """Each fact with the highest offset covered before it, and its missing and duplicated offset ranges."""
    ordered = Window.partitionBy(*KEYS).orderBy("first_offset", "acked_ms", "last_offset")
    before = F.max("last_offset").over(ordered.rowsBetween(Window.unboundedPreceding, -1))
    start = F.least("fetched_from", "first_offset")
    overlap_to = F.least("last_offset", "covered_before")  # least() skips nulls: guarded below
    first_fact = F.col("covered_before").isNull()
    missing = F.greatest(F.lit(0), start - F.col("covered_before") - 1)
    duplicates = F.least(F.col("count").cast("long"), F.greatest(F.lit(0), overlap_to - F.col("first_offset") + 1))
    return (
        facts.withColumn("covered_before", before)
        .withColumn("missing", F.when(first_fact, 0).otherwise(missing))
        .withColumn("missing_from", F.col("covered_before") + 1)
        .withColumn("missing_to", start - 1)
        .withColumn("duplicates", F.when(first_fact, 0).otherwise(duplicates))
        .withColumn("duplicates_to", overlap_to)
    )


def windows(facts: DataFrame, window_minutes: int, late_after_ms: int, since_ms: int | None = None) -> DataFrame:
    """One row per flow, topic, partition and window: source, target, missing, duplicates, late, completeness.

    Facts acknowledged before since_ms (the lookback) only tell what was covered already; they are not counted.
    """
    size_ms = window_minutes * 60_000
    covered = coverage(facts)
    if since_ms is not None:
        covered = covered.where(F.col("acked_ms") >= since_ms)
    covered = covered.withColumn("window_ms", F.col("timestamp") - F.col("timestamp") % size_ms)
    late = F.col("acked_ms") >= F.col("window_ms") + size_ms + late_after_ms
    missing_range = F.when(
        F.col("missing") > 0, F.struct(F.col("missing_from").alias("first"), F.col("missing_to").alias("last"))
    )
    duplicate_range = F.when(
        F.col("duplicates") > 0, F.struct(F.col("first_offset").alias("first"), F.col("duplicates_to").alias("last"))
    )
    grouped = covered.groupBy(*KEYS, "window_ms").agg(
        F.sum("count").alias("target_records"),
        F.sum("missing").alias("missing"),
        F.sum("duplicates").alias("duplicates"),
        F.sum(F.when(late, F.col("count")).otherwise(0)).alias("late"),
        F.array_sort(F.collect_list(missing_range)).alias("missing_offsets"),
        F.array_sort(F.collect_list(duplicate_range)).alias("duplicate_offsets"),
    )
    source = F.col("target_records") - F.col("duplicates") + F.col("missing")
    return grouped.select(
        *KEYS,
        F.timestamp_millis("window_ms").alias("window_start"),
        F.timestamp_millis(F.col("window_ms") + size_ms).alias("window_end"),
        source.alias("source_records"),
        "target_records",
        "missing",
        "duplicates",
        "late",
        # null, never 100 %, for a window without source records (facts of count 0 only)
        F.when(source > 0, F.round((source - F.col("missing")) * 100.0 / source, 3)).alias("completeness_pct"),
        (F.col("missing") > 0).alias("loss"),
        "missing_offsets",
        "duplicate_offsets",
    )


def totals(audited: DataFrame) -> DataFrame:
    """One row: sums over every window, and how many windows had loss."""
    return audited.agg(
        F.count(F.lit(1)).alias("windows"),
        F.sum(F.col("loss").cast("int")).alias("windows_with_loss"),
        *[F.sum(c).alias(c) for c in ("source_records", "target_records", "missing", "duplicates", "late")],
    )


def per_flow(audited: DataFrame) -> DataFrame:
    """One row per flow and window, summed over its partitions: complete (source - missing), missing, duplicates."""
    sums = [F.sum(c).alias(c) for c in ("source_records", "target_records", "missing", "duplicates", "late")]
    grouped = audited.groupBy("flow", "window_start", "window_end").agg(*sums)
    return grouped.withColumn("complete", F.col("source_records") - F.col("missing"))

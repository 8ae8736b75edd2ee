"""Topology: clusters as nodes, flows as edges, from heartbeat arrivals and the configured flows.

An arrival's path (origin first, the cluster it was found in last, see replication.facts.heartbeats) proves every
link along it was alive at arrival time. From the paths:

- hops: for each origin and destination, the fewest hops any heartbeat took (MM2's replicationHops);
- diamonds: an origin reaching a destination by two or more paths, so its data arrives there more than once;
- links: every configured or observed source->target pair, flagged `dead` when its last heartbeat is older than
  `dead_after` heartbeat intervals at the end of the window, `silent` when configured but no heartbeat crossed it,
  `unconfigured` when heartbeats crossed it but no flow is configured;
- cycles: the simple cycles of the graph of configured and observed links.
"""

from __future__ import annotations

from collections.abc import Iterable

from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import ArrayType, IntegerType, StringType, StructField, StructType

DEFAULT_HEARTBEAT_INTERVAL_S = 1.0  # MM2's emit.heartbeats.interval.seconds
MAX_CYCLES = 1000


def arrival_paths(arrivals: DataFrame) -> DataFrame:
    """One row per distinct path heartbeats travelled: origin, destination, hops, arrivals, last arrival."""
    return (
        arrivals.where(F.size("path") > 1)
        .groupBy("path")
        .agg(F.count(F.lit(1)).alias("arrivals"), F.max("arrival_ms").alias("last_arrival_ms"))
        .select(
            F.col("path")[0].alias("origin"),
            F.element_at("path", -1).alias("destination"),
            (F.size("path") - 1).alias("hops"),
            F.array_join("path", "->").alias("path"),
            "arrivals",
            "last_arrival_ms",
        )
    )


def hops(paths: DataFrame) -> DataFrame:
    """The reachability matrix: fewest hops from each origin to each destination it reaches."""
    return paths.groupBy("origin", "destination").agg(F.min("hops").alias("hops"), F.count(F.lit(1)).alias("paths"))


def diamonds(paths: DataFrame) -> DataFrame:
    """Origins that reach a destination by more than one path, with the paths (sorted)."""
    grouped = paths.groupBy("origin", "destination").agg(F.array_sort(F.collect_set("path")).alias("paths"))
    return grouped.where(F.size("paths") > 1)


def observed_links(arrivals: DataFrame) -> DataFrame:
    """Each consecutive pair of clusters on any heartbeat's path: heartbeats across it and the last arrival."""
    pairs = F.arrays_zip(
        F.slice("path", 1, F.size("path") - 1).alias("source"), F.slice("path", 2, F.size("path") - 1).alias("target")
    )
    exploded = arrivals.where(F.size("path") > 1).select(F.explode(pairs).alias("link"), "arrival_ms")
    return exploded.groupBy(F.col("link.source").alias("source"), F.col("link.target").alias("target")).agg(
        F.count(F.lit(1)).alias("heartbeats"), F.max("arrival_ms").alias("last_heartbeat_ms")
    )


def links(observed: DataFrame, flows: DataFrame, until_ms: int, dead_after: float) -> DataFrame:
    """Configured and observed links, with configured/observed/dead/silent/unconfigured flags."""
    configured = flows.select(
        "source", "target", F.coalesce("heartbeat_interval_s", F.lit(DEFAULT_HEARTBEAT_INTERVAL_S)).alias("interval_s")
    ).withColumn("configured", F.lit(True))
    joined = observed.withColumn("observed", F.lit(True)).join(configured, ["source", "target"], "full_outer")
    interval = F.coalesce("interval_s", F.lit(DEFAULT_HEARTBEAT_INTERVAL_S))
    is_configured, is_observed = F.coalesce("configured", F.lit(False)), F.coalesce("observed", F.lit(False))
    stale = F.lit(until_ms) - F.col("last_heartbeat_ms") > interval * 1000 * dead_after
    return joined.select(
        F.concat_ws("->", "source", "target").alias("flow"),
        "source",
        "target",
        is_configured.alias("configured"),
        is_observed.alias("observed"),
        F.coalesce("heartbeats", F.lit(0)).alias("heartbeats"),
        "last_heartbeat_ms",
        interval.alias("interval_s"),
        (is_observed & F.coalesce(stale, F.lit(False))).alias("dead"),
        (is_configured & ~is_observed).alias("silent"),
        (is_observed & ~is_configured).alias("unconfigured"),
    )


def nodes(links_frame: DataFrame, arrivals: DataFrame) -> DataFrame:
    aliases = links_frame.select(F.col("source").alias("cluster")).union(links_frame.select("target"))
    found = arrivals.select(F.explode("path").alias("cluster")).union(arrivals.select("cluster"))
    return aliases.union(found).distinct()


def cycles(links_frame: DataFrame) -> DataFrame:
    """The simple cycles among configured and observed links (the graph is tiny: computed on the driver)."""
    edges = [(r.source, r.target) for r in links_frame.select("source", "target").collect()]
    rows = [(cycle, len(cycle)) for cycle in simple_cycles(edges)]
    schema = StructType([StructField("cycle", ArrayType(StringType())), StructField("length", IntegerType())])
    return links_frame.sparkSession.createDataFrame(rows, schema)


def simple_cycles(edges: Iterable[tuple[str, str]]) -> list[list[str]]:
    """Every simple cycle once, starting at its smallest alias: [a, b] is a->b->a."""
    graph: dict[str, set[str]] = {}
    for source, target in edges:
        graph.setdefault(source, set()).add(target)
    found: list[list[str]] = []
    for start in sorted(graph):
        stack = [(start, [start])]
        while stack and len(found) < MAX_CYCLES:
            node, path = stack.pop()
            for nxt in sorted(graph.get(node, ()), reverse=True):
                if nxt == start:
                    found.append(path)
                elif nxt > start and nxt not in path:
                    stack.append((nxt, [*path, nxt]))
    return sorted(found)

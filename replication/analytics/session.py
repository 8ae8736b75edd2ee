"""The SparkSession of an analytics job: the given master, else spark-submit's, else local[*]."""

from __future__ import annotations

import os

from pyspark.sql import SparkSession

APP_NAME = "mirrorplane-analytics"
# On one machine the defaults (200 shuffle partitions, the web UI) cost more than the work on small windows.
LOCAL_SETTINGS = {
    "spark.sql.shuffle.partitions": "4",
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.driver.memory": "2g",
    # Sketch aggregations (latency) keep one sketch per group in a hash map; Spark's default falls back to
    # sorting every row once a task holds 128 groups, which triples the latency job. 16k groups of two
    # sketches stay within a few hundred MB.
    "spark.sql.objectHashAggregate.sortBased.fallbackThreshold": "16384",
    # A local job lives for seconds: the C2 compiler and parallel GC threads cost more CPU than they win back
    # (about 4 CPU-seconds of a 10M-fact latency job on 2 cores).
    "spark.driver.extraJavaOptions": "-XX:+UseSerialGC -XX:TieredStopAtLevel=1",
}


def build_session(master: str | None = None, app_name: str = APP_NAME) -> SparkSession:
    """A session in UTC (minutes, windows and lake dates are UTC), with small-machine settings when local.

    Under spark-submit (which starts the JVM and sets PYSPARK_GATEWAY_PORT) the master and settings come from
    spark-submit unless `master` is given.
    """
    builder = SparkSession.builder.appName(app_name).config("spark.sql.session.timeZone", "UTC")
    if master is None and "PYSPARK_GATEWAY_PORT" not in os.environ:
        master = "local[*]"
    if master is not None:
        builder = builder.master(master)
    if master is not None and master.startswith("local"):
        for key, value in LOCAL_SETTINGS.items():
            builder = builder.config(key, value)
    return builder.getOrCreate()

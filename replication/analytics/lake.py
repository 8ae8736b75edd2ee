"""Extract and load for the analytics jobs: the facts lake in, a JSON summary and Parquet detail out.

Paths are Hadoop URIs (a local directory, file://, s3a://, hdfs://): Spark reads and writes them, and the
summary goes through Hadoop's FileSystem so it lands wherever the detail does.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import (
    ArrayType,
    DoubleType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
)

log = logging.getLogger(__name__)
_PARTITIONS = [StructField("date", StringType()), StructField("hour", StringType())]


def _schema(*fields: tuple[str, Any]) -> StructType:
    return StructType([StructField(name, kind) for name, kind in fields])


# Mirrors replication.facts.writer.FACTS_SCHEMA and replication.facts.heartbeats.HEARTBEATS_SCHEMA, plus the
# directory partitions (date, hour and flow or cluster).
FACTS = _schema(
    ("source", StringType()),
    ("target", StringType()),
    ("task", IntegerType()),
    ("topic", StringType()),
    ("partition", IntegerType()),
    ("remote_topic", StringType()),
    ("path", StringType()),
    ("fetched_from", LongType()),
    ("first_offset", LongType()),
    ("last_offset", LongType()),
    ("downstream_offset", LongType()),
    ("count", IntegerType()),
    ("bytes", LongType()),
    ("first_timestamp", LongType()),
    ("timestamp", LongType()),
    ("consumed_ms", LongType()),
    ("acked_ms", LongType()),
    ("date", StringType()),
    ("hour", StringType()),
    ("flow", StringType()),
)
HEARTBEATS = _schema(
    ("topic", StringType()),
    ("partition", IntegerType()),
    ("offset", LongType()),
    ("source", StringType()),
    ("target", StringType()),
    ("path", ArrayType(StringType())),
    ("timestamp", LongType()),
    ("arrival_ms", LongType()),
    ("arrival_kind", StringType()),
    ("date", StringType()),
    ("hour", StringType()),
    ("cluster", StringType()),
)
FLOWS = _schema(
    ("flow", StringType()), ("source", StringType()), ("target", StringType()), ("heartbeat_interval_s", DoubleType())
)


def epoch_ms(moment: datetime | None) -> int | None:
    return None if moment is None else int(moment.timestamp() * 1000)


def _hadoop_path(spark: SparkSession, uri: str) -> tuple[Any, Any]:
    """A Hadoop Path and its FileSystem (so local directories, s3a:// and hdfs:// all work)."""
    jvm: Any = spark.sparkContext._jvm
    path = jvm.org.apache.hadoop.fs.Path(uri)
    return path, path.getFileSystem(spark.sparkContext._jsc.hadoopConfiguration())


def _exists(spark: SparkSession, uri: str) -> bool:
    path, fs = _hadoop_path(spark, uri)
    return bool(fs.exists(path))


def read_table(
    spark: SparkSession,
    lake: str,
    table: str,
    schema: StructType,
    column: str,
    since: datetime | None,
    until: datetime | None,
) -> DataFrame:
    """Rows of a lake table whose `column` (epoch ms) lies in [since, until); an empty frame if there is none.

    Directories are pruned by date with a day of slack either side: they are partitioned by write time, which
    can differ from `column` (records acknowledged after midnight, clocks apart).
    """
    uri = f"{lake.rstrip('/')}/{table}"
    if not _exists(spark, uri):
        log.info("%s: no %s table yet", lake, table)
        return spark.createDataFrame([], schema)
    frame = spark.read.schema(schema).option("basePath", uri).parquet(uri)
    return frame.where(_window(frame, column, since, until))


def _window(frame: DataFrame, column: str, since: datetime | None, until: datetime | None) -> Column:
    condition = F.lit(True)
    if since is not None:
        condition &= (F.col(column) >= F.lit(epoch_ms(since))) & (F.col("date") >= _day(since, -1))
    if until is not None:
        condition &= (F.col(column) < F.lit(epoch_ms(until))) & (F.col("date") <= _day(until, 1))
    return condition


def _day(moment: datetime, shift: int) -> str:
    return (moment + timedelta(days=shift)).strftime("%Y-%m-%d")


def read_facts(spark: SparkSession, lake: str, since: datetime | None, until: datetime | None) -> DataFrame:
    """Facts acknowledged in [since, until): every job selects by when the target had the records."""
    return read_table(spark, lake, "facts", FACTS, "acked_ms", since, until)


def read_heartbeats(spark: SparkSession, lake: str, since: datetime | None, until: datetime | None) -> DataFrame:
    return read_table(spark, lake, "heartbeats", HEARTBEATS, "arrival_ms", since, until)


def read_flows(spark: SparkSession, lake: str, names: Sequence[str] | None) -> DataFrame:
    """Configured flows: the given `source->target` names, else those registered in the lake by the writers."""
    if names is not None:
        rows = [(n, *n.split("->", 1), None) for n in names]
        return spark.createDataFrame(rows, FLOWS)
    uri = f"{lake.rstrip('/')}/flows"
    if not _exists(spark, uri):
        return spark.createDataFrame([], FLOWS)
    return spark.read.schema(FLOWS).json(uri)


def write_detail(frames: dict[str, DataFrame], out: str) -> None:
    """Each frame as Parquet under out/<name>."""
    for name, frame in frames.items():
        frame.write.mode("overwrite").parquet(f"{out.rstrip('/')}/{name}")
        log.info("wrote %s/%s", out.rstrip("/"), name)


def write_summary(spark: SparkSession, out: str, summary: dict[str, Any]) -> None:
    path, fs = _hadoop_path(spark, f"{out.rstrip('/')}/summary.json")
    stream = fs.create(path, True)
    try:
        stream.write(bytearray(json.dumps(summary, indent=2, sort_keys=True, default=str).encode()))
    finally:
        stream.close()

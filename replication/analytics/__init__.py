"""Mirrorplane analytics on PySpark: latency, topology and audit reports over the replication facts lake.

Pure DataFrame -> DataFrame transforms (latency, topology, audit) with thin extract/load (lake, jobs). The facts
themselves are written by replication.facts.writer and replication.facts.heartbeats, which never import Spark.
"""

from __future__ import annotations

from replication.analytics.jobs import JOBS, JobOptions, run_job

__all__ = ["JOBS", "JobOptions", "run_job"]

"""Mirrorplane analytics on PySpark: latency, topology and audit reports over the replication facts lake.

Pure DataFrame -> DataFrame transforms (latency, topology, audit) with thin extract/load (lake, jobs). The facts
themselves are written by replication.facts.writer and replication.facts.heartbeats, which never import Spark.
`jobs.run_job` runs a job; `options` declares each job's options and needs no Spark, so a process that only checks
a job's options (the control plane's web server) never loads PySpark.
"""

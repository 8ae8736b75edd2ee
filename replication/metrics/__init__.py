"""Replication metrics: the per-process registry, windowed distributions, and the Prometheus exposition."""

"""Mirrorplane's data plane: Kafka replication with MirrorMaker 2 semantics, free of Django."""

from __future__ import annotations

__version__ = "0.1.0"

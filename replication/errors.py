"""Errors that stop a replication task rather than risk data."""

from __future__ import annotations


class ReplicationError(RuntimeError):
    """The task cannot go on without risking data: a send failed, or the producer was fenced."""

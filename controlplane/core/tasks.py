"""Celery tasks of the core app."""

from __future__ import annotations

from celery import shared_task


@shared_task
def ping() -> str:
    """Proves a worker is consuming from the broker."""
    return "pong"

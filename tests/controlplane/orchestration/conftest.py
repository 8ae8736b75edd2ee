from __future__ import annotations

from tests.support.celery import celery_env, celery_processes

__all__ = ["celery_env", "celery_processes"]  # fixtures: a real worker and beat for the scale test

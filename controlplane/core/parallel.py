"""Slow reads of several clusters side by side, each bounded by one deadline: one cluster that hangs must not hold
up the others, nor hold the caller past its deadline.

The calls run in threads and should do network I/O only; the caller writes what they return to the database. A
call that uses the database anyway gets the thread's own connection, closed when the call ends.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from concurrent.futures import FIRST_EXCEPTION, Future, ThreadPoolExecutor, wait
from typing import TypeVar

from django.db import connections

K = TypeVar("K")
R = TypeVar("R")
MAX_THREADS = 8


class Overdue(TimeoutError):
    """The call had not returned at the deadline (it may still be running: its own timeouts end it)."""


def each_within(calls: Mapping[K, Callable[[], R]], seconds: float) -> dict[K, R | BaseException]:
    """Run every call at once (at most MAX_THREADS at a time) and return, within ``seconds``, each one's result or
    the exception it raised, or ``Overdue`` for a call still running then. Never raises for a call's failure."""
    if not calls:
        return {}
    deadline = time.monotonic() + seconds
    pool = ThreadPoolExecutor(max_workers=min(MAX_THREADS, len(calls)), thread_name_prefix="cluster-read")
    try:
        futures: dict[K, Future[R]] = {key: pool.submit(_closing, call) for key, call in calls.items()}
        pending = set(futures.values())
        while pending and (left := deadline - time.monotonic()) > 0:
            _, pending = wait(pending, timeout=left, return_when=FIRST_EXCEPTION)
    finally:
        pool.shutdown(wait=False, cancel_futures=True)  # an overdue call ends on its own; nobody waits for it
    outcomes: dict[K, R | BaseException] = {}
    for key, future in futures.items():
        if future.cancelled():
            outcomes[key] = Overdue(f"not started within {seconds:g} s")
        elif not future.done():
            outcomes[key] = Overdue(f"no answer within {seconds:g} s")
        else:
            error = future.exception()
            outcomes[key] = error if error is not None else future.result()
    return outcomes


def _closing(call: Callable[[], R]) -> R:
    try:
        return call()
    finally:
        connections.close_all()  # this thread's connections only

"""A child process that must not outlive its parent: Linux's parent-death signal (prctl PR_SET_PDEATHSIG).

A parent that dies by SIGKILL runs no clean-up, so its children must ask the kernel themselves: without this, a
runner's or a worker's task processes would live on and replicate as duplicates. Elsewhere than on Linux it does
nothing.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys

PR_SET_PDEATHSIG = 1


def _libc() -> ctypes.CDLL | None:
    """Loaded once, at import: a preexec_fn runs between fork and exec, where loading a library is not safe."""
    if not sys.platform.startswith("linux"):
        return None
    with contextlib.suppress(OSError):
        return ctypes.CDLL(None, use_errno=True)
    return None


_LIBC = _libc()


def die_with_parent(signum: signal.Signals, parent: int | None = None) -> None:
    """Have the kernel send signum to this process when its parent dies, however it dies.

    `parent` is the parent's pid as the parent saw it, for a child set up before exec (a preexec_fn): if the
    parent died before the request took effect, the child exits at once instead of living on unwatched.
    """
    if _LIBC is None:
        return
    _LIBC.prctl(PR_SET_PDEATHSIG, int(signum))
    if parent is not None and os.getppid() != parent:
        os._exit(1)

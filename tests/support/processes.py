"""Stopping the servers the tests start (slapd, the OIDC provider): SIGTERM, then SIGKILL past a deadline."""

from __future__ import annotations

import subprocess


def stop(process: subprocess.Popen[bytes] | subprocess.Popen[str] | None, timeout: float = 10.0) -> None:
    if process is None:
        return
    process.terminate()
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()

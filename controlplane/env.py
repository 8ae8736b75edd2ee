"""Typed readers for the environment variables that configure Mirrorplane.

Every reader takes the variable name and a default. An unset or empty variable yields the default, so a
docker ``.env`` file can list a variable with no value. A value that is set but malformed raises
``ImproperlyConfigured`` naming the variable, so a bad deployment stops at start-up instead of later.
"""

from __future__ import annotations

import os
from collections.abc import Collection, Sequence
from pathlib import Path
from typing import overload

from django.core.exceptions import ImproperlyConfigured

_TRUE = frozenset({"true", "1", "yes", "on"})
_FALSE = frozenset({"false", "0", "no", "off"})


def _raw(name: str) -> str | None:
    value = os.environ.get(name, "").strip()
    return value or None


def _malformed(name: str, expected: str, value: str) -> ImproperlyConfigured:
    return ImproperlyConfigured(f"{name}: expected {expected}, got {value!r}")


def env_str(name: str, default: str) -> str:
    value = _raw(name)
    return default if value is None else value


def env_bool(name: str, default: bool) -> bool:
    value = _raw(name)
    if value is None:
        return default
    if value.lower() in _TRUE:
        return True
    if value.lower() in _FALSE:
        return False
    raise _malformed(name, "a boolean (true/false/1/0/yes/no)", value)


def env_int(name: str, default: int) -> int:
    value = _raw(name)
    if value is None:
        return default
    try:
        return int(value)
    except ValueError:
        raise _malformed(name, "an integer", value) from None


def env_positive_int(name: str, default: int) -> int:
    value = env_int(name, default)
    if value < 1:
        raise _malformed(name, "a positive integer", str(value))
    return value


def env_list(name: str, default: Sequence[str]) -> list[str]:
    """A comma-separated list; blanks around items and empty items are dropped."""
    value = _raw(name)
    if value is None:
        return list(default)
    return [item.strip() for item in value.split(",") if item.strip()]


def env_choice(name: str, default: str, choices: Collection[str]) -> str:
    """One of ``choices``, matched case-insensitively and returned as spelled in ``choices``."""
    value = env_str(name, default)
    canonical = {choice.lower(): choice for choice in choices}
    if value.lower() not in canonical:
        raise _malformed(name, f"one of {', '.join(sorted(choices))}", value)
    return canonical[value.lower()]


@overload
def env_secret(name: str, default: str) -> str: ...
@overload
def env_secret(name: str, default: None = None) -> str | None: ...
def env_secret(name: str, default: str | None = None) -> str | None:
    """A secret given either inline in ``NAME`` or as the path of a file in ``NAME_FILE``.

    The file form keeps secrets out of the process environment (docker/Kubernetes secrets).
    A trailing newline in the file is ignored.
    """
    file_name = f"{name}_FILE"
    path = _raw(file_name)
    inline = _raw(name)
    if path is not None and inline is not None:
        raise ImproperlyConfigured(f"{name}: set either {name} or {file_name}, not both")
    if path is None:
        return default if inline is None else inline
    try:
        secret = Path(path).read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError) as exc:
        raise ImproperlyConfigured(f"{file_name}: cannot read secret from {path!r}: {exc}") from None
    if not secret:
        raise ImproperlyConfigured(f"{file_name}: the file {path!r} is empty")
    return secret

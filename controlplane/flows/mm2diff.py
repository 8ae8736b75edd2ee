"""What an MM2 import does to each cluster and flow: created, changed (each property, old -> new) or unchanged.

Properties are named as a properties file names them (``bootstrap.servers``, ``tasks.max``, ``producer.linger.ms``).
A credential's value is never shown: ``(set)`` when there is one, ``(changed)`` when the import replaces it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from replication.config.mm2properties import is_secret

CREATED, CHANGED, UNCHANGED = "created", "changed", "unchanged"
OUTCOMES = (CREATED, CHANGED, UNCHANGED)
SET, REPLACED = "(set)", "(changed)"


@dataclass
class Item:
    """One cluster or flow of the file, and what the import does to it."""

    kind: str  # "cluster" or "flow"
    name: str  # the alias, or the flow's source->target
    outcome: str
    changes: list[dict[str, Any]] = field(default_factory=list)  # {"property", "old", "new"}
    notes: list[str] = field(default_factory=list)


def changes(
    old: Mapping[str, Any] | None, new: Mapping[str, Any], name_of: Callable[[str], str]
) -> list[dict[str, Any]]:
    """Each field of ``new`` whose value differs from ``old``'s (every one, when ``old`` is None: a new row), as
    ``{"property", "old", "new"}``; a map field key by key (``producer.linger.ms``); credentials masked."""
    found: list[dict[str, Any]] = []
    for name, value in new.items():
        before = None if old is None else old.get(name)
        if isinstance(value, Mapping):
            keys = sorted(set(before or {}) | set(value))
            pairs = [(f"{name_of(name)}.{k}", (before or {}).get(k), value.get(k)) for k in keys]
        else:
            pairs = [(name_of(name), before, value)]
        found += [shown(prop, was, now) for prop, was, now in pairs if was != now]
    return found


def shown(prop: str, old: Any, new: Any) -> dict[str, Any]:
    """One change; a credential's values are masked (and never compared: the caller decides that it changes)."""
    if is_secret(prop):
        old, new = (SET if old else None), (None if not new else REPLACED if old else SET)
    return {"property": prop, "old": old, "new": new}


def counts(items: list[Item]) -> dict[str, dict[str, int]]:
    """How many clusters and flows each outcome has: {"clusters": {"created": 1, ...}, "flows": {...}}."""
    return {
        f"{kind}s": {outcome: sum(1 for i in items if (i.kind, i.outcome) == (kind, outcome)) for outcome in OUTCOMES}
        for kind in ("cluster", "flow")
    }


def digest(text: str, items: list[Item]) -> str:
    """The preview's fingerprint: the file and what it would do. Applying with it refuses anything else."""
    plain = json.dumps({"file": text, "items": [asdict(item) for item in items]}, sort_keys=True, default=str)
    return hashlib.sha256(plain.encode()).hexdigest()

"""Schemathesis hooks shared by the in-process and the live fuzz tests: steer fuzzed ids and aliases to real rows."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import schemathesis

Hook = Callable[[schemathesis.HookContext, Any], Any]


def often_an_existing_id(ids: Sequence[int]) -> Hook:
    """Random ids almost never exist; send three in four to a seeded row so operations get past the 404."""

    def map_path_parameters(context: schemathesis.HookContext, path_parameters: dict[str, Any] | None) -> Any:
        value = (path_parameters or {}).get("id")
        if path_parameters is not None and isinstance(value, int) and value % 4 < 3:
            path_parameters["id"] = ids[value % 4 % len(ids)]
        return path_parameters

    return map_path_parameters


def often_existing_aliases(aliases: Sequence[str]) -> Hook:
    """Likewise for a flow's source and target aliases; and half the bootstrap servers are well-formed."""

    def map_body(context: schemathesis.HookContext, body: Any) -> Any:
        if isinstance(body, dict):
            if isinstance(body.get("bootstrap_servers"), str) and len(body["bootstrap_servers"]) % 2:
                body["bootstrap_servers"] = "kafka:9092"
            for key in ("source", "target"):
                if isinstance(body.get(key), str) and len(body[key]) % 4 < 3:
                    body[key] = aliases[(len(body[key]) + (key == "target")) % len(aliases)]
        return body

    return map_body

"""Checks that what the API serves (or a value object declares) is exactly what its serializer describes: no field
without a description, no description without a field."""

from __future__ import annotations

import dataclasses
import typing
from typing import Any

from rest_framework import serializers


def assert_documented(data: Any, described: serializers.Field[Any, Any, Any, Any], where: str = "") -> None:
    """``data`` (JSON as served) has exactly the fields ``described`` names, at every depth (a field described as
    not required may be absent)."""
    if data is None:
        assert described.allow_null, f"{where or 'the body'}: null, and not described as nullable"
        return
    if isinstance(described, serializers.ListSerializer):
        for index, item in enumerate(data):
            assert_documented(item, described.child, f"{where}[{index}]")
    elif isinstance(described, serializers.Serializer):
        assert isinstance(data, dict), f"{where}: {data!r} is not an object"
        always = {name for name, field in described.fields.items() if field.required}
        assert always <= set(data) <= set(described.fields), f"{where}: served {sorted(data)}, described {always}+"
        for name, item in data.items():
            assert_documented(item, described.fields[name], f"{where}.{name}")
    elif isinstance(described, serializers.ListField) and isinstance(described.child, serializers.Serializer):
        for index, item in enumerate(data):
            assert_documented(item, described.child, f"{where}[{index}]")


def assert_describes(kind: type[Any], described: serializers.Serializer[Any]) -> None:
    """The value object ``kind`` (a dataclass) declares exactly the fields ``described`` names, at every depth."""
    declared = {f.name for f in dataclasses.fields(kind)}
    assert declared == set(described.fields), f"{kind.__name__}: {sorted(declared)} != {sorted(described.fields)}"
    hints = typing.get_type_hints(kind)
    for name in declared:
        nested = _value_object(hints[name])
        if nested is not None:
            field = described.fields[name]
            child = field.child if isinstance(field, serializers.ListSerializer | serializers.ListField) else field
            assert isinstance(child, serializers.Serializer), f"{kind.__name__}.{name} is not described field by field"
            assert_describes(nested, child)


def _value_object(hint: Any) -> type[Any] | None:
    if typing.get_origin(hint) is tuple:
        hint = typing.get_args(hint)[0]
    return hint if isinstance(hint, type) and dataclasses.is_dataclass(hint) else None

"""A list serializer that renders many rows of a model serializer at a fraction of DRF's per-field cost."""

from __future__ import annotations

from typing import Any

from rest_framework import fields, serializers
from rest_framework.relations import PKOnlyObject

# Fields whose representation of a value of the exact type is the value itself: DRF would call get_attribute and
# to_representation on each (str(), int(), ...), about 4 µs a field, 0.2 ms a flow of 43 fields.
_PLAIN: dict[type[fields.Field[Any, Any, Any, Any]], type] = {
    fields.BooleanField: bool,
    fields.IntegerField: int,
    fields.FloatField: float,
    fields.CharField: str,
}


class FastListSerializer(serializers.ListSerializer[Any]):
    """Renders a page of objects exactly as the child serializer would (``test_fast_list`` compares them): a plain
    field whose value already has its representation's type is copied; every other field goes through DRF."""

    def to_representation(self, data: Any) -> list[dict[str, Any]]:
        items = data.all() if hasattr(data, "all") else data
        steps = self._steps()
        return [_row(steps, item) for item in items]

    def _steps(self) -> list[tuple[str, str | None, type | None, fields.Field[Any, Any, Any, Any]]]:
        steps = []
        child: Any = self.child  # a Serializer: its readable fields in rendering order
        for field in child._readable_fields:
            kind = _PLAIN.get(type(field))
            plain = kind is not None and len(field.source_attrs) == 1
            steps.append((field.field_name, field.source_attrs[0] if plain else None, kind, field))
        return steps


def _row(
    steps: list[tuple[str, str | None, type | None, fields.Field[Any, Any, Any, Any]]], item: Any
) -> dict[str, Any]:
    row: dict[str, Any] = {}
    for name, attr, kind, field in steps:
        if attr is not None:
            value = getattr(item, attr)
            row[name] = value if value is None or type(value) is kind else field.to_representation(value)
            continue
        try:
            value = field.get_attribute(item)
        except fields.SkipField:
            continue
        empty = (value.pk if isinstance(value, PKOnlyObject) else value) is None
        row[name] = None if empty else field.to_representation(value)
    return row

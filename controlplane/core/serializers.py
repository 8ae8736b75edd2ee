"""The API's serializer bases: input that names no unknown field (``StrictInput``), and a list serializer that
renders many rows of a model serializer at a fraction of DRF's per-field cost."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from django.http import QueryDict
from rest_framework import fields, serializers
from rest_framework.exceptions import ValidationError
from rest_framework.relations import PKOnlyObject
from rest_framework.settings import api_settings

UNKNOWN_FIELD = "Unknown field."


# StrictInput is mixed into every serializer that reads a request body: a key that names none of its fields is
# refused (``{"task_max": ["Unknown field."]}``) with the other fields' errors, so a misspelt name is never dropped
# in silence while the rest applies. A read-only field may be sent back as read (a GET then a PUT) and is ignored,
# as DRF ignores it; a nested serializer with this mixin checks its own keys the same way. (No docstring: the
# OpenAPI schema would describe every serializer without one of its own by the mixin's.)
class StrictInput:
    def to_internal_value(self, data: Any) -> Any:
        unknown = _unknown_keys(data, cast(Any, self).fields)
        try:
            value = super().to_internal_value(data)  # type: ignore[misc]  # a mixin: its serializer class has the method
        except ValidationError as exc:
            if not unknown:
                raise
            detail = exc.detail if isinstance(exc.detail, dict) else {api_settings.NON_FIELD_ERRORS_KEY: exc.detail}
            raise ValidationError({**detail, **unknown}) from None
        if unknown:
            raise ValidationError(unknown)
        return value


def _unknown_keys(data: Any, known: Mapping[str, Any]) -> dict[str, list[str]]:
    if not isinstance(data, Mapping):
        return {}  # DRF refuses a body that is not an object on its own
    names = [name for name in data if name not in known]
    if isinstance(data, QueryDict):  # a form post: its CSRF token is Django's, not a field
        names = [name for name in names if name != "csrfmiddlewaretoken"]
    return {str(name): [UNKNOWN_FIELD] for name in names}


class NoInput(StrictInput, serializers.Serializer[dict[str, Any]]):
    """The body of an operation that takes none: any field in it is unknown."""


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

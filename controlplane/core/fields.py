"""Serializer fields the apps share."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from controlplane.core.jsondepth import MAX_JSON_DEPTH, TOO_DEEP, json_depth


class BoundedJSONField(serializers.JSONField):
    """DRF's JSONField with the request guard's depth bound. DRF parses a JSON field's value itself when it comes
    as a string (a form or multipart field, or ``binary=True``), past the guard, which sees only JSON bodies:
    deeper than MAX_JSON_DEPTH is the field's 400, before ``json.loads`` can recurse into a RecursionError."""

    default_error_messages = {"too_deep": f"The JSON value is {TOO_DEEP}."}

    def to_internal_value(self, data: Any) -> Any:
        if self.binary or getattr(data, "is_json_string", False):
            text = data.decode(errors="replace") if isinstance(data, bytes) else data
            if isinstance(text, str) and json_depth(text) > MAX_JSON_DEPTH:
                self.fail("too_deep")
        return super().to_internal_value(data)

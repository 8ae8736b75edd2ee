"""Paging for the list endpoints: `?limit=N&offset=M` pages. Lists that stay short (clusters, report runs) return the
whole list without `limit`; the flow list, which runs to thousands, pages by default.

`offset` is strict: a value that is not a whole number from 0 to `MAX_OFFSET` gets a 400 naming the field (DRF
would read "abc" as 0, and an offset past Postgres' bigint failed the query with a 500). `limit` keeps DRF's rule:
above `max_limit` it is clamped."""

from __future__ import annotations

from typing import Any

from rest_framework.exceptions import ValidationError
from rest_framework.pagination import LimitOffsetPagination
from rest_framework.request import Request

MAX_OFFSET = 2**31 - 1


class StrictOffsetPagination(LimitOffsetPagination):
    max_limit = 1000

    def get_offset(self, request: Request) -> int:
        raw = request.query_params.get(self.offset_query_param)
        if raw is None:
            return 0
        try:
            offset = int(raw)
        except ValueError:
            raise ValidationError({self.offset_query_param: ["must be a whole number"]}) from None
        if not 0 <= offset <= MAX_OFFSET:
            raise ValidationError({self.offset_query_param: [f"must be from 0 to {MAX_OFFSET}"]})
        return offset

    def get_schema_operation_parameters(self, view: Any) -> list[dict[str, Any]]:
        parameters: list[dict[str, Any]] = super().get_schema_operation_parameters(view)
        for parameter in parameters:
            if parameter["name"] == self.offset_query_param:
                parameter["schema"] = {**parameter["schema"], "minimum": 0, "maximum": MAX_OFFSET}
            if parameter["name"] == self.limit_query_param:
                parameter["schema"] = {**parameter["schema"], "minimum": 0}
        return parameters


class OptInLimitOffsetPagination(StrictOffsetPagination):
    """`{"count", "next", "previous", "results"}` when `limit` is given; the plain list otherwise (no breaking
    change for scripts and the UI, which read every cluster). Large installations page with `limit`."""

    default_limit = None

    def get_paginated_response_schema(self, schema: dict[str, Any]) -> dict[str, Any]:
        """Both answers in the OpenAPI schema: ``schema`` (the plain list) and the page."""
        page: dict[str, Any] = super().get_paginated_response_schema(schema)
        return {"oneOf": [schema, page], "description": "the whole list; a page with `limit`"}


class LimitOffsetPagination100(StrictOffsetPagination):
    """`{"count", "next", "previous", "results"}` always: 100 per page unless `limit` says otherwise (at most 1000).
    The whole list of 2,000 flows took 0.4 s to serialize; a page takes a few milliseconds."""

    default_limit = 100

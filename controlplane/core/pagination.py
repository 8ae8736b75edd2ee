"""Opt-in paging for the list endpoints: `?limit=N&offset=M` pages; without `limit` the whole list, as before."""

from __future__ import annotations

from rest_framework.pagination import LimitOffsetPagination


class OptInLimitOffsetPagination(LimitOffsetPagination):
    """`{"count", "next", "previous", "results"}` when `limit` is given; the plain list otherwise (no breaking
    change for scripts and the UI, which read every flow). Large installations page with `limit`."""

    default_limit = None
    max_limit = 1000

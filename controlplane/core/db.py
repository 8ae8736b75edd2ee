"""Database functions the ORM lacks, for both engines the control plane runs on (SQLite and Postgres)."""

from __future__ import annotations

from typing import Any

from django.db.models import Func, IntegerField


class JSONArrayLength(Func):
    """The length of a JSON array column, computed by the database: counting a task's thousands of partitions
    without shipping and decoding them."""

    function = "json_array_length"  # SQLite
    output_field = IntegerField()

    def as_postgresql(self, compiler: Any, connection: Any, **extra_context: Any) -> Any:
        return self.as_sql(compiler, connection, function="jsonb_array_length", **extra_context)

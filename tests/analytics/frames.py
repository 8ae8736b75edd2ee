"""Comparing a Spark DataFrame with the rows a test expects: every column named, every row, order ignored."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pyspark.sql import DataFrame


def plain(frame: DataFrame, columns: Sequence[str] | None = None) -> list[dict[str, Any]]:
    """Rows as dicts (structs become dicts too), sorted for a stable comparison."""
    selected = frame.select(*columns) if columns else frame
    return sorted((row.asDict(recursive=True) for row in selected.collect()), key=repr)


def assert_frame_equal(actual: DataFrame, expected: Sequence[Mapping[str, Any]], columns: Sequence[str] = ()) -> None:
    """Fail unless actual holds exactly the expected rows (in any order) in the expected rows' columns.

    The columns compared are `columns`, else the keys of the first expected row; they must all exist in actual.
    """
    names = list(columns) or (list(expected[0]) if expected else actual.columns)
    missing = [n for n in names if n not in actual.columns]
    if missing:
        raise AssertionError(f"columns {missing} not in {actual.columns}")
    got = plain(actual, names)
    want = sorted(({n: row[n] for n in names} for row in expected), key=repr)
    if got != want:
        extra = [r for r in got if r not in want]
        absent = [r for r in want if r not in got]
        raise AssertionError(f"frames differ\nunexpected rows: {extra}\nmissing rows: {absent}")

"""The comparison helper itself: a test built on it must be able to fail."""

from __future__ import annotations

import pytest
from pyspark.sql import SparkSession

from tests.analytics.frames import assert_frame_equal

pytestmark = pytest.mark.spark


def test_equal_rows_in_any_order_pass(spark: SparkSession) -> None:
    frame = spark.createDataFrame([("a", 1), ("b", 2)], "k string, v long")
    assert_frame_equal(frame, [{"k": "b", "v": 2}, {"k": "a", "v": 1}])


@pytest.mark.parametrize(
    "expected",
    [
        [{"k": "a", "v": 1}, {"k": "b", "v": 3}],  # a wrong figure
        [{"k": "a", "v": 1}],  # a row too few
        [{"k": "a", "v": 1}, {"k": "b", "v": 2}, {"k": "c", "v": 3}],  # a row too many
        [{"k": "a", "v": 1, "w": 0}, {"k": "b", "v": 2, "w": 0}],  # a column that is not there
    ],
)
def test_a_wrong_expectation_fails(spark: SparkSession, expected: list[dict[str, object]]) -> None:
    frame = spark.createDataFrame([("a", 1), ("b", 2)], "k string, v long")
    with pytest.raises(AssertionError):
        assert_frame_equal(frame, expected)

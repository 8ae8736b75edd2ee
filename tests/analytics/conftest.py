"""One SparkSession for every Spark test: local[2], 4 shuffle partitions (a shared 2-core machine)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest


@pytest.fixture(scope="session")
def spark() -> Iterator[object]:
    from replication.analytics.session import build_session

    session = build_session("local[2]", "mirrorplane-tests")
    session.conf.set("spark.sql.shuffle.partitions", "4")
    yield session
    session.stop()

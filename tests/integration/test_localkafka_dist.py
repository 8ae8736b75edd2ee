"""localkafka.dist: processes that unpack the Kafka distribution at once (parallel test workers) all get it whole."""

from __future__ import annotations

import uuid
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pytest

from localkafka.dist import KAFKA_DIST_NAME, ensure_kafka_home


def _unpack(cache_dir: str) -> list[str]:
    home = ensure_kafka_home(Path(cache_dir))
    return sorted(p.name for p in (home / "libs").iterdir())


def test_concurrent_unpacks_leave_one_complete_home(tmp_path: Path) -> None:
    with ProcessPoolExecutor(3) as pool:
        libs = list(pool.map(_unpack, [str(tmp_path)] * 3))
    assert libs[0] == libs[1] == libs[2]
    assert any(name.startswith("kafka_2.12-2.3.0") for name in libs[0])
    assert (tmp_path / KAFKA_DIST_NAME / ".unpacked").exists()
    assert [p.name for p in tmp_path.iterdir()] == [KAFKA_DIST_NAME]  # no partial directory left behind


def test_a_kraft_cluster_id_never_reads_as_an_option(monkeypatch: pytest.MonkeyPatch) -> None:
    """Kafka's storage tool reads an id that starts with "-" as an option; Kafka's own ids never start so."""
    from localkafka import cluster

    ids = iter([uuid.UUID(bytes=b"\xfb" + bytes(15)), uuid.UUID(bytes=b"\x00" * 16)])  # "-w..." first, then "AAAA..."
    monkeypatch.setattr(cluster.uuid, "uuid4", lambda: next(ids))
    assert cluster.new_cluster_id() == "A" * 22

"""run_job and the CLI: summaries on disk, empty lakes, and failures that raise instead of vanishing."""

from __future__ import annotations

import json
import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from pyspark.sql import SparkSession

from replication.analytics.__main__ import main
from replication.analytics.jobs import run_job
from tests.analytics.factgen import T0, fact, write_facts

pytestmark = pytest.mark.spark


def test_unknown_jobs_and_backwards_windows_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="unknown job 'lag'"):
        run_job("lag", str(tmp_path), str(tmp_path / "out"))
    since, until = datetime(2027, 1, 2, tzinfo=UTC), datetime(2027, 1, 1, tzinfo=UTC)
    with pytest.raises(ValueError, match="must be before"):
        run_job("audit", str(tmp_path), str(tmp_path / "out"), since, until)


def test_the_cli_writes_and_prints_the_summary(
    spark: SparkSession, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lake, out = str(tmp_path / "lake"), str(tmp_path / "out")
    write_facts(lake, [fact("a->b", "t", 0, 0, 9, ts=T0, acked=T0 + 5)])
    since, until = str(T0), "2027-01-15T09:00"
    assert (
        main(["audit", "--lake", lake, "--out", out, "--since", since, "--until", until, "--window-minutes", "5"]) == 0
    )
    printed = json.loads(capsys.readouterr().out)
    assert printed == json.loads(Path(out, "summary.json").read_text())
    assert (printed["since"], printed["until"]) == ("2027-01-15T08:00:00+00:00", "2027-01-15T09:00:00+00:00")
    assert (printed["source_records"], printed["target_records"], printed["options"]["window_minutes"]) == (10, 10, 5)
    assert spark.read.parquet(f"{out}/windows").count() == 1


def test_an_empty_lake_gives_empty_reports_that_say_no_data(spark: SparkSession, tmp_path: Path) -> None:
    lake = str(tmp_path / "empty")
    latency = run_job("latency", lake, str(tmp_path / "l"), spark=spark)
    assert (latency["facts"], latency["no_data"]) == (0, True)
    audit = run_job("audit", lake, str(tmp_path / "a"), spark=spark)
    assert (audit["windows"], audit["no_data"], audit["completeness_pct"]) == (0, True, None)
    assert audit["note"].startswith("no data")
    topology = run_job("topology", lake, str(tmp_path / "t"), spark=spark)
    assert (topology["nodes"], topology["hops"], topology["heartbeat_arrivals"]) == ([], {}, 0)
    assert topology["no_data"] is True


def test_an_audit_over_a_window_without_facts_never_claims_100_percent(spark: SparkSession, tmp_path: Path) -> None:
    lake = str(tmp_path / "lake")
    write_facts(lake, [fact("a->b", "t", 0, 0, 9, ts=T0, acked=T0 + 5)])
    later = datetime.fromtimestamp((T0 + 3 * 3_600_000) / 1000, UTC)
    empty = run_job("audit", lake, str(tmp_path / "e"), later, later + timedelta(hours=1), spark=spark)
    assert (empty["source_records"], empty["completeness_pct"], empty["no_data"]) == (0, None, True)
    assert json.loads(Path(tmp_path / "e" / "summary.json").read_text())["completeness_pct"] is None
    full = run_job("audit", lake, str(tmp_path / "f"), spark=spark)
    assert (full["source_records"], full["completeness_pct"], full["no_data"], full["note"]) == (10, 100.0, False, "")
    latency = run_job("latency", lake, str(tmp_path / "l"), spark=spark)
    assert (latency["facts"], latency["no_data"]) == (1, False)


def test_an_unreadable_lake_raises(spark: SparkSession, tmp_path: Path) -> None:
    broken = tmp_path / "lake" / "facts" / "date=2027-01-15" / "hour=08" / "flow=a->b"
    broken.mkdir(parents=True)
    (broken / "part-0.parquet").write_bytes(b"not parquet")
    with pytest.raises(Exception, match=r"(?i)parquet"):
        run_job("audit", str(tmp_path / "lake"), str(tmp_path / "out"), spark=spark)


def test_prune_from_the_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lake = str(tmp_path / "lake")
    now_ms = int(datetime.now(UTC).timestamp() * 1000)
    write_facts(lake, [fact("a->b", "t", 0, 0, ts=now_ms, acked=now_ms - h * 3_600_000) for h in (0, 3)])
    assert main(["prune", "--lake", lake, "--retention-hours", "2"]) == 0
    assert json.loads(capsys.readouterr().out) == {"removed_partitions": 1}
    assert main(["latency", "--lake", lake]) == 2  # a job needs --out


def test_jobs_side_by_side_in_threads_share_one_session_and_the_last_stops_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # A worker on Celery's threads pool runs report jobs as threads of one process: the first job's session must
    # not be stopped under the second. Spark itself is a stand-in here; the real jobs run in the tests above.
    from replication.analytics import jobs

    stops: list[int] = []
    session = SimpleNamespace(stop=lambda: stops.append(1))
    started = threading.Barrier(2)
    release = {"first": threading.Event(), "second": threading.Event()}

    def runner(job: Any) -> dict[str, Any]:
        started.wait(10)
        assert release[threading.current_thread().name].wait(10)
        return {}

    monkeypatch.setattr(jobs, "build_session", lambda master: session)
    monkeypatch.setattr(jobs, "_session_exists", lambda: bool(jobs._session_jobs))
    monkeypatch.setitem(jobs.RUNNERS, "latency", runner)
    monkeypatch.setattr(jobs, "write_summary", lambda *args: None)
    threads = [
        threading.Thread(target=run_job, args=("latency", str(tmp_path), str(tmp_path / name)), name=name)
        for name in release
    ]
    for thread in threads:
        thread.start()
    release["first"].set()
    threads[0].join(10)
    assert stops == [], "the first job to end stopped the session the second still uses"
    release["second"].set()
    threads[1].join(10)
    assert stops == [1] and jobs._session_jobs == 0

"""Each job declares its options; run_job and the CLI take only those, checked, and refuse the rest before Spark
starts. No SparkSession here: the refusals come first."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from replication.analytics import jobs
from replication.analytics.__main__ import main
from replication.analytics.options import OPTIONS, JobOptions, OptionError, declared, job_options, validate
from tests.test_boundary import REPO


def test_each_job_declares_its_options() -> None:
    assert {job: list(declared(job)) for job in jobs.JOBS} == {
        "latency": [],
        "topology": ["flows", "dead_after", "collection_lag_s"],
        "audit": ["window_minutes", "late_after_ms", "lookback_minutes"],
    }
    assert set(jobs.RUNNERS) == set(jobs.JOBS)
    assert {name: o.kind for name, o in OPTIONS.items()} == {
        "flows": "flows",
        "window_minutes": "int",
        "late_after_ms": "int",
        "dead_after": "float",
        "lookback_minutes": "int",
        "collection_lag_s": "float",
    }
    assert {name: o.default for name, o in OPTIONS.items()} == {name: getattr(JobOptions(), name) for name in OPTIONS}


def test_valid_values_are_kept_and_numbers_become_the_declared_type() -> None:
    assert validate("topology", {"dead_after": 2, "flows": ["a->b", "b.x->c_y"]}) == {
        "dead_after": 2.0,
        "flows": ("a->b", "b.x->c_y"),
    }
    assert job_options("audit", {"window_minutes": 1440, "lookback_minutes": 0}) == JobOptions(
        window_minutes=1440, lookback_minutes=0
    )
    assert validate("latency", {}) == {}


@pytest.mark.parametrize(
    ("job", "values", "message"),
    [
        ("latency", {"window_minutes": 5}, "window_minutes: not an option of the latency job (it takes none)"),
        ("audit", {"dead_after": 5}, "dead_after: not an option of the audit job (its options are window_minutes, "),
        ("audit", {"window_minutes": 10.0}, "window_minutes: must be an integer"),
        ("audit", {"late_after_ms": False}, "late_after_ms: must be an integer"),
        ("audit", {"window_minutes": 1441}, "window_minutes: must be at most 1440"),
        ("topology", {"dead_after": float("nan")}, "dead_after: must be a finite number"),
        ("topology", {"dead_after": 0.5}, "dead_after: must be at least 1"),
        ("topology", {"flows": ["a->b"] * 1001}, "flows: 1001 flows; at most 1000 are allowed"),
        ("topology", {"flows": ["a->b->c"]}, "flows: 'a->b->c' is not a flow name"),
        ("topology", {"flows": [1]}, "flows: must be a list of flow names"),
    ],
)
def test_wrong_options_are_refused_naming_them(job: str, values: dict[str, Any], message: str) -> None:
    with pytest.raises(OptionError) as refused:
        validate(job, values)
    assert str(refused.value).startswith(message)
    assert refused.value.option == next(iter(values))


def test_run_job_refuses_an_undeclared_option_before_starting_spark(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    def no_spark(master: Any) -> Any:
        raise AssertionError("a session was started for a run that must be refused")

    monkeypatch.setattr(jobs, "build_session", no_spark)
    with pytest.raises(OptionError, match="window_seconds: not an option of the audit job"):
        jobs.run_job("audit", str(tmp_path), str(tmp_path / "out"), window_seconds=60)
    with pytest.raises(OptionError, match="window_minutes: must be at least 1"):
        jobs.run_job("audit", str(tmp_path), str(tmp_path / "out"), window_minutes=0)


def test_the_cli_passes_only_the_options_given_and_refuses_another_jobs(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    given: list[dict[str, Any]] = []
    monkeypatch.setattr(jobs, "run_job", lambda *args, **options: given.append(options) or {})
    lake, out = str(tmp_path / "lake"), str(tmp_path / "out")

    assert main(["topology", "--lake", lake, "--out", out, "--flows", "a->b, b->c", "--dead-after", "3"]) == 0
    assert given == [{"flows": ["a->b", "b->c"], "dead_after": 3.0}]

    monkeypatch.undo()
    assert main(["latency", "--lake", lake, "--out", out, "--window-minutes", "5"]) == 2
    assert "window_minutes: not an option of the latency job" in capsys.readouterr().err


def test_the_options_load_without_spark() -> None:
    # The control plane's web processes check report parameters with them and must not pay for PySpark.
    script = "import sys, replication.analytics.options; assert 'pyspark' not in sys.modules, 'pyspark loaded'"
    result = subprocess.run([sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr


def test_the_analytics_docs_list_every_option_with_its_default() -> None:
    table = (REPO / "docs" / "analytics.md").read_text()
    for option in OPTIONS.values():
        row = next((line for line in table.splitlines() if f"| `{option.name}` |" in line), "")
        assert row.startswith(f"| {'/'.join(option.jobs)} |"), option.name
        if option.kind != "flows":
            assert f"| {option.default:g} |" in row, option.name

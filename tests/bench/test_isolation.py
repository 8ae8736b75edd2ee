"""One bad cluster never slows the rest, on real brokers and the demo's defaults (SQLite, the spool transport, one
worker of the demo's size, beat with its controller): beside three unreachable clusters (refused, hung, unresolvable)
and one whose SASL handshake fails, two of them sources of flows, every controller tick runs on time, every report
starts within 10 s of being queued, the healthy flow keeps copying with its lag under 10 s of its traffic, and the
worker logs fewer than 100 lines a minute. ``bench.isolation`` prints the same figures over 5 minutes; the slow
variant here runs those 5 minutes (``make test-faults``)."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path

import pytest

from bench import isolation

pytestmark = pytest.mark.kafka


def check(figures: isolation.Figures) -> None:
    print(asdict(figures))
    assert figures.controller_ticks >= 0.9 * figures.controller_ticks_expected, figures
    assert figures.controller_late_ticks == 0, figures
    assert figures.report_waits_s and all(w is not None and w <= 10.0 for w in figures.report_waits_s), figures
    assert figures.records_copied >= 0.9 * 20 * figures.seconds, figures
    assert figures.max_lag_records is not None and figures.max_lag_records <= figures.lag_bound_records, figures
    assert figures.worker_lines_per_minute < 100, figures
    assert all(figures.held.values()), figures.held


def test_bad_clusters_cost_the_healthy_ones_nothing(kafka_clusters: dict[str, str], tmp_path: Path) -> None:
    check(isolation.run(kafka_clusters["us-west"], kafka_clusters["us-east"], tmp_path, seconds=75, report_every=35))


@pytest.mark.slow
def test_bad_clusters_cost_the_healthy_ones_nothing_over_five_minutes(
    kafka_clusters: dict[str, str], tmp_path: Path
) -> None:
    check(isolation.run(kafka_clusters["us-west"], kafka_clusters["us-east"], tmp_path, seconds=300, report_every=60))

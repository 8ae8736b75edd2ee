"""The perf tools' figures as the bench reads them, and a copy's ceiling derived from them."""

from __future__ import annotations

import pytest

from bench.kafkaops import BenchError
from bench.limits import LimitResult, closeness, copy_ceiling, parse_consumer, parse_producer

CONSUMER = """start.time, end.time, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec, rebalance.time.ms, \
fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec
2026-11-28 21:00:00:000, 2026-11-28 21:00:10:000, 19.0735, 1.9073, 200000, 20000.0000, 2000, 8000, 2.3842, 25000.0000
"""
PRODUCER = """99841 records sent, 19968.2 records/sec (1.90 MB/sec), 480.1 ms avg latency, 900.0 ms max latency.
200000 records sent, 21052.631579 records/sec (2.01 MB/sec), 500.12 ms avg latency, 950.00 ms max latency, \
480 ms 50th, 900 ms 95th, 940 ms 99th, 949 ms 99.9th.
"""


def test_the_consumer_rate_is_over_the_fetching_time() -> None:
    assert parse_consumer(CONSUMER, 200000) == 25000.0


def test_a_consumer_that_read_too_few_records_is_refused() -> None:
    with pytest.raises(BenchError, match="read 200000 of 300000"):
        parse_consumer(CONSUMER, 300000)


def test_the_producer_rate_is_its_last_summary_line() -> None:
    assert parse_producer(PRODUCER) == pytest.approx(21052.631579)


def test_a_copy_reads_and_writes_each_record_on_the_same_machine() -> None:
    assert copy_ceiling(30000, 60000) == pytest.approx(20000)
    assert copy_ceiling(0, 60000) == 0.0


def test_each_replicator_is_set_against_its_own_datas_ceiling() -> None:
    limits = [LimitResult("100 B", 10, 30000, 60000), LimitResult("1 KiB", 10, 10000, 10000)]
    shares = closeness({("100 B", "mm2"): 10000, ("1 KiB", "mp-alo"): 4000, ("2 KiB", "mm2"): 1}, limits)
    assert shares == [
        {"dataset": "100 B", "replicator": "mm2", "share_of_ceiling": 0.5},
        {"dataset": "1 KiB", "replicator": "mp-alo", "share_of_ceiling": 0.8},
    ]

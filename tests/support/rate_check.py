"""Compare the dashboard's records/s with the brokers' own end-offset rate, against a running control plane.

    python -m tests.support.rate_check --url http://127.0.0.1:8000 --token TOKEN [--seconds 60] [--tolerance 0.2]

For each flow, the brokers' rate is the growth of the end offsets of its remote topics in the target cluster
(`<source>.*`, checkpoints excluded) over the whole run; the dashboard is read every 5 s meanwhile. Every reading
must be within the tolerance of the brokers' rate. Exit status 0 when all are, 1 otherwise.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import urllib.request
from collections.abc import Sequence
from typing import Any

from confluent_kafka import Consumer, TopicPartition


def fetch(url: str, token: str) -> Any:
    request = urllib.request.Request(url, headers={"Authorization": f"Token {token}", "Accept": "application/json"})
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(request, timeout=10) as response:
        return json.load(response)


def remote_end_offsets(bootstrap: str, source: str) -> int:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "mirrorplane-rate-check"})
    try:
        topics = consumer.list_topics(timeout=10).topics
        total = 0
        for name, meta in topics.items():
            if not name.startswith(f"{source}.") or name.endswith(".internal"):
                continue
            for p in meta.partitions:
                total += consumer.get_watermark_offsets(TopicPartition(name, p), timeout=10)[1]
        return total
    finally:
        consumer.close()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--url", default="http://127.0.0.1:8000")
    parser.add_argument("--token", required=True)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--tolerance", type=float, default=0.2)
    args = parser.parse_args(argv)
    api = args.url.rstrip("/") + "/api/v1"
    bootstraps = {c["alias"]: c["bootstrap_servers"] for c in fetch(f"{api}/clusters/", args.token)}
    flows = fetch(f"{api}/flows/", args.token)
    start = {f["name"]: remote_end_offsets(bootstraps[f["target"]], f["source"]) for f in flows}
    started = time.monotonic()
    readings: dict[str, list[float]] = {f["name"]: [] for f in flows}
    while time.monotonic() - started < args.seconds:
        for edge in fetch(f"{api}/dashboard/", args.token)["edges"]:
            readings.setdefault(edge["name"], []).append(edge["records_per_second"])
        time.sleep(5)
    elapsed = time.monotonic() - started
    end = {f["name"]: remote_end_offsets(bootstraps[f["target"]], f["source"]) for f in flows}
    ok = True
    for name, values in readings.items():
        brokers = (end[name] - start[name]) / elapsed
        worst = max((abs(v - brokers) / brokers for v in values), default=1.0) if brokers else 1.0
        mean = sum(values) / len(values) if values else 0.0
        within = worst <= args.tolerance
        ok &= within
        print(
            f"{name}: brokers {brokers:.1f} records/s; dashboard mean {mean:.1f}, min {min(values):.1f}, "
            f"max {max(values):.1f} over {len(values)} readings; worst deviation {worst:.1%} "
            f"{'OK' if within else 'FAIL'}"
        )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

"""``manage.py rate_check``: the dashboard's records/s of each flow against the brokers' end-offset rate."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from controlplane.flows.models import Flow
from controlplane.monitoring.services.ratecheck import measure


def _positive(value: str) -> float:
    number = float(value)
    if not number > 0:
        raise ValueError(value)
    return number


class Command(BaseCommand):
    help = (
        "Read the dashboard's records/s of each enabled flow every --interval seconds for --seconds, and compare "
        "every reading with the rate at which the flow's remote topics in its target grew over the run. Exit "
        "status 1 when a reading is off by more than --tolerance, or a flow has no figure to compare."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--seconds", type=_positive, default=60.0, help="how long to watch (default 60)")
        parser.add_argument("--interval", type=_positive, default=5.0, help="seconds between readings (default 5)")
        parser.add_argument(
            "--tolerance", type=_positive, default=0.2, help="largest relative deviation allowed (default 0.2)"
        )
        parser.add_argument("--flow", action="append", default=[], help="a flow's name, source->target (repeatable)")

    def handle(self, *args: Any, **options: Any) -> None:
        flows = list(Flow.objects.filter(enabled=True).select_related("source", "target").order_by("source__alias"))
        if options["flow"]:
            unknown = sorted(set(options["flow"]) - {flow.name for flow in flows})
            if unknown:
                raise CommandError(f"--flow: no enabled flow is named {', '.join(unknown)}")
            flows = [flow for flow in flows if flow.name in options["flow"]]
        if not flows:
            raise CommandError("no enabled flow to check")
        failed = False
        for rates in measure(flows, options["seconds"], options["interval"]):
            worst = rates.worst_deviation()
            brokers = rates.brokers_per_second or 0.0
            if worst is None:
                failed = True
                self.stdout.write(
                    f"{rates.name}: brokers {brokers:.1f} records/s over {len(rates.readings)} readings; no data to "
                    "compare (no reading, or the target gained no record)"
                )
                continue
            within = worst <= options["tolerance"]
            failed |= not within
            values = rates.readings
            self.stdout.write(
                f"{rates.name}: brokers {brokers:.1f} records/s; dashboard mean {sum(values) / len(values):.1f}, "
                f"min {min(values):.1f}, max {max(values):.1f} over {len(values)} readings; worst deviation "
                f"{worst:.1%} {'OK' if within else 'FAIL'}"
            )
        if failed:
            raise CommandError("a flow's records/s is off the brokers' rate, or has no data", returncode=1)

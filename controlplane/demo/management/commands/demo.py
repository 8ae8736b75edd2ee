"""``manage.py demo``: the whole product on embedded defaults, stopped cleanly by Ctrl-C."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import sys
import time
import urllib.request
from argparse import ArgumentParser
from contextlib import ExitStack
from types import FrameType
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError

from controlplane.demo.processes import ProcessGroup
from controlplane.demo.services.traffic import TRAFFIC_CLUSTER
from localkafka.traffic import TrafficControl, demo_control_dir

if TYPE_CHECKING:
    from controlplane.demo.demo_data import SecuredCluster
    from localkafka import LocalKafka
    from localkafka.manager import ClusterChoice

DEMO_CLUSTERS = ["us-west", "us-east", "backup"]
# SASL_SSL with SCRAM-SHA-512, registered as the least-privilege principal; the others stay PLAINTEXT.
SECURED_CLUSTER = "backup"
ADMIN_USERNAME = "admin"
HEALTH_TIMEOUT_SECONDS = 60.0


class _Stop(BaseException):
    """Raised by the first SIGINT/SIGTERM/SIGHUP; a BaseException so no ``except Exception`` swallows it."""


class _StopSignals:
    """Turns the first stop signal into ``_Stop``; later ones are ignored so teardown runs to its end."""

    def __init__(self) -> None:
        self.stopping = False

    def install(self) -> None:
        for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(signum, self._handle)

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        if not self.stopping:
            self.stopping = True
            raise _Stop(signal.Signals(signum).name)


class Command(BaseCommand):
    help = "Run local Kafka clusters, the web server, a Celery worker and beat until Ctrl-C."

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("--no-kafka", action="store_true", help="do not start the local Kafka clusters")
        parser.add_argument("--port", type=int, default=8000, help="port of the web server (default 8000)")
        # Distinct bases let the demo run beside other local clusters, such as the test suite's.
        parser.add_argument("--kafka-broker-port-base", type=int, default=19092, help="default 19092")
        parser.add_argument(
            "--kafka-zk-port-base",
            type=int,
            default=12181,
            help="first control port: the KRaft controllers' (ZooKeepers' on Kafka 2.3.0); default 12181",
        )
        parser.add_argument(
            "--no-traffic",
            action="store_true",
            help="do not start the traffic generator (while it runs, the dashboard and /api/v1/demo/traffic/ pause it)",
        )

    bootstraps: dict[str, str] = {}
    secured: dict[str, SecuredCluster] = {}

    def handle(self, *args: Any, **options: Any) -> None:
        signals = _StopSignals()
        signals.install()
        stack = ExitStack()
        try:
            if not _port_is_free(options["port"]):
                raise CommandError(f"port {options['port']} on 127.0.0.1 is already in use; pass --port")
            if not options["no_kafka"]:
                self._start_kafka(stack, options["kafka_broker_port_base"], options["kafka_zk_port_base"])
            self._run(stack, port=options["port"], traffic=not options["no_traffic"])
        except _Stop as stop:
            self.stdout.write(f"Received {stop}, stopping.")
        finally:
            signals.stopping = True
            stack.close()
        self.stdout.write("Mirrorplane demo stopped.")

    def _run(self, stack: ExitStack, *, port: int, traffic: bool = True) -> None:
        call_command("migrate", interactive=False, verbosity=1)
        password = os.environ.get("MIRRORPLANE_DEMO_PASSWORD") or "admin"
        _ensure_superuser(ADMIN_USERNAME, password)
        self.stdout.write(f"Log in as {ADMIN_USERNAME} / {password}")
        if self.bootstraps:
            from controlplane.demo.demo_data import seed

            created = seed(self.bootstraps, self.secured)
            self.stdout.write(f"Registered clusters {', '.join(self.bootstraps)}; demo flows: {created or 'present'}")
        children = stack.enter_context(ProcessGroup())
        TrafficControl(demo_control_dir(settings.STATE_DIR)).reset()  # a new demo's traffic starts unpaused
        for name, argv in _child_commands(port, self.bootstraps, traffic=traffic).items():
            child = children.start(name, argv, cwd=settings.BASE_DIR, env=_child_env())
            self.stdout.write(f"started {name} (pid {child.pid})")
        _wait_until_healthy(f"http://127.0.0.1:{port}/healthz", children)
        self.stdout.write(
            self.style.SUCCESS(f"Mirrorplane is running at http://127.0.0.1:{port}/ ({ADMIN_USERNAME} / {password})")
        )
        while (dead := children.exited()) is None:
            time.sleep(0.5)
        raise CommandError(f"{dead.name} exited with code {dead.popen.returncode}; demo stopped")

    def _start_kafka(self, stack: ExitStack, broker_port_base: int, zk_port_base: int) -> None:
        try:
            from localkafka import LocalKafka
        except ImportError as exc:
            raise CommandError(f"local Kafka is not available ({exc}); run with --no-kafka") from exc
        kafka = self._local_kafka(LocalKafka, broker_port_base, zk_port_base)
        # Registered before up() so clusters started by an interrupted up() are stopped too.
        stack.callback(kafka.down)
        self.stdout.write(f"Starting local Kafka {kafka.version} clusters {', '.join(DEMO_CLUSTERS)} ...")
        try:
            bootstraps = kafka.up(self._cluster_choices(kafka))
        except Exception as exc:  # any start-up failure ends the demo with its message, not a traceback
            raise CommandError(f"local Kafka did not start: {exc}") from exc
        for alias, bootstrap in bootstraps.items():
            self.stdout.write(f"{alias}={bootstrap}")
        self.bootstraps = bootstraps
        self.secured = _secured_clusters(kafka)
        for alias in self.secured:
            # The paths only: the files hold the passwords, which are never printed.
            files = ", ".join(f"{who}: {path}" for who, path in kafka.client_properties(alias).items())
            self.stdout.write(f"{alias}: SASL_SSL with SCRAM-SHA-512; client properties files ({files})")

    def _cluster_choices(self, kafka: LocalKafka) -> dict[str, ClusterChoice]:
        """backup on SCRAM over TLS; on Kafka 2.3.0 (no KRaft, so no secured local cluster) every cluster is
        PLAINTEXT, and the demo says so."""
        from localkafka.manager import ClusterChoice
        from localkafka.security import Security

        secured = kafka.runtime().kraft
        if not secured:
            self.stderr.write(
                self.style.WARNING(
                    f"{SECURED_CLUSTER} runs on PLAINTEXT: Kafka {kafka.version} "
                    "cannot run a secured local cluster (it needs KRaft, Kafka 3.x or 4.x)"
                )
            )
        return {
            alias: ClusterChoice(
                kafka.version, Security.SCRAM if secured and alias == SECURED_CLUSTER else Security.PLAINTEXT
            )
            for alias in DEMO_CLUSTERS
        }

    def _local_kafka(self, local_kafka: type[LocalKafka], broker_port_base: int, zk_port_base: int) -> LocalKafka:
        """The default Kafka 4 comes from Maven Central through Maven; on a machine without Maven (and with no
        version chosen) the demo runs on Kafka 2.3.0 from PyPI instead, and says so."""
        from localkafka.dist import LEGACY_KAFKA_VERSION, VERSION_ENV, LocalKafkaError

        state = settings.STATE_DIR / "demo-kafka"
        kafka = local_kafka(state, broker_port_base, zk_port_base)
        try:
            kafka.runtime()
        except LocalKafkaError as exc:
            if os.environ.get(VERSION_ENV) or shutil.which("mvn") is not None:
                raise CommandError(f"local Kafka {kafka.version} is not available: {exc}") from exc
            self.stderr.write(
                self.style.WARNING(
                    f"Kafka {kafka.version} needs Maven (apt-get install maven), which is not installed: the demo "
                    f"runs on Kafka {LEGACY_KAFKA_VERSION} instead ({VERSION_ENV}={LEGACY_KAFKA_VERSION} silences this)"
                )
            )
            kafka = local_kafka(state, broker_port_base, zk_port_base, version=LEGACY_KAFKA_VERSION)
        return kafka


def _secured_clusters(kafka: LocalKafka) -> dict[str, SecuredCluster]:
    from controlplane.demo.demo_data import SecuredCluster
    from localkafka.security import ADMIN, REPLICATOR, Security

    return {
        alias: SecuredCluster(REPLICATOR, kafka.client_config(alias, REPLICATOR), kafka.client_config(alias, ADMIN))
        for alias, security in kafka.securities().items()
        if alias in DEMO_CLUSTERS and security is Security.SCRAM
    }


DEMO_GROUP = "billing"  # reads orders and payments on us-west while the demo's traffic runs


def _child_commands(port: int, bootstraps: dict[str, str], *, traffic: bool = True) -> dict[str, list[str]]:
    manage_py = str(settings.BASE_DIR / "manage.py")
    celery = [sys.executable, "-m", "celery", "-A", "controlplane"]
    schedule = str(settings.STATE_DIR / "celerybeat-schedule")
    # Replication tasks hold a pool thread for as long as they run (MIRRORPLANE_WORKER_SLOTS of them); the
    # remaining threads serve provisioning and the periodic jobs (beat runs the controller). Threads, not prefork
    # processes: each idle flow then costs a few MB instead of a Django process (docs/operations.md, "Many light
    # flows"; bench/worker_memory.py).
    commands = {
        "web": [sys.executable, manage_py, "runserver", f"127.0.0.1:{port}", "--noreload"],
        "worker": [
            *celery,
            "worker",
            "-l",
            "info",
            "--pool",
            "threads",
            "--concurrency",
            str(int(_child_env()["MIRRORPLANE_WORKER_SLOTS"]) + 4),
        ],
        "beat": [*celery, "beat", "-l", "info", "--schedule", schedule],
    }
    if traffic and TRAFFIC_CLUSTER in bootstraps:
        generator = [sys.executable, "-m", "localkafka.traffic", "--bootstrap", bootstraps[TRAFFIC_CLUSTER]]
        control = ["--control", str(demo_control_dir(settings.STATE_DIR))]
        # The group is the demo's application on us-west: the failover wizard has a live group to move.
        topics = ["--topic", "orders", "--topic", "payments", "--group", DEMO_GROUP]
        commands["traffic"] = [*generator, *topics, "--rate", "20", *control]
    return commands


def _child_env() -> dict[str, str]:
    # 12 slots: the demo's 2 tasks plus 10 for what a new user adds (5 flows of tasks.max 2); the worker line adds 4
    # pool threads for provisioning, sampling, observation and reports (docs/operations.md, "Capacity").
    return {"MIRRORPLANE_WORKER_SLOTS": "12", **os.environ, "PYTHONUNBUFFERED": "1"}


def _ensure_superuser(username: str, password: str) -> None:
    user, _ = get_user_model().objects.get_or_create(username=username)
    user.is_active = user.is_staff = user.is_superuser = True
    user.set_password(password)
    user.save()


def _port_is_free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        # Same option as the web server, so a port left in TIME_WAIT does not count as taken.
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def _wait_until_healthy(url: str, children: ProcessGroup) -> None:
    # No proxy: an http_proxy variable must not route a loopback health check elsewhere.
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    deadline = time.monotonic() + HEALTH_TIMEOUT_SECONDS
    while time.monotonic() < deadline:
        if (dead := children.exited()) is not None:
            raise CommandError(f"{dead.name} exited with code {dead.popen.returncode} during start-up")
        try:
            with opener.open(url, timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            pass  # not listening yet
        time.sleep(0.3)
    raise CommandError(f"{url} did not answer within {HEALTH_TIMEOUT_SECONDS:.0f}s")

"""Every librdkafka client the project builds (replication/ and controlplane/; tests and benchmarks aside) is
constructed as ``Consumer(logged(...))``, ``Producer(logged(...))`` or ``AdminClient(logged(...))``, so each logs
through the one throttled client log. Read from the source (AST): a client built any other way, under any alias
of its class, fails the scan."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
PRODUCTION = ("replication", "controlplane")
CLIENTS = frozenset({"Consumer", "Producer", "AdminClient", "DeserializingConsumer", "SerializingProducer"})
KAFKA_MODULES = ("confluent_kafka", "confluent_kafka.admin")


def unwrapped_clients(source: str, filename: str = "<source>") -> list[str]:
    """``file:line: what`` for every librdkafka client constructed without logged(...), or subclassed."""
    tree = ast.parse(source, filename)
    classes: set[str] = set()  # local names of the client classes
    modules: set[str] = set()  # local names of confluent_kafka and its admin module
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module in KAFKA_MODULES:
            classes |= {a.asname or a.name for a in node.names if a.name in CLIENTS}
            if node.module == "confluent_kafka":
                modules |= {a.asname or a.name for a in node.names if a.name == "admin"}
        elif isinstance(node, ast.Import):
            modules |= {(a.asname or a.name) for a in node.names if a.name in KAFKA_MODULES}

    def is_client(expr: ast.expr) -> bool:
        if isinstance(expr, ast.Name):
            return expr.id in classes
        return isinstance(expr, ast.Attribute) and expr.attr in CLIENTS and ast.unparse(expr.value) in modules

    def is_logged(expr: ast.expr) -> bool:
        return isinstance(expr, ast.Call) and ast.unparse(expr.func).split(".")[-1] == "logged"

    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and is_client(node.func):
            if len(node.args) != 1 or node.keywords or not is_logged(node.args[0]):
                found.append(f"{filename}:{node.lineno}: {ast.unparse(node)[:120]}")
        elif isinstance(node, ast.ClassDef) and any(is_client(base) for base in node.bases):
            found.append(f"{filename}:{node.lineno}: class {node.name} subclasses a librdkafka client")
    return found


def test_every_librdkafka_client_of_the_project_is_constructed_through_logged() -> None:
    found = []
    for package in PRODUCTION:
        for path in sorted((ROOT / package).rglob("*.py")):
            found += unwrapped_clients(path.read_text(), str(path.relative_to(ROOT)))
    assert found == []


def test_the_scan_finds_unwrapped_clients_under_any_name() -> None:
    source = """
import confluent_kafka
import confluent_kafka.admin as kadmin
from confluent_kafka import Consumer as C, Producer
from confluent_kafka.admin import AdminClient
from replication.clientlog import logged

Producer(logged({}))
AdminClient(logged(config))
C(config)
Producer({**logged(config)})
confluent_kafka.Consumer({})
kadmin.AdminClient(settings)
AdminClient(logged({}), logger=log)
class Mine(Producer): ...
"""
    lines = sorted((entry.split(":")[1] for entry in unwrapped_clients(source)), key=int)
    assert lines == ["10", "11", "12", "13", "14", "15"]

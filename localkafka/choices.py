"""What `--clusters` asks for: per alias, a Kafka version, a security kind and a number of brokers."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from localkafka.dist import LEGACY_KAFKA_VERSION, LocalKafkaError, check_version, default_version
from localkafka.security import Security

MAX_BROKERS = 9
_BROKERS_OPTION = re.compile(r"^(\d+)brokers?$")


@dataclass(frozen=True)
class ClusterChoice:
    """What `--clusters` asks of one alias: its Kafka version, how its clients connect, and how many brokers."""

    version: str
    security: Security = Security.PLAINTEXT
    brokers: int = 1

    def __post_init__(self) -> None:
        if not 1 <= self.brokers <= MAX_BROKERS:
            raise LocalKafkaError(f"a local cluster has 1 to {MAX_BROKERS} brokers, not {self.brokers}")
        if self.brokers > 1 and self.version == LEGACY_KAFKA_VERSION:
            raise LocalKafkaError(
                f"Kafka {LEGACY_KAFKA_VERSION} runs one broker per cluster here (with ZooKeeper); "
                f"{self.brokers} brokers need Kafka 3.x or 4.x (KRaft)"
            )


def parse_cluster_choices(value: str, default: str | None = None) -> dict[str, ClusterChoice]:
    """`us-west,us-east`, `old:2.3.0,new:4.3.1`, `src:scram,dst:mtls:4.3.1,plain` or `src:3brokers,dst:3brokers:scram`:
    alias -> its version (default_version() where none is given), security (`scram`, `mtls` or `plaintext`, the
    default) and number of brokers (`<n>brokers`, 1 by default; several need KRaft)."""
    result: dict[str, ClusterChoice] = {}
    for item in (part.strip() for part in value.split(",")):
        if not item:
            continue
        alias, *options = (part.strip() for part in item.split(":"))
        version, security, brokers = "", Security.PLAINTEXT, 1
        for option in options:
            if option in set(Security):
                security = Security(option)
            elif match := _BROKERS_OPTION.match(option):
                brokers = int(match.group(1))
            elif option[:1].isdigit() and not version:
                version = option
            else:
                kinds = ", ".join(kind.value for kind in Security)
                raise LocalKafkaError(
                    f"{item}: {option!r} is neither a Kafka version, a security kind ({kinds}) nor <n>brokers"
                )
        result[alias] = ClusterChoice(check_version(version or default or default_version()), security, brokers)
    return result


def parse_clusters(value: str, default: str | None = None) -> dict[str, str]:
    """`us-west,us-east` or `old:2.3.0,new:4.3.1`: alias -> Kafka version (default_version() where none is given)."""
    return {alias: choice.version for alias, choice in parse_cluster_choices(value, default).items()}


def choices_of(
    aliases: Sequence[str] | Mapping[str, str] | Mapping[str, ClusterChoice], version: str
) -> dict[str, ClusterChoice]:
    if not isinstance(aliases, Mapping):
        return {alias: ClusterChoice(version) for alias in aliases}
    return {
        alias: choice if isinstance(choice, ClusterChoice) else ClusterChoice(choice)
        for alias, choice in aliases.items()
    }


def describe(choice: ClusterChoice) -> str:
    brokers = f", {choice.brokers} brokers" if choice.brokers > 1 else ""
    return f"Kafka {choice.version} on {choice.security}{brokers}"

"""Reads from a cluster on behalf of an API request, with librdkafka's failure reported as a 400 naming it.

Every read first asks each cluster it needs for its metadata with the connectivity check, which gives up as soon
as every broker refused (or after CONNECTIVITY_TIMEOUT_SECONDS) and returns the broker's own error text. Without
it, an unreachable cluster held the request for the reads' own timeouts (30 s and more, one after the other) and
then answered with librdkafka's least helpful message ("Failed to get metadata: Local: Broker transport failure").
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TypeVar

from confluent_kafka import KafkaException
from rest_framework import status
from rest_framework.exceptions import APIException

from controlplane.clusters.models import Cluster
from controlplane.clusters.services import connectivity_check

T = TypeVar("T")


class KafkaUnavailable(APIException):
    """A 400, like an unreachable bootstrap on the connectivity check: the request cannot be served as it stands."""

    status_code = status.HTTP_400_BAD_REQUEST
    default_detail = "A cluster could not be read."
    default_code = "kafka_unavailable"


def reading(alias: str, read: Callable[[], T], clusters: Iterable[Cluster] = ()) -> T:
    """Run a Kafka read once every one of ``clusters`` answers; a failure becomes KafkaUnavailable naming the
    cluster (or ``alias``) and librdkafka's error, never an empty message."""
    clusters = list(clusters)
    _require_answers(clusters)
    try:
        return read()
    except KafkaException as exc:
        error = exc.args[0]
        text = error.str() if hasattr(error, "str") else str(error)
    except TimeoutError as exc:  # concurrent.futures' TimeoutError from an admin future carries no message
        text = str(exc)
    # A cluster that went away during the read: the check's broker error says more than the read's
    # ("Failed to get metadata: Local: Broker transport failure").
    _require_answers(clusters)
    raise KafkaUnavailable(f"{alias}: {text or 'no answer from the cluster in time'}") from None


def _require_answers(clusters: list[Cluster]) -> None:
    for cluster in clusters:
        check = connectivity_check(cluster)
        if not check["ok"]:
            raise KafkaUnavailable(f"{cluster.alias}: {check.get('error') or 'no broker answered'}")

"""Reads from a cluster on behalf of an API request, with librdkafka's failure reported as a 400 naming it."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from confluent_kafka import KafkaException
from rest_framework import status
from rest_framework.exceptions import APIException

T = TypeVar("T")


class KafkaUnavailable(APIException):
    """A 400, like an unreachable bootstrap on the connectivity check: the request cannot be served as it stands."""

    status_code = status.HTTP_400_BAD_REQUEST
    default_detail = "A cluster could not be read."
    default_code = "kafka_unavailable"


def reading(alias: str, read: Callable[[], T]) -> T:
    """Run a Kafka read; its failure becomes KafkaUnavailable naming the cluster and librdkafka's error."""
    try:
        return read()
    except KafkaException as exc:
        error = exc.args[0]
        raise KafkaUnavailable(f"{alias}: {error.str() if hasattr(error, 'str') else error}") from None
    except TimeoutError as exc:
        raise KafkaUnavailable(f"{alias}: {exc}") from None

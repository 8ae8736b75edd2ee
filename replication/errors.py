"""Errors that stop a replication task rather than risk data."""

from __future__ import annotations

from confluent_kafka import KafkaError, KafkaException

# A partition whose leader a client cannot reach yet: a topic or partition created a moment ago, or a leader that
# moved. Waits, not failures, until the caller's deadline. A KRaft broker (Kafka 3.x/4.x) answers offset requests
# for a partition created a moment ago with NOT_LEADER_OR_FOLLOWER until its leadership is applied, where a 2.3.0
# broker with ZooKeeper answered UNKNOWN_TOPIC_OR_PART or LEADER_NOT_AVAILABLE.
LEADER_NOT_READY = (
    KafkaError._UNKNOWN_PARTITION,
    KafkaError.UNKNOWN_TOPIC_OR_PART,
    KafkaError.LEADER_NOT_AVAILABLE,
    KafkaError.NOT_LEADER_FOR_PARTITION,
    KafkaError.FENCED_LEADER_EPOCH,
    KafkaError.UNKNOWN_LEADER_EPOCH,
)


class ReplicationError(RuntimeError):
    """The task cannot go on without risking data: a send failed, or the producer was fenced."""


class AclRefusedError(ReplicationError):
    """A send the target refused for want of an ACL (WRITE on a remote topic): the task stops without storing a
    position past its last acknowledgement, and can start again from its stored positions once the ACL is granted.
    `refusal` is the ACL it lacks (`missing_acl`), the same at every attempt while it lacks it."""

    def __init__(self, message: str, refusal: str) -> None:
        super().__init__(message)
        self.refusal = refusal


# The broker's refusals for want of an ACL, by the resource each one names.
AUTHORIZATION_FAILED = {
    KafkaError.TOPIC_AUTHORIZATION_FAILED: "TOPIC",
    KafkaError.GROUP_AUTHORIZATION_FAILED: "GROUP",
    KafkaError.CLUSTER_AUTHORIZATION_FAILED: "CLUSTER",
    KafkaError.TRANSACTIONAL_ID_AUTHORIZATION_FAILED: "TRANSACTIONAL_ID",
}


def missing_acl(error: KafkaError, cluster: str, operation: str, name: str) -> str | None:
    """What to grant, when error is an authorization failure: `us-east refused READ on GROUP app
    (GROUP_AUTHORIZATION_FAILED): grant it to the flow's principal`; None for any other error."""
    resource = AUTHORIZATION_FAILED.get(error.code())
    if resource is None:
        return None
    target = "the cluster" if resource == "CLUSTER" else f"{resource} {name}"
    return f"{cluster} refused {operation} on {target} ({error.name()}): grant it to the flow's principal"


def named_refusal(exc: KafkaException, cluster: str, operation: str, name: str) -> KafkaException:
    """`exc`, or, when it is an authorization failure, the same error with a text that names what to grant (a bare
    "Broker: Topic authorization failed" says neither which ACL nor on what). Callers keep catching KafkaException
    and reading `args[0].str()` and `.code()`."""
    error = exc.args[0] if exc.args else None
    text = missing_acl(error, cluster, operation, name) if isinstance(error, KafkaError) else None
    return exc if text is None else KafkaException(KafkaError(error.code(), text))  # type: ignore[union-attr]  # error is set when text is

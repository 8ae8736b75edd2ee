"""Resetting a consumer group's committed offsets outside a failover (what ``kafka-consumer-groups.sh
--reset-offsets`` does): to the earliest or latest offset, to the first offset at or after a time, or to an offset.

Two steps. ``preview`` reads the group and the partitions and says, per partition, what would change; it returns
the rows signed (``token``), so the apply that follows writes exactly what was shown. ``apply`` checks again that
the group is still EMPTY and still holds the offsets the preview read, then writes them.

The group must have no members: the rule GroupOffsetSync and a failover's apply step follow, written once in
``replication.offsets.groupoffsets`` (``GroupState.writable``). A group with members is refused, preview included,
as Kafka's tool refuses a dry run. Every call is one bounded admin request (``browse.READ_TIMEOUT``) on a client
built from the cluster's own settings; nothing here runs inside a database transaction.
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from confluent_kafka import KafkaError, KafkaException, TopicPartition
from confluent_kafka.admin import AdminClient, OffsetSpec
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.core import signing
from rest_framework import status
from rest_framework.exceptions import APIException, ValidationError

from controlplane.audit.services import record
from controlplane.clusters import browse
from controlplane.clusters.models import Cluster
from controlplane.clusters.reads import KafkaUnavailable, reading
from replication.offsets.groupoffsets import ConsumerGroups, GroupState, Partition

EARLIEST, LATEST, TIMESTAMP, OFFSET = "earliest", "latest", "timestamp", "offset"
TARGETS = (EARLIEST, LATEST, TIMESTAMP, OFFSET)
PREVIEWED = "cluster.preview_group_offsets_reset"
RESET = "cluster.reset_group_offsets"
# A preview older than this is refused at apply: the group and the logs it describes are no longer what was shown.
PREVIEW_MAX_AGE = datetime.timedelta(minutes=10)
_SALT = "controlplane.clusters.groupreset"
_JOINED = frozenset({KafkaError.UNKNOWN_MEMBER_ID, KafkaError.REBALANCE_IN_PROGRESS, KafkaError.ILLEGAL_GENERATION})
Actor = AbstractBaseUser | AnonymousUser


class GroupNotEmpty(APIException):
    """409: the group has members or is rebalancing; its offsets are written only while it is EMPTY."""

    status_code = status.HTTP_409_CONFLICT
    default_code = "group_not_empty"


class GroupMoved(APIException):
    """409: a committed offset changed between the preview and the apply."""

    status_code = status.HTTP_409_CONFLICT
    default_code = "group_moved"


class BrokerRefused(APIException):
    """409: the broker refused some partitions' writes (a consumer joined after the check: UNKNOWN_MEMBER_ID)."""

    status_code = status.HTTP_409_CONFLICT
    default_code = "broker_refused"


@dataclass(frozen=True)
class ResetSpec:
    """What to reset to, and where: a topic (all its partitions), one partition of it, or (no topic) every
    partition the group has committed an offset for."""

    to: str
    timestamp_ms: int | None = None
    offset: int | None = None
    topic: str | None = None
    partition: int | None = None


@dataclass(frozen=True)
class PartitionReset:
    """One partition: the committed offset (None: nothing committed), the offset it would be set to, the log's
    start and end offsets, and the records a consumer would read again (new before current) or skip (new after)."""

    topic: str
    partition: int
    current_offset: int | None
    new_offset: int
    log_start: int
    log_end: int
    reread: int = field(init=False)
    skipped: int = field(init=False)

    def __post_init__(self) -> None:
        moved = 0 if self.current_offset is None else self.new_offset - self.current_offset
        object.__setattr__(self, "reread", max(0, -moved))
        object.__setattr__(self, "skipped", max(0, moved))


def to_millis(moment: datetime.datetime) -> int:
    """Milliseconds since the epoch, as Kafka's record timestamps count them (an aware datetime)."""
    return (moment - datetime.datetime.fromtimestamp(0, datetime.UTC)) // datetime.timedelta(milliseconds=1)


def preview(cluster: Cluster, group: str, spec: ResetSpec, actor: Actor) -> dict[str, Any]:
    """Per partition, the committed offset and the one it would be reset to; refused unless the group is EMPTY."""

    def read() -> dict[str, Any]:
        client = browse.admin(cluster)
        state = _writable_state(ConsumerGroups(client, browse.READ_TIMEOUT), group)
        committed = ConsumerGroups(client, browse.READ_TIMEOUT).committed(group)
        rows = _rows(client, spec, committed)
        return {"group": group, "state": state.state, "partitions": rows}

    found = reading(cluster.alias, read, [cluster])
    rows: list[PartitionReset] = found["partitions"]
    token = signing.dumps(
        {"cluster": cluster.pk, "group": group, "spec": asdict(spec), "rows": [_signed(r) for r in rows]},
        salt=_SALT,
        compress=True,
    )
    after = {"cluster": cluster.alias, "group": group, "to": spec.to, "topic": spec.topic, "partitions": len(rows)}
    record(actor, PREVIEWED, cluster, after=after)
    return {**found, **_totals(rows), "preview": token}


def apply(cluster: Cluster, group: str, spec: ResetSpec, token: str, actor: Actor) -> dict[str, Any]:
    """Write the previewed offsets, once the group is still EMPTY and still at the previewed offsets. Audited."""
    rows = _previewed(cluster, group, spec, token)

    def write() -> dict[Partition, str]:
        groups = ConsumerGroups(browse.admin(cluster), browse.READ_TIMEOUT)
        _writable_state(groups, group)
        now = groups.committed(group)
        moved = [
            f"{t}-{p} was {_shown(old)}, is now {_shown(now.get((t, p)))}"
            for t, p, old, _ in rows
            if now.get((t, p)) != old
        ]
        if moved:
            raise GroupMoved(f"the group moved since the preview: {'; '.join(moved[:10])}. Preview again.")
        try:
            return groups.alter(group, [TopicPartition(t, p, new) for t, p, _, new in rows])
        except KafkaException as exc:
            # A consumer joined between the check and the write: the broker refuses an admin commit then.
            if exc.args[0].code() in _JOINED:
                raise GroupNotEmpty(f"{group} got a member before the write: {exc.args[0].str()}") from None
            raise

    refused = reading(cluster.alias, write, [cluster])
    written: list[dict[str, Any]] = [
        {"topic": t, "partition": p, "old_offset": old, "new_offset": new} for t, p, old, new in rows
    ]
    audited = [row | _refusal(refused, row["topic"], row["partition"]) for row in written]
    record(
        actor, RESET, cluster, after={"cluster": cluster.alias, "group": group, "to": spec.to, "partitions": audited}
    )
    if refused:
        shown = "; ".join(f"{t}-{p}: {error}" for (t, p), error in sorted(refused.items()))
        raise BrokerRefused(f"the broker refused: {shown}")
    return {"group": group, "partitions": written}


def _writable_state(groups: ConsumerGroups, group: str) -> GroupState:
    states, errors = groups.describe_each([group])
    if group in errors:
        if errors[group].code() != KafkaError.GROUP_ID_NOT_FOUND:  # brokers since 3.x: no such group
            raise KafkaException(errors[group])
        return GroupState(group, "DEAD", ())
    state = states[group]
    if not state.writable:
        members = len(state.members)
        raise GroupNotEmpty(
            f"{group} has {members} member{'' if members == 1 else 's'} and is {state.state}: offsets are reset "
            "only in an EMPTY group. Stop its consumers first."
        )
    return state


def _rows(client: AdminClient, spec: ResetSpec, committed: Mapping[Partition, int]) -> list[PartitionReset]:
    keys = _partitions(client, spec, committed)
    start, end = browse.offsets(client, keys)
    silent = [f"{t}-{p}" for t, p in keys if start.get((t, p)) is None or end.get((t, p)) is None]
    if silent:
        raise KafkaUnavailable(f"no offsets from the leader of {', '.join(silent[:10])}: try again")
    wanted = _targets(client, spec, keys, start, end)
    return [
        PartitionReset(t, p, committed.get((t, p)), wanted[(t, p)], start[(t, p)] or 0, end[(t, p)] or 0)
        for t, p in keys
    ]


def _partitions(client: AdminClient, spec: ResetSpec, committed: Mapping[Partition, int]) -> list[Partition]:
    if spec.topic is None:
        if not committed:
            raise ValidationError({"topic": ["The group has committed no offset: name the topic to reset."]})
        return sorted(committed)
    meta = browse.listed_topics(client).get(spec.topic)
    if meta is None:
        raise ValidationError({"topic": [f"No topic {spec.topic!r} on this cluster."]})
    if spec.partition is None:
        return [(spec.topic, p) for p in sorted(meta.partitions)]
    if spec.partition not in meta.partitions:
        last = len(meta.partitions) - 1
        raise ValidationError({"partition": [f"{spec.topic} has partitions 0 to {last}, not {spec.partition}."]})
    return [(spec.topic, spec.partition)]


def _targets(
    client: AdminClient, spec: ResetSpec, keys: list[Partition], start: browse.Offsets, end: browse.Offsets
) -> dict[Partition, int]:
    if spec.to == EARLIEST:
        return {key: start[key] or 0 for key in keys}
    if spec.to == LATEST:
        return {key: end[key] or 0 for key in keys}
    if spec.to == TIMESTAMP:
        return _at_time(client, keys, spec.timestamp_ms or 0, end)
    offset = spec.offset or 0
    outside = [
        f"{t}-{p} holds {start[(t, p)]} to {end[(t, p)]}"
        for t, p in keys
        if not (start[(t, p)] or 0) <= offset <= (end[(t, p)] or 0)
    ]
    if outside:
        raise ValidationError({"offset": [f"{offset} is outside the log: {'; '.join(outside[:10])}."]})
    return dict.fromkeys(keys, offset)


def _at_time(client: AdminClient, keys: list[Partition], millis: int, end: browse.Offsets) -> dict[Partition, int]:
    """The first offset whose record's timestamp is at or after ``millis`` (ListOffsets, as offsets_for_times);
    the end offset where no record is that late, as Kafka's tool does."""
    spec = OffsetSpec.for_timestamp(millis)
    futures = client.list_offsets({TopicPartition(t, p): spec for t, p in keys}, request_timeout=browse.READ_TIMEOUT)
    found = {}
    for tp, future in futures.items():
        offset = int(future.result(timeout=browse.READ_TIMEOUT + 2.0).offset)
        key = (tp.topic, tp.partition)
        found[key] = offset if offset >= 0 else end[key] or 0
    return found


def _totals(rows: list[PartitionReset]) -> dict[str, int]:
    return {"reread": sum(r.reread for r in rows), "skipped": sum(r.skipped for r in rows)}


def _signed(row: PartitionReset) -> list[Any]:
    return [row.topic, row.partition, row.current_offset, row.new_offset]


def _previewed(cluster: Cluster, group: str, spec: ResetSpec, token: str) -> list[tuple[str, int, int | None, int]]:
    """The rows of the preview ``token``, which must be recent and made for this cluster, group and reset."""
    try:
        signed = signing.loads(token, salt=_SALT, max_age=PREVIEW_MAX_AGE)
    except signing.SignatureExpired:
        raise ValidationError({"preview": ["The preview is older than 10 minutes: preview again."]}) from None
    except signing.BadSignature:
        raise ValidationError({"preview": ["Not a preview this server made."]}) from None
    if signed["cluster"] != cluster.pk or signed["group"] != group or signed["spec"] != asdict(spec):
        raise ValidationError({"preview": ["The preview was made for another cluster, group or reset."]})
    return [(str(t), int(p), None if old is None else int(old), int(new)) for t, p, old, new in signed["rows"]]


def _refusal(refused: Mapping[Partition, str], topic: str, partition: int) -> dict[str, str]:
    return {"refused": refused[(topic, partition)]} if (topic, partition) in refused else {}


def _shown(offset: int | None) -> str:
    return "nothing committed" if offset is None else str(offset)

"""Writing audit records, and the snapshot of a model's values that goes into ``before``/``after``."""

from __future__ import annotations

import datetime
import decimal
from collections.abc import Iterable
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db import models

from controlplane.audit.models import AuditRecord

REDACTED = "********"
# Fields that hold credentials, in any model: only whether they are set is recorded.
SECRET_FIELDS = frozenset({"sasl_password_encrypted", "ssl_key_pem_encrypted", "url_encrypted"})


def record(
    actor: AbstractBaseUser | AnonymousUser | None,
    action: str,
    obj: models.Model | None,
    before: dict[str, Any] | None = None,
    after: dict[str, Any] | None = None,
    actor_username: str = "",
) -> AuditRecord:
    """Store one audit record; ``before``/``after`` are snapshots (see ``snapshot``) or plain JSON values.

    ``actor_username`` names an actor who is not a user, such as the name a failed login tried.
    """
    audit_record = _unsaved(actor, action, obj, before, after, actor_username)
    audit_record.save()
    return audit_record


def record_created(actor: AbstractBaseUser | AnonymousUser | None, action: str, objs: Iterable[models.Model]) -> None:
    """One ``action`` record per saved object, with its snapshot as ``after``, in one bulk insert."""
    AuditRecord.objects.bulk_create([_unsaved(actor, action, obj, None, snapshot(obj)) for obj in objs])


def record_updated(
    actor: AbstractBaseUser | AnonymousUser | None,
    action: str,
    changed: Iterable[tuple[models.Model, dict[str, Any]]],
) -> None:
    """One ``action`` record per saved object with its snapshot before the change (``snapshot``, taken by the
    caller) and after, in one bulk insert."""
    AuditRecord.objects.bulk_create([_unsaved(actor, action, obj, before, snapshot(obj)) for obj, before in changed])


def _unsaved(
    actor: AbstractBaseUser | AnonymousUser | None,
    action: str,
    obj: models.Model | None,
    before: dict[str, Any] | None,
    after: dict[str, Any] | None,
    actor_username: str = "",
) -> AuditRecord:
    user = actor if isinstance(actor, get_user_model()) else None
    return AuditRecord(
        actor=user,
        actor_username=user.get_username() if user is not None else actor_username[:150],
        action=action,
        object_type=obj._meta.label_lower if obj is not None else "",
        object_id=str(obj.pk) if obj is not None and obj.pk is not None else "",
        object_repr=str(obj)[:200] if obj is not None else "",
        before=before,
        after=after,
    )


def snapshot(obj: models.Model) -> dict[str, Any]:
    """The object's concrete field values as JSON, foreign keys by their string form, credentials redacted."""
    values: dict[str, Any] = {}
    for field in obj._meta.concrete_fields:
        if field.name in SECRET_FIELDS:
            values[field.name.removesuffix("_encrypted")] = REDACTED if getattr(obj, field.attname) else ""
        elif field.is_relation:
            related = getattr(obj, field.name)
            values[field.name] = str(related) if related is not None else None
        else:
            values[field.name] = _json(getattr(obj, field.attname))
    return values


def _json(value: Any) -> Any:
    if isinstance(value, datetime.datetime | datetime.date):
        return value.isoformat()
    if isinstance(value, decimal.Decimal):
        return str(value)
    return value

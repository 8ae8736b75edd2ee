"""Issuing and revoking API tokens, each with its audit record (which never holds the secret)."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone

from controlplane.accounts.models import ApiToken
from controlplane.audit.services import record

Actor = AbstractBaseUser | AnonymousUser | None

REVOKED = "revoked"
PASSWORD_CHANGED = "password changed"


def issue(
    user: AbstractBaseUser, actor: Actor, hours: int | None = None, name: str = "", not_after: datetime | None = None
) -> tuple[ApiToken, str]:
    """A new token of ``user`` and its secret, which is not stored and cannot be shown again.

    It expires after ``hours`` (MIRRORPLANE_TOKEN_TTL_HOURS by default), and never after ``not_after``.
    """
    expiry = timezone.now() + timedelta(hours=settings.MIRRORPLANE_TOKEN_TTL_HOURS if hours is None else hours)
    if not_after is not None:
        expiry = min(expiry, not_after)
    with transaction.atomic():
        # knox's create() takes a life, not a moment; the moment is set before anyone can see the token.
        token, secret = ApiToken.objects.create(user=user, expiry=None, name=name)
        token.expiry = expiry
        token.save(update_fields=["expiry"])
        record(actor, "token.create", token, after=summary(token))
    return token, secret


def refusal_to_issue(user: AbstractBaseUser) -> str | None:
    """Why ``user`` may not get a new token through the API, or None.

    With MIRRORPLANE_LOCAL_LOGIN=false a local account (one with a usable password) gets no new token: otherwise a
    token issued before would let it keep renewing its access. Its tokens already issued work until they expire or
    are revoked, and ``manage.py token create`` (shell access) still issues one.
    """
    if not settings.MIRRORPLANE_LOCAL_LOGIN and user.has_usable_password():
        return "Local login is off (MIRRORPLANE_LOCAL_LOGIN=false): a local account cannot create API tokens."
    return None


def revoke(token: ApiToken, actor: Actor, reason: str = REVOKED) -> None:
    """Delete the token: it stops working at once."""
    before, pk = summary(token), token.pk
    with transaction.atomic():
        token.delete()
        token.pk = pk  # so the record names the revoked token's id
        record(actor, "token.revoke", token, before=before, after={"reason": reason})


def revoke_all(user: AbstractBaseUser, actor: Actor, reason: str = REVOKED) -> int:
    """Revoke every token of ``user``; the number revoked."""
    with transaction.atomic():
        tokens = list(ApiToken.objects.filter(user=user).select_related("user"))
        for token in tokens:
            revoke(token, actor, reason)
    return len(tokens)


def live_tokens() -> QuerySet[ApiToken]:
    """Tokens that have not expired (knox deletes an expired one when it is next presented)."""
    tokens: QuerySet[ApiToken] = ApiToken.objects.filter(expiry__gt=timezone.now()).select_related("user")
    return tokens


def summary(token: ApiToken) -> dict[str, Any]:
    """What the audit log keeps of a token: no digest and no more of the secret than the list shows."""
    return {
        "user": token.user.get_username(),
        "name": token.name,
        "prefix": token.prefix,
        "created": token.created.isoformat() if token.created else None,
        "expiry": token.expiry.isoformat() if token.expiry else None,
    }

"""Receivers: a password change revokes the user's API tokens; logins, failed logins and lockouts are audited.

The login records never hold a password: a failed login's record keeps only the user name it tried (Django
already masks the password in the signal's credentials) and the client's address.
"""

from __future__ import annotations

from typing import Any

from axes.helpers import get_client_ip_address
from axes.signals import user_locked_out
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.contrib.auth.signals import user_logged_in, user_login_failed
from django.db.models.signals import post_save, pre_save
from django.http import HttpRequest

from controlplane.accounts import services
from controlplane.audit.services import record

# Set on a user between pre_save and post_save when the save changes the stored password hash.
_PASSWORD_CHANGED = "_mirrorplane_password_changed"


def connect() -> None:
    user_model = get_user_model()
    pre_save.connect(note_password_change, sender=user_model, dispatch_uid="accounts.note_password_change")
    post_save.connect(revoke_tokens_on_password_change, sender=user_model, dispatch_uid="accounts.revoke_tokens")
    user_logged_in.connect(audit_login, dispatch_uid="accounts.audit_login")
    user_login_failed.connect(audit_login_failure, dispatch_uid="accounts.audit_login_failure")
    user_locked_out.connect(audit_lockout, dispatch_uid="accounts.audit_lockout")


def note_password_change(
    sender: type[AbstractBaseUser],
    instance: AbstractBaseUser,
    raw: bool = False,
    update_fields: frozenset[str] | None = None,
    **kwargs: Any,
) -> None:
    """Mark the user if this save stores a password hash other than the one in the database.

    Any path counts (the admin, ``changepassword``, ``set_password`` and save, a hash written directly), except
    Django's upgrade of a hash at login: same password, new hasher parameters, saved alone with ``_password``
    cleared, which is how Django itself tells it from a change (``AbstractBaseUser.check_password``).
    """
    if raw or instance.pk is None or (update_fields is not None and "password" not in update_fields):
        return
    if update_fields == frozenset({"password"}) and getattr(instance, "_password", None) is None:
        return
    stored = sender._default_manager.filter(pk=instance.pk).values_list("password", flat=True).first()
    setattr(instance, _PASSWORD_CHANGED, stored is not None and stored != instance.password)


def revoke_tokens_on_password_change(sender: type[AbstractBaseUser], instance: AbstractBaseUser, **kwargs: Any) -> None:
    if instance.__dict__.pop(_PASSWORD_CHANGED, False):
        services.revoke_all(instance, None, services.PASSWORD_CHANGED)


def audit_login(sender: Any, request: HttpRequest | None, user: AbstractBaseUser, **kwargs: Any) -> None:
    record(user, "auth.login", user, after={"remote_addr": _address(request)})


def audit_login_failure(
    sender: Any, credentials: dict[str, Any], request: HttpRequest | None = None, **kwargs: Any
) -> None:
    tried = credentials.get(get_user_model().USERNAME_FIELD, credentials.get("username", ""))
    record(None, "auth.login_failed", None, after={"remote_addr": _address(request)}, actor_username=str(tried or ""))


def audit_lockout(
    sender: Any, request: HttpRequest | None, username: str | None, ip_address: str | None, **kwargs: Any
) -> None:
    address = ip_address or _address(request)
    record(None, "auth.lockout", None, after={"remote_addr": address}, actor_username=username or "")


def _address(request: HttpRequest | None) -> str | None:
    return get_client_ip_address(request) if request is not None else None

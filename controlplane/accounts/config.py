"""Readers of the single sign-on variables: a group-to-role map, and the LDAP group type.

Used by ``settings.py``, so this module imports no models. Like ``controlplane.env``, a malformed value raises
``ImproperlyConfigured`` naming the variable.
"""

from __future__ import annotations

import json
import os
from typing import TypeVar

from django.core.exceptions import ImproperlyConfigured
from django_auth_ldap.config import (
    ActiveDirectoryGroupType,
    GroupOfNamesType,
    GroupOfUniqueNamesType,
    LDAPGroupType,
    PosixGroupType,
)

T = TypeVar("T")

# The role names of controlplane.core.permissions.ROLES (a test holds them equal); settings cannot import DRF.
ROLE_NAMES = ("viewer", "operator", "admin")
LDAP_GROUP_TYPES: dict[str, type[LDAPGroupType]] = {
    "groupOfNames": GroupOfNamesType,
    "groupOfUniqueNames": GroupOfUniqueNamesType,
    "posixGroup": PosixGroupType,
    "activeDirectory": ActiveDirectoryGroupType,
}


def env_role_groups(name: str, fold_case: bool = False) -> dict[str, str]:
    """A JSON object from group to role, e.g. ``{"kafka-admins": "admin", "kafka-ops": "operator"}``.

    ``fold_case`` lower-cases the groups, for LDAP distinguished names, which compare case-insensitively.
    """
    raw = os.environ.get(name, "").strip()
    if not raw:
        return {}
    try:
        value = json.loads(raw)
    except ValueError:
        raise ImproperlyConfigured(f'{name}: expected a JSON object such as {{"kafka-admins": "admin"}}') from None
    if not isinstance(value, dict) or not value:
        raise ImproperlyConfigured(f'{name}: expected a non-empty JSON object such as {{"kafka-admins": "admin"}}')
    mapping: dict[str, str] = {}
    for group, role in value.items():
        if not isinstance(role, str) or role not in ROLE_NAMES:
            raise ImproperlyConfigured(
                f"{name}: group {group!r} maps to {role!r}; a role is one of {', '.join(ROLE_NAMES)}"
            )
        if not group.strip():
            raise ImproperlyConfigured(f"{name}: a group name is empty")
        mapping[group.strip().lower() if fold_case else group.strip()] = role
    return mapping


def ldap_group_type(name: str, value: str) -> LDAPGroupType:
    """The django-auth-ldap group type named ``value`` (one of ``LDAP_GROUP_TYPES``)."""
    if value not in LDAP_GROUP_TYPES:
        raise ImproperlyConfigured(f"{name}: expected one of {', '.join(LDAP_GROUP_TYPES)}, got {value!r}")
    return LDAP_GROUP_TYPES[value]()


def required(name: str, value: T, because: str) -> T:
    """``value``, which ``because`` makes required."""
    if not value:
        raise ImproperlyConfigured(f"{name}: required when {because}")
    return value

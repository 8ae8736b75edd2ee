"""Roles from a directory's groups: at each single sign-on or LDAP login, the user's roles become exactly those
their groups map to, so a user removed from a group loses its role at their next login."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from django.contrib.auth.models import AbstractUser, Group
from django.db import transaction

from controlplane.audit.services import record
from controlplane.core.permissions import ROLES


def mapped_roles(groups: Iterable[str], role_groups: Mapping[str, str], fold_case: bool = False) -> set[str]:
    """The roles ``role_groups`` gives to a member of ``groups``; ``fold_case`` for LDAP's distinguished names."""
    if fold_case:
        names = {group.lower() for group in groups}
        return {role for group, role in role_groups.items() if group.lower() in names}
    names = set(groups)
    return {role for group, role in role_groups.items() if group in names}


def apply_roles(user: AbstractUser, roles: set[str], source: str) -> None:
    """Give ``user`` the role groups ``roles`` and no other; a change is audited as ``auth.roles``."""
    with transaction.atomic():
        held = set(user.groups.filter(name__in=ROLES).values_list("name", flat=True))
        if held == roles:
            return
        user.groups.remove(*Group.objects.filter(name__in=held - roles))
        user.groups.add(*(Group.objects.get_or_create(name=role)[0] for role in sorted(roles - held)))
        record(user, "auth.roles", user, before={"roles": sorted(held)}, after={"roles": sorted(roles), "by": source})

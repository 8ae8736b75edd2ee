"""Roles: Django groups ``viewer``, ``operator`` and ``admin`` (a superuser counts as admin).

viewer reads; operator also runs operations (pause, resume, restart, connectivity check, offsets, failover);
admin does everything. A user with no role is refused everywhere, like an anonymous one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.contrib.auth.models import AbstractUser, AnonymousUser
from rest_framework.permissions import SAFE_METHODS, BasePermission

if TYPE_CHECKING:  # rest_framework.views imports the default permission classes, i.e. this module
    from rest_framework.request import Request
    from rest_framework.views import APIView

VIEWER = "viewer"
OPERATOR = "operator"
ADMIN = "admin"
ROLES = (VIEWER, OPERATOR, ADMIN)
_RANK = {VIEWER: 1, OPERATOR: 2, ADMIN: 3}


def role_of(user: AbstractUser | AnonymousUser | None) -> str | None:
    """The user's strongest role, or None for anonymous, inactive and role-less users."""
    if user is None or not user.is_authenticated or not user.is_active:
        return None
    if user.is_superuser:
        return ADMIN
    names = set(user.groups.filter(name__in=ROLES).values_list("name", flat=True))
    return max(names, key=_RANK.__getitem__, default=None)


def has_role(user: AbstractUser | AnonymousUser | None, role: str) -> bool:
    """True if the user holds ``role`` or a stronger one."""
    held = role_of(user)
    return held is not None and _RANK[held] >= _RANK[role]


def required_role(request: Request, view: APIView) -> str:
    """viewer for reads, operator for the view's ``operator_actions``, admin for anything else."""
    action = getattr(view, "action", None)
    if action in getattr(view, "operator_actions", ()):
        return OPERATOR
    if request.method in SAFE_METHODS or action in getattr(view, "viewer_actions", ()):
        return VIEWER
    return ADMIN


class HasRole(BasePermission):
    """The default permission of every API view: the role ``required_role`` asks for."""

    message = "Your role does not allow this request."

    def has_permission(self, request: Request, view: APIView) -> bool:
        return has_role(request.user, required_role(request, view))


class IsViewer(BasePermission):
    def has_permission(self, request: Request, view: APIView) -> bool:
        return has_role(request.user, VIEWER)


class IsOperator(BasePermission):
    def has_permission(self, request: Request, view: APIView) -> bool:
        return has_role(request.user, OPERATOR)

"""Template context: the user's role, so pages show operations only to those allowed to run them."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest

from controlplane.core.permissions import ADMIN, OPERATOR, has_role, role_of


def role(request: HttpRequest) -> dict[str, Any]:
    """``role`` (viewer/operator/admin or None), ``can_operate`` and ``can_admin``.

    Hiding a button is a courtesy; the API refuses the request anyway.
    """
    user = getattr(request, "user", None)
    return {
        "role": role_of(user),
        "can_operate": has_role(user, OPERATOR),
        "can_admin": has_role(user, ADMIN),
    }

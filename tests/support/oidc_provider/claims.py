"""The ``groups`` scope: a user's groups as the test last wrote them to the groups file."""

from __future__ import annotations

import json
from typing import Any

from django.conf import settings
from oidc_provider.lib.claims import ScopeClaims


class GroupsClaims(ScopeClaims):  # type: ignore[misc]  # django-oidc-provider has no type hints
    def scope_groups(self) -> dict[str, Any]:
        groups = json.loads(settings.OIDC_GROUPS_FILE.read_text(encoding="utf-8"))
        return {"groups": groups.get(self.user.get_username(), [])}


def userinfo(claims: dict[str, Any], user: Any) -> dict[str, Any]:
    """The standard claims the provider knows of a user (django-oidc-provider's OIDC_USERINFO)."""
    claims.update(preferred_username=user.get_username(), email=user.email, email_verified=True, name=user.username)
    return claims

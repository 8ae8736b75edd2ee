"""``{% login_options as options %}``: which ways to log in the login page offers."""

from __future__ import annotations

from django import template
from django.conf import settings

register = template.Library()


@register.simple_tag
def login_options() -> dict[str, object]:
    """``password``: the form is shown (local login or LDAP); ``oidc``: the single sign-on button, with its label."""
    return {
        "local": settings.MIRRORPLANE_LOCAL_LOGIN,
        "ldap": settings.MIRRORPLANE_LDAP,
        "password": settings.MIRRORPLANE_LOCAL_LOGIN or settings.MIRRORPLANE_LDAP,
        "oidc": settings.MIRRORPLANE_OIDC,
        "oidc_label": settings.MIRRORPLANE_OIDC_LABEL,
    }

"""Authentication backends for single sign-on (OpenID Connect) and LDAP, each setting the user's roles from their
groups at every login.

Rules both keep:

- A user whose groups map to no role is refused, and loses any role they held, so a session they still have is
  refused too (roles are read on each request).
- A directory login never takes over a local account: a user that has a usable password (made with
  ``createsuperuser`` or the admin) is refused, whatever the directory says.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.auth.models import AbstractUser
from django.core.exceptions import SuspiciousOperation
from django.db.models import QuerySet
from django_auth_ldap.backend import LDAPBackend
from mozilla_django_oidc.auth import OIDCAuthenticationBackend

from controlplane.accounts.oidc import oidc_setting
from controlplane.accounts.roles import apply_roles, mapped_roles


class OidcBackend(OIDCAuthenticationBackend):  # type: ignore[misc]  # the library is unannotated: its class is Any
    """OpenID Connect's authorization-code flow; the user name is the MIRRORPLANE_OIDC_USERNAME_CLAIM claim."""

    get_settings = staticmethod(oidc_setting)
    claims: dict[str, Any]

    def verify_token(self, token: str, **kwargs: Any) -> dict[str, Any]:
        payload: dict[str, Any] = super().verify_token(token, **kwargs)
        if payload.get("iss") != settings.MIRRORPLANE_OIDC_ISSUER:
            raise SuspiciousOperation("the ID token's issuer is not MIRRORPLANE_OIDC_ISSUER")
        return payload

    def verify_claims(self, claims: dict[str, Any]) -> bool:
        # mozilla-django-oidc passes the userinfo claims here alone; get_or_create_user reads the groups from them.
        self.claims = claims
        name = claims.get(settings.MIRRORPLANE_OIDC_USERNAME_CLAIM)
        return isinstance(name, str) and bool(name.strip())

    def get_username(self, claims: dict[str, Any]) -> str:
        return str(claims[settings.MIRRORPLANE_OIDC_USERNAME_CLAIM]).strip()

    def filter_users_by_claims(self, claims: dict[str, Any]) -> QuerySet[AbstractUser]:
        users: QuerySet[AbstractUser] = self.UserModel.objects.filter(username=self.get_username(claims))
        return users

    def update_user(self, user: AbstractUser, claims: dict[str, Any]) -> AbstractUser:
        if user.has_usable_password():
            raise SuspiciousOperation(f"{user.get_username()!r} is a local account")
        email = claims.get("email") or ""
        if email != user.email:
            user.email = email
            user.save(update_fields=["email"])
        return user

    def get_or_create_user(self, access_token: str, id_token: str, payload: dict[str, Any]) -> AbstractUser | None:
        self.claims = {}
        user: AbstractUser | None = super().get_or_create_user(access_token, id_token, payload)
        if user is None:
            return None
        groups = self.claims.get(settings.MIRRORPLANE_OIDC_GROUPS_CLAIM) or []
        if isinstance(groups, str):
            groups = [groups]
        roles = mapped_roles(groups, settings.MIRRORPLANE_OIDC_ROLE_GROUPS)
        apply_roles(user, roles, "oidc")
        if not roles:
            raise SuspiciousOperation(f"{user.get_username()!r} is in no group of MIRRORPLANE_OIDC_ROLE_GROUPS")
        return user


class LdapBackend(LDAPBackend):  # type: ignore[misc]  # the library is unannotated: its class is Any
    """A user name and password checked by binding to the LDAP server; roles from the user's LDAP groups."""

    def get_or_build_user(self, username: str, ldap_user: Any) -> tuple[AbstractUser, bool]:
        user, built = super().get_or_build_user(username, ldap_user)
        if not built and user.has_usable_password():
            raise ldap_user.AuthenticationFailed(f"{username!r} is a local account")
        return user, built

    def authenticate_ldap_user(self, ldap_user: Any, password: str) -> AbstractUser | None:
        user: AbstractUser | None = super().authenticate_ldap_user(ldap_user, password)
        if user is None:
            return None
        roles = mapped_roles(ldap_user.group_dns, settings.MIRRORPLANE_LDAP_ROLE_GROUPS, fold_case=True)
        apply_roles(user, roles, "ldap")
        return user if roles else None

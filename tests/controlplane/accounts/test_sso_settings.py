"""The single sign-on variables: role maps are checked at start-up and an error names the variable; the client
secret and the bind password never appear in an error or in the login page."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.test import Client

from controlplane.accounts.config import ROLE_NAMES, env_role_groups
from controlplane.accounts.roles import mapped_roles
from controlplane.core.permissions import ROLES
from tests.controlplane.test_settings_from_env import REPO, manage_check

SECRET = "client-secret-never-shown-42"


def test_the_settings_know_the_same_roles_as_the_permissions() -> None:
    assert ROLE_NAMES == ROLES


def test_a_role_map_reads_groups_to_roles(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MAP", '{"kafka-admins": "admin", " kafka-ops ": "operator"}')
    assert env_role_groups("MAP") == {"kafka-admins": "admin", "kafka-ops": "operator"}
    monkeypatch.setenv("MAP", '{"CN=Admins,DC=example": "admin"}')
    assert env_role_groups("MAP", fold_case=True) == {"cn=admins,dc=example": "admin"}
    monkeypatch.delenv("MAP")
    assert env_role_groups("MAP") == {}


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        ("kafka-admins=admin", "expected a JSON object"),
        ("[]", "expected a non-empty JSON object"),
        ('{"kafka-admins": "root"}', "group 'kafka-admins' maps to 'root'; a role is one of viewer, operator, admin"),
        ('{" ": "admin"}', "a group name is empty"),
    ],
)
def test_a_malformed_role_map_names_the_variable(monkeypatch: pytest.MonkeyPatch, value: str, reason: str) -> None:
    monkeypatch.setenv("MIRRORPLANE_OIDC_ROLE_GROUPS", value)
    with pytest.raises(ImproperlyConfigured) as raised:
        env_role_groups("MIRRORPLANE_OIDC_ROLE_GROUPS")
    assert str(raised.value).startswith("MIRRORPLANE_OIDC_ROLE_GROUPS: ")
    assert reason in str(raised.value)


def test_the_roles_are_those_of_the_mapped_groups_only() -> None:
    role_groups = {"kafka-admins": "admin", "kafka-ops": "operator", "cn=ro,dc=example": "viewer"}
    assert mapped_roles(["kafka-ops", "everyone"], role_groups) == {"operator"}
    assert mapped_roles(["KAFKA-OPS"], role_groups) == set()
    assert mapped_roles(["CN=RO,DC=Example"], role_groups, fold_case=True) == {"viewer"}
    assert mapped_roles([], role_groups) == set()


def test_single_sign_on_needs_its_client_and_role_map(tmp_path: Path) -> None:
    result = manage_check(
        tmp_path,
        MIRRORPLANE_OIDC_ISSUER="https://id.example.org",
        MIRRORPLANE_OIDC_CLIENT_ID="mirrorplane",
        MIRRORPLANE_OIDC_CLIENT_SECRET=SECRET,
    )
    assert result.returncode != 0
    assert "MIRRORPLANE_OIDC_ROLE_GROUPS: required when MIRRORPLANE_OIDC_ISSUER is set" in result.stderr
    assert SECRET not in result.stderr + result.stdout


def test_ldap_needs_a_group_search_base(tmp_path: Path) -> None:
    result = manage_check(
        tmp_path,
        MIRRORPLANE_LDAP_URL="ldap://ldap.example.org",
        MIRRORPLANE_LDAP_USER_DN_TEMPLATE="uid=%(user)s,ou=people,dc=example,dc=org",
        MIRRORPLANE_LDAP_BIND_PASSWORD=SECRET,
        MIRRORPLANE_LDAP_ROLE_GROUPS='{"cn=admins,ou=groups,dc=example,dc=org": "admin"}',
    )
    assert result.returncode != 0
    assert "MIRRORPLANE_LDAP_GROUP_SEARCH_BASE: required when MIRRORPLANE_LDAP_URL is set" in result.stderr
    assert SECRET not in result.stderr + result.stdout


@pytest.mark.django_db
def test_the_login_page_shows_no_secret(settings: object) -> None:
    settings.MIRRORPLANE_OIDC = True  # type: ignore[attr-defined]
    settings.OIDC_RP_CLIENT_SECRET = SECRET  # type: ignore[attr-defined]
    settings.AUTH_LDAP_BIND_PASSWORD = SECRET  # type: ignore[attr-defined]
    page = Client().get("/login/").content.decode()
    assert "Log in with single sign-on" in page
    assert SECRET not in page


def backends_with(tmp_path: Path, **environ: str) -> list[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MIRRORPLANE_", "DJANGO_"))}
    env.update(DJANGO_SETTINGS_MODULE="controlplane.settings", MIRRORPLANE_STATE_DIR=str(tmp_path), **environ)
    show = "from django.conf import settings; print(','.join(settings.AUTHENTICATION_BACKENDS))"
    result = subprocess.run(
        [sys.executable, "manage.py", "shell", "-c", show], cwd=REPO, env=env, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.strip().splitlines()[-1].split(",")


def test_the_backends_follow_the_variables(tmp_path: Path) -> None:
    assert backends_with(tmp_path) == [
        "axes.backends.AxesStandaloneBackend",
        "django.contrib.auth.backends.ModelBackend",
    ]
    assert backends_with(
        tmp_path,
        MIRRORPLANE_LOCAL_LOGIN="false",
        MIRRORPLANE_OIDC_ISSUER="https://id.example.org",
        MIRRORPLANE_OIDC_CLIENT_ID="mirrorplane",
        MIRRORPLANE_OIDC_CLIENT_SECRET=SECRET,
        MIRRORPLANE_OIDC_ROLE_GROUPS='{"kafka-admins": "admin"}',
        MIRRORPLANE_LDAP_URL="ldap://ldap.example.org",
        MIRRORPLANE_LDAP_USER_SEARCH_BASE="ou=people,dc=example,dc=org",
        MIRRORPLANE_LDAP_GROUP_SEARCH_BASE="ou=groups,dc=example,dc=org",
        MIRRORPLANE_LDAP_ROLE_GROUPS='{"cn=admins,ou=groups,dc=example,dc=org": "admin"}',
    ) == [
        "axes.backends.AxesStandaloneBackend",
        "controlplane.accounts.backends.OidcBackend",
        "controlplane.accounts.backends.LdapBackend",
    ]

"""Login lockout, the secret-key rule, the deploy check and the security headers."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from cryptography.fernet import Fernet
from django.contrib.auth.models import User
from django.test import Client

from controlplane.settings import DEV_SECRET_KEY
from controlplane.urls import SWAGGER_UI_STYLE_HASH
from tests.controlplane.test_settings_from_env import GOOD_SECRET_KEY, REPO, SETTINGS_VARIABLES, manage_check

PASSWORD = "correct-horse-battery"
EXPECTED_CSP = {
    "default-src": "'self'",
    "script-src": "'self'",
    "style-src": "'self' 'sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU='",  # the empty <style> Plotly adds
    "img-src": "'self' data:",
    "font-src": "'self'",
    "connect-src": "'self'",
    "object-src": "'none'",
    "base-uri": "'none'",
    "form-action": "'self'",
    "frame-ancestors": "'none'",
}


def csp(header: str) -> dict[str, str]:
    return dict(part.strip().split(" ", 1) for part in header.split(";"))


def production_env(**overrides: str) -> dict[str, str]:
    env = {
        "MIRRORPLANE_DEBUG": "false",
        "DJANGO_SECRET_KEY": GOOD_SECRET_KEY,
        "MIRRORPLANE_CREDENTIALS_KEY": Fernet.generate_key().decode(),
        "DJANGO_ALLOWED_HOSTS": "mirrorplane.example.com",
        "MIRRORPLANE_TLS": "true",
    }
    env.update(overrides)
    return env


def try_login(client: Client, url: str, username: str, password: str) -> int:
    response = client.post(url, {"username": username, "password": password, "next": "/"})
    return response.status_code


def logged_in_as(client: Client) -> str | None:
    session_user = client.session.get("_auth_user_id")
    return None if session_user is None else User.objects.get(pk=session_user).username


# --- Finding 5: brute force ---------------------------------------------------------------------------------


@pytest.mark.django_db
@pytest.mark.parametrize("url", ["/login/", "/admin/login/"])
def test_the_right_password_is_refused_after_fifty_wrong_ones(client: Client, url: str) -> None:
    User.objects.create_superuser("target", password=PASSWORD)
    codes = [try_login(client, url, "target", f"guess-{n}") for n in range(50)]
    assert codes[0] == 200  # the form again, with its error
    assert codes[-1] == 429

    response = client.post(url, {"username": "target", "password": PASSWORD, "next": "/"})

    assert response.status_code == 429
    assert logged_in_as(client) is None
    page = response.content.decode()
    assert "Too many failed logins" in page
    assert "try again in" in page


@pytest.mark.django_db
def test_a_few_typos_then_the_right_password_logs_in_and_clears_the_count(client: Client) -> None:
    User.objects.create_user("typist", password=PASSWORD)
    for _ in range(2):
        for n in range(9):  # one below the default limit of 10, twice: a success in between resets the count
            assert try_login(client, "/login/", "typist", f"typo-{n}") == 200
        assert try_login(client, "/login/", "typist", PASSWORD) == 302
        assert logged_in_as(client) == "typist"
        client.logout()


@pytest.mark.django_db
def test_a_locked_user_name_does_not_lock_out_another_user(client: Client) -> None:
    User.objects.create_user("victim", password=PASSWORD)
    User.objects.create_user("colleague", password=PASSWORD)
    for n in range(10):
        try_login(client, "/login/", "victim", f"guess-{n}")
    assert try_login(client, "/login/", "victim", PASSWORD) == 429

    assert try_login(client, "/login/", "colleague", PASSWORD) == 302
    assert logged_in_as(client) == "colleague"


def run_python(tmp_path: Path, code: str, **overrides: str) -> subprocess.CompletedProcess[str]:
    """``code`` in a fresh interpreter with only ``overrides`` of the settings variables, state under tmp_path."""
    env = {name: value for name, value in os.environ.items() if name not in SETTINGS_VARIABLES}
    env.update({"DJANGO_SETTINGS_MODULE": "controlplane.settings", "MIRRORPLANE_STATE_DIR": str(tmp_path)})
    env.update(overrides)
    return subprocess.run([sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True, timeout=300)


def settings_in_fresh_process(tmp_path: Path, *names: str, **overrides: str) -> dict[str, str]:
    code = (
        "import json, django; django.setup(); from django.conf import settings; "
        f"print(json.dumps({{n: str(getattr(settings, n)) for n in {list(names)!r}}}))"
    )
    result = run_python(tmp_path, code, **overrides)
    assert result.returncode == 0, result.stderr
    return dict(json.loads(result.stdout.strip().splitlines()[-1]))


def test_lockout_is_configured_from_the_environment(tmp_path: Path) -> None:
    values = settings_in_fresh_process(
        tmp_path,
        "AXES_FAILURE_LIMIT",
        "AXES_COOLOFF_TIME",
        "AXES_LOCKOUT_PARAMETERS",
        "AXES_ENABLED",
        MIRRORPLANE_LOGIN_FAILURE_LIMIT="3",
        MIRRORPLANE_LOGIN_COOLOFF_MINUTES="60",
        MIRRORPLANE_LOGIN_LOCKOUT_BY="user",
    )
    assert values == {
        "AXES_FAILURE_LIMIT": "3",
        "AXES_COOLOFF_TIME": "1:00:00",
        "AXES_LOCKOUT_PARAMETERS": "['username']",
        "AXES_ENABLED": "True",
    }


# --- Finding 6: secret key ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "key",
    ["x", "short-but-not-empty", DEV_SECRET_KEY, "django-insecure-" + "k" * 60, "ab" * 40],
    ids=["one-char", "short", "dev-key", "django-insecure-prefix", "few-distinct-chars"],
)
def test_debug_off_refuses_a_weak_or_published_secret_key(tmp_path: Path, key: str) -> None:
    result = manage_check(tmp_path, **production_env(DJANGO_SECRET_KEY=key))
    assert result.returncode != 0
    assert "Mirrorplane configuration error: DJANGO_SECRET_KEY:" in result.stderr
    assert key not in result.stderr.replace("DJANGO_SECRET_KEY", "")


def test_debug_off_accepts_a_long_random_secret_key(tmp_path: Path) -> None:
    result = manage_check(tmp_path, **production_env())
    assert result.returncode == 0, result.stderr


def test_debug_on_keeps_the_demo_running_with_any_key(tmp_path: Path) -> None:
    assert manage_check(tmp_path, MIRRORPLANE_DEBUG="true", DJANGO_SECRET_KEY="x").returncode == 0


# --- Finding 6: check --deploy -------------------------------------------------------------------------------


def test_check_deploy_is_clean_with_the_production_settings(tmp_path: Path) -> None:
    result = manage_check(tmp_path, "--deploy", "--fail-level", "WARNING", **production_env())
    assert result.returncode == 0, result.stderr + result.stdout
    assert "System check identified no issues (0 silenced)." in result.stdout


def test_check_deploy_warns_when_a_deployment_without_tls_drops_the_tls_setting(tmp_path: Path) -> None:
    # The same check fails without MIRRORPLANE_TLS: the clean result above is not a check that cannot fail.
    result = manage_check(tmp_path, "--deploy", "--fail-level", "WARNING", **production_env(MIRRORPLANE_TLS="false"))
    assert result.returncode != 0
    for warning in ("security.W004", "security.W008", "security.W012", "security.W016"):
        assert warning in result.stderr + result.stdout


# --- Finding 6: headers ---------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_every_page_carries_the_content_security_policy(client: Client, admin_user: User) -> None:
    assert csp(client.get("/login/")["Content-Security-Policy"]) == EXPECTED_CSP
    client.force_login(admin_user)
    for path in ("/", "/flows/", "/clusters/", "/failover/", "/admin/"):
        response = client.get(path)
        assert response.status_code == 200, path
        assert csp(response["Content-Security-Policy"]) == EXPECTED_CSP, path
    # Swagger UI's page adds the hash of its one fixed <style> block, and only there.
    docs = csp(client.get("/api/docs/")["Content-Security-Policy"])
    assert docs == {**EXPECTED_CSP, "style-src": EXPECTED_CSP["style-src"] + " " + SWAGGER_UI_STYLE_HASH}


@pytest.mark.django_db
def test_without_the_tls_setting_there_is_no_hsts_and_no_secure_cookie(client: Client) -> None:
    User.objects.create_user("plain", password=PASSWORD)
    response = client.post("/login/", {"username": "plain", "password": PASSWORD}, secure=True)
    assert response.status_code == 302
    assert "Strict-Transport-Security" not in response
    assert not response.cookies["sessionid"]["secure"]


def test_with_the_tls_setting_cookies_are_secure_hsts_is_sent_and_http_redirects(tmp_path: Path) -> None:
    code = """
import django; django.setup()
from django.core.management import call_command
from django.test import Client
from django.contrib.auth.models import User
call_command("migrate", verbosity=0)
call_command("collectstatic", "--noinput", verbosity=0)  # the production static storage needs its manifest
User.objects.create_user("tls", password="correct-horse-battery")
client = Client(HTTP_HOST="mirrorplane.example.com")
assert client.get("/login/").status_code == 301, "plain HTTP is redirected"
assert client.get("/healthz").status_code == 200, "the container health check stays on HTTP"
page = client.get("/login/", secure=True)
assert page.cookies["csrftoken"]["secure"] and page.cookies["csrftoken"]["httponly"]
assert page["Strict-Transport-Security"] == "max-age=31536000; includeSubDomains; preload", page.headers
login = client.post("/login/", {"username": "tls", "password": "correct-horse-battery"}, secure=True)
assert login.status_code == 302, login.status_code
assert login.cookies["sessionid"]["secure"] and login.cookies["sessionid"]["httponly"]
print("ok")
"""
    result = run_python(tmp_path, code, **production_env())
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip().endswith("ok")

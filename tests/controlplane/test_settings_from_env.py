"""Settings read in a fresh ``manage.py check`` process, so each case sees only its own environment."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from cryptography.fernet import Fernet

REPO = Path(__file__).resolve().parents[2]
SETTINGS_VARIABLES = (
    "DATABASE_URL",
    "CELERY_BROKER_URL",
    "CELERY_TASK_ALWAYS_EAGER",
    "DJANGO_SECRET_KEY",
    "DJANGO_SECRET_KEY_FILE",
    "DJANGO_ALLOWED_HOSTS",
    "MIRRORPLANE_DEBUG",
    "MIRRORPLANE_CREDENTIALS_KEY",
    "MIRRORPLANE_CREDENTIALS_KEY_FILE",
    "MIRRORPLANE_STATE_DIR",
    "MIRRORPLANE_LOG_LEVEL",
    "MIRRORPLANE_TLS",
    "MIRRORPLANE_TRUST_X_FORWARDED_PROTO",
    "MIRRORPLANE_HSTS_SECONDS",
    "MIRRORPLANE_HSTS_INCLUDE_SUBDOMAINS",
    "MIRRORPLANE_HSTS_PRELOAD",
    "MIRRORPLANE_LOGIN_LOCKOUT",
    "MIRRORPLANE_LOGIN_FAILURE_LIMIT",
    "MIRRORPLANE_LOGIN_COOLOFF_MINUTES",
    "MIRRORPLANE_LOGIN_LOCKOUT_BY",
    "MIRRORPLANE_WORKER_SLOTS",
)
# A key that passes the production rule (50+ characters, not the development key); for these tests only.
GOOD_SECRET_KEY = "test-only-5f0c2d1e9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a0b"


def manage_check(tmp_path: Path, *args: str, **overrides: str) -> subprocess.CompletedProcess[str]:
    # The browser tests' conftest sets DJANGO_ALLOW_ASYNC_UNSAFE for this process (Playwright beside the live
    # server); a deployment never has it, and `check --deploy` rightly fails on it (async.E001).
    harness = {"DJANGO_ALLOW_ASYNC_UNSAFE"}
    env = {name: value for name, value in os.environ.items() if name not in {*SETTINGS_VARIABLES, *harness}}
    env.update({"DJANGO_SETTINGS_MODULE": "controlplane.settings", "MIRRORPLANE_STATE_DIR": str(tmp_path)})
    env.update(overrides)
    return subprocess.run(
        [sys.executable, str(REPO / "manage.py"), "check", *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_fresh_checkout_defaults_pass_the_check(tmp_path: Path) -> None:
    result = manage_check(tmp_path)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "celery" / "queue").is_dir()


def test_production_settings_pass_with_secrets_from_files(tmp_path: Path) -> None:
    secret_key = tmp_path / "secret_key"
    secret_key.write_text(f"{GOOD_SECRET_KEY}\n")
    result = manage_check(
        tmp_path,
        MIRRORPLANE_DEBUG="false",
        DJANGO_SECRET_KEY_FILE=str(secret_key),
        MIRRORPLANE_CREDENTIALS_KEY=Fernet.generate_key().decode(),
        CELERY_BROKER_URL="redis://127.0.0.1:6379/0",
    )
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize(
    ("overrides", "variable"),
    [
        ({"MIRRORPLANE_DEBUG": "maybe"}, "MIRRORPLANE_DEBUG"),
        ({"DATABASE_URL": "not-a-url"}, "DATABASE_URL"),
        ({"DATABASE_URL": "postgres://user@host:port/db"}, "DATABASE_URL"),
        ({"CELERY_BROKER_URL": "localhost:6379"}, "CELERY_BROKER_URL"),
        ({"MIRRORPLANE_LOG_LEVEL": "loud"}, "MIRRORPLANE_LOG_LEVEL"),
        ({"MIRRORPLANE_CREDENTIALS_KEY": "too-short"}, "MIRRORPLANE_CREDENTIALS_KEY"),
        ({"MIRRORPLANE_DEBUG": "false"}, "DJANGO_SECRET_KEY"),
        ({"MIRRORPLANE_DEBUG": "false", "DJANGO_SECRET_KEY": GOOD_SECRET_KEY}, "MIRRORPLANE_CREDENTIALS_KEY"),
        ({"MIRRORPLANE_LOGIN_FAILURE_LIMIT": "0"}, "MIRRORPLANE_LOGIN_FAILURE_LIMIT"),
        ({"MIRRORPLANE_LOGIN_FAILURE_LIMIT": "ten"}, "MIRRORPLANE_LOGIN_FAILURE_LIMIT"),
        ({"MIRRORPLANE_LOGIN_LOCKOUT_BY": "browser"}, "MIRRORPLANE_LOGIN_LOCKOUT_BY"),
        ({"MIRRORPLANE_TLS": "sometimes"}, "MIRRORPLANE_TLS"),
        ({"MIRRORPLANE_WORKER_SLOTS": "twelve"}, "MIRRORPLANE_WORKER_SLOTS"),
        ({"MIRRORPLANE_WORKER_SLOTS": "0"}, "MIRRORPLANE_WORKER_SLOTS"),
    ],
)
def test_bad_environment_stops_start_up_naming_the_variable(
    tmp_path: Path, overrides: dict[str, str], variable: str
) -> None:
    result = manage_check(tmp_path, **overrides)
    assert result.returncode != 0
    assert f"Mirrorplane configuration error: {variable}:" in result.stderr


def test_errors_do_not_echo_a_database_password(tmp_path: Path) -> None:
    result = manage_check(tmp_path, DATABASE_URL="postgres://user:hunter2@host:port/db")
    assert result.returncode != 0
    assert "hunter2" not in result.stderr


def test_env_example_lists_every_variable_the_control_plane_reads() -> None:
    sources = [REPO / "controlplane" / "settings.py", *REPO.glob("controlplane/**/commands/*.py")]
    code = "\n".join(path.read_text() for path in sources)
    read = set(re.findall(r'env_\w+\(\s*"([A-Z0-9_]+)"', code))
    read |= {f"{name}_FILE" for name in re.findall(r'env_secret\(\s*"([A-Z0-9_]+)"', code)}
    read |= set(re.findall(r'environ\.get\(\s*"([A-Z0-9_]+)"', code))
    example = (REPO / "docker" / ".env.example").read_text()
    listed = set(re.findall(r"^([A-Z0-9_]+)=", example, flags=re.MULTILINE))
    assert read, "the pattern no longer finds the variables settings.py reads"
    assert sorted(read - listed) == []

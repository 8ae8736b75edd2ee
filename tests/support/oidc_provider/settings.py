"""Settings of the test OpenID Connect provider; the state directory comes from OIDC_PROVIDER_STATE."""

from __future__ import annotations

import os
from pathlib import Path

STATE = Path(os.environ["OIDC_PROVIDER_STATE"])
SECRET_KEY = "oidc-provider-for-tests-only"
DEBUG = False
ALLOWED_HOSTS = ["127.0.0.1", "localhost"]
INSTALLED_APPS = [
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "oidc_provider",
]
MIDDLEWARE = [
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
]
ROOT_URLCONF = "tests.support.oidc_provider.urls"
TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [Path(__file__).resolve().parent / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {"context_processors": ["django.template.context_processors.request"]},
    }
]
DATABASES = {"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": str(STATE / "provider.sqlite3")}}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
USE_TZ = True
LOGIN_URL = "/accounts/login/"
# Its own cookie name: the provider and Mirrorplane both run on 127.0.0.1, and cookies ignore the port.
SESSION_COOKIE_NAME = "provider_sessionid"
CSRF_COOKIE_NAME = "provider_csrftoken"
OIDC_EXTRA_SCOPE_CLAIMS = "tests.support.oidc_provider.claims.GroupsClaims"
OIDC_USERINFO = "tests.support.oidc_provider.claims.userinfo"
OIDC_GROUPS_FILE = STATE / "groups.json"

"""Mirrorplane settings: every value comes from the environment through ``controlplane.env``.

The defaults run a fresh checkout with no servers: SQLite and a filesystem Celery broker, both under the
state directory. ``docker/.env.example`` lists every variable read here.
"""

from __future__ import annotations

import base64
import hashlib
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import dj_database_url
from cryptography.fernet import Fernet
from django.core.exceptions import ImproperlyConfigured
from kombu.transport import TRANSPORT_ALIASES

from controlplane.env import env_bool, env_choice, env_int, env_list, env_secret, env_str

BASE_DIR = Path(__file__).resolve().parent.parent


def _database(default_url: str) -> dict[str, Any]:
    url = env_str("DATABASE_URL", default_url)
    try:
        return dict(dj_database_url.parse(url, conn_max_age=60, conn_health_checks=True))
    except ValueError as exc:
        # The URL itself is not echoed: it may carry a password.
        raise ImproperlyConfigured(
            f"DATABASE_URL: expected a URL such as postgres://user:password@host:5432/name "
            f"or sqlite:////path/to/db.sqlite3 ({exc})"
        ) from None


def _broker_url(default_url: str) -> str:
    url = env_str("CELERY_BROKER_URL", default_url)
    scheme = urlsplit(url).scheme if "://" in url else ""
    if scheme not in TRANSPORT_ALIASES:
        # Only the scheme is echoed: a broker URL may carry a password.
        raise ImproperlyConfigured(
            f"CELERY_BROKER_URL: expected a broker URL such as redis://host:6379/0 or filesystem://, "
            f"got scheme {scheme!r}"
        )
    return url


def _secret_key(debug: bool) -> str:
    key = env_secret("DJANGO_SECRET_KEY")
    if key is not None:
        return key
    if not debug:
        raise ImproperlyConfigured("DJANGO_SECRET_KEY: required when MIRRORPLANE_DEBUG is false")
    return "django-insecure-mirrorplane-dev-only"


def _credentials_key(secret_key: str, debug: bool) -> str:
    key = env_secret("MIRRORPLANE_CREDENTIALS_KEY")
    if key is None:
        if not debug:
            raise ImproperlyConfigured("MIRRORPLANE_CREDENTIALS_KEY: required when MIRRORPLANE_DEBUG is false")
        # Dev only: stable for a given secret key, so stored credentials survive restarts.
        digest = hashlib.sha256(b"mirrorplane-credentials:" + secret_key.encode()).digest()
        return base64.urlsafe_b64encode(digest).decode()
    try:
        Fernet(key)
    except ValueError:
        raise ImproperlyConfigured(
            "MIRRORPLANE_CREDENTIALS_KEY: expected a Fernet key (32 url-safe base64-encoded bytes)"
        ) from None
    return key


DEBUG = env_bool("MIRRORPLANE_DEBUG", True)
STATE_DIR = Path(env_str("MIRRORPLANE_STATE_DIR", str(BASE_DIR / "var"))).resolve()
STATE_DIR.mkdir(parents=True, exist_ok=True)
LOG_LEVEL = env_choice("MIRRORPLANE_LOG_LEVEL", "INFO", ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"))

SECRET_KEY = _secret_key(DEBUG)
MIRRORPLANE_CREDENTIALS_KEY = _credentials_key(SECRET_KEY, DEBUG)
ALLOWED_HOSTS = env_list("DJANGO_ALLOWED_HOSTS", ["127.0.0.1", "localhost"])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "controlplane.core",
    "controlplane.clusters",
    "controlplane.flows",
    "controlplane.audit",
    "controlplane.orchestration",
    "controlplane.ui",
    "controlplane.failover",
    "controlplane.reports",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "controlplane.core.middleware.RejectNulBytes",
    "controlplane.core.middleware.BoundRequestBody",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "controlplane.urls"
WSGI_APPLICATION = "controlplane.wsgi.application"
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "index"
LOGOUT_REDIRECT_URL = "login"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "frontend" / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "controlplane.ui.context.role",
            ],
        },
    },
]

DATABASES = {"default": _database(f"sqlite:///{STATE_DIR / 'db.sqlite3'}")}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # The embedded default serves web, worker and beat at once. WAL lets readers run beside the one writer; a
    # writer waits up to 30 s for the lock instead of failing at once; IMMEDIATE takes the write lock when a
    # transaction begins, so a read followed by a write cannot fail halfway with "database is locked" (SQLite
    # cannot upgrade a read lock while another connection writes, and does not wait for it).
    DATABASES["default"]["OPTIONS"] = {
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL",
        "timeout": 30,
        "transaction_mode": "IMMEDIATE",
    }
    # Tests run a threaded live server and worker processes against the database: a file, like production,
    # not Django's shared in-memory connection (which would serialise every thread and hide lock contention).
    DATABASES["default"]["TEST"] = {"NAME": f"{DATABASES['default']['NAME']}-test"}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "frontend" / "static"]
STATIC_ROOT = STATE_DIR / "static"
STATICFILES_FINDERS = [
    "django.contrib.staticfiles.finders.FileSystemFinder",
    "django.contrib.staticfiles.finders.AppDirectoriesFinder",
    # vendor/plotly.min.js straight from the plotly package: served locally, never from a CDN, never committed.
    "controlplane.ui.staticfinders.PlotlyFinder",
]

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.SessionAuthentication",
        "rest_framework.authentication.TokenAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["controlplane.core.permissions.HasRole"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
}

SPECTACULAR_SETTINGS = {
    "TITLE": "Mirrorplane API",
    "DESCRIPTION": "Control plane for replicating Apache Kafka topics between clusters.",
    "VERSION": "0.1.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SERVE_PERMISSIONS": ["controlplane.core.permissions.IsViewer"],
    # Served from the sidecar package so the API docs work with no internet access.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
}

# The host part is ignored by the filesystem transport; naming one only silences a kombu warning.
CELERY_BROKER_URL = _broker_url("filesystem://localhost/")
if CELERY_BROKER_URL.startswith("filesystem://"):
    # One shared spool directory lets web, worker and beat exchange messages with no broker server.
    _spool = STATE_DIR / "celery"
    for _folder in ("queue", "processed", "control"):
        (_spool / _folder).mkdir(parents=True, exist_ok=True)
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(_spool / "queue"),
        "data_folder_out": str(_spool / "queue"),
        "processed_folder": str(_spool / "processed"),
        "control_folder": str(_spool / "control"),
    }
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_ALWAYS_EAGER = env_bool("CELERY_TASK_ALWAYS_EAGER", False)
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_TIMEZONE = TIME_ZONE
# Replication tasks run for hours in a pool process: reserve no extra messages behind them.
CELERY_WORKER_PREFETCH_MULTIPLIER = 1

# Orchestration: leases with fencing epochs, the controller beat, and uReplicator's delayed rebalance.
MIRRORPLANE_LEASE_SECONDS = env_int("MIRRORPLANE_LEASE_SECONDS", 15)
MIRRORPLANE_REBALANCE_DELAY_SECONDS = env_int("MIRRORPLANE_REBALANCE_DELAY_SECONDS", 120)
MIRRORPLANE_RETRY_SECONDS = env_int("MIRRORPLANE_RETRY_SECONDS", 30)
MIRRORPLANE_CONTROLLER_INTERVAL_SECONDS = env_int("MIRRORPLANE_CONTROLLER_INTERVAL_SECONDS", 2)
# The UI's time series and what it reads from the clusters (heartbeats, checkpoints), sampled by beat.
MIRRORPLANE_SAMPLE_INTERVAL_SECONDS = env_int("MIRRORPLANE_SAMPLE_INTERVAL_SECONDS", 5)
MIRRORPLANE_OBSERVE_INTERVAL_SECONDS = env_int("MIRRORPLANE_OBSERVE_INTERVAL_SECONDS", 15)
MIRRORPLANE_SAMPLE_RETENTION_HOURS = env_int("MIRRORPLANE_SAMPLE_RETENTION_HOURS", 24)
# Analytics: the facts lake flows write and the jobs read (default <state dir>/lake), whether flows write facts at
# all (a flow can also opt out, or name its own lake), and an optional Spark master URL.
MIRRORPLANE_FACTS_LAKE = env_str("MIRRORPLANE_FACTS_LAKE", "")
MIRRORPLANE_FACTS_ENABLED = env_bool("MIRRORPLANE_FACTS_ENABLED", True)
MIRRORPLANE_HEARTBEAT_FACTS_INTERVAL_SECONDS = env_int("MIRRORPLANE_HEARTBEAT_FACTS_INTERVAL_SECONDS", 30)
MIRRORPLANE_SPARK_MASTER = env_str("MIRRORPLANE_SPARK_MASTER", "")
CELERY_BEAT_SCHEDULE = {
    "analytics-hourly": {"task": "controlplane.reports.tasks.schedule_hourly_reports", "schedule": 3600.0},
    "heartbeat-facts": {
        "task": "controlplane.reports.tasks.collect_heartbeat_facts",
        "schedule": float(MIRRORPLANE_HEARTBEAT_FACTS_INTERVAL_SECONDS),
    },
    "controller-tick": {
        "task": "controlplane.orchestration.tasks.controller_tick",
        "schedule": float(MIRRORPLANE_CONTROLLER_INTERVAL_SECONDS),
    },
    "flow-samples": {
        "task": "controlplane.ui.tasks.sample_flows",
        "schedule": float(MIRRORPLANE_SAMPLE_INTERVAL_SECONDS),
    },
    "cluster-observations": {
        "task": "controlplane.ui.tasks.observe",
        "schedule": float(MIRRORPLANE_OBSERVE_INTERVAL_SECONDS),
    },
}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": LOG_LEVEL},
    # Django's own console handler would print every django.* record a second time.
    "loggers": {"django": {"handlers": [], "level": LOG_LEVEL, "propagate": True}},
}

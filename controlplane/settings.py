"""Mirrorplane settings: every value comes from the environment through ``controlplane.env``.

The defaults run a fresh checkout with no servers: SQLite and a filesystem Celery broker, both under the
state directory. ``docker/.env.example`` lists every variable read here.
"""

from __future__ import annotations

import base64
import hashlib
from datetime import timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import dj_database_url
import ldap  # type: ignore[import-untyped]  # python-ldap ships no annotations
from cryptography.fernet import Fernet
from csp.constants import NONE, SELF
from django.core.exceptions import ImproperlyConfigured
from django_auth_ldap.config import LDAPSearch
from kombu.transport import TRANSPORT_ALIASES

from controlplane.accounts import config as sso_config
from controlplane.env import env_bool, env_choice, env_int, env_list, env_positive_int, env_secret, env_str

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


# The key this repository publishes for development; never acceptable once debug is off.
DEV_SECRET_KEY = "django-insecure-mirrorplane-dev-only"
# Django's own deploy check (security.W009) asks for at least 50 characters and 5 distinct ones.
MIN_SECRET_KEY_LENGTH = 50


def _secret_key(debug: bool) -> str:
    key = env_secret("DJANGO_SECRET_KEY")
    if key is None:
        if not debug:
            raise ImproperlyConfigured("DJANGO_SECRET_KEY: required when MIRRORPLANE_DEBUG is false")
        return DEV_SECRET_KEY
    if debug:
        return key
    # The key itself is never echoed.
    if key == DEV_SECRET_KEY or key.startswith("django-insecure"):
        raise ImproperlyConfigured("DJANGO_SECRET_KEY: the published development key is refused when debug is off")
    if len(key) < MIN_SECRET_KEY_LENGTH or len(set(key)) < 5:
        raise ImproperlyConfigured(
            f"DJANGO_SECRET_KEY: at least {MIN_SECRET_KEY_LENGTH} random characters are required when debug is off; "
            'generate one with: python -c "import secrets; print(secrets.token_urlsafe(50))"'
        )
    return key


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
# Celery's lines for every job a worker receives and finishes ("Task ... received", "... succeeded in 0.01s"): beat's
# periodic jobs alone gave 60 lines a minute, most of a worker's log. A failed job is logged at ERROR whatever this is.
TASK_LOG_LEVEL = env_choice("MIRRORPLANE_TASK_LOG_LEVEL", "WARNING", ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"))

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
    "axes",
    "rest_framework",
    "knox",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    # Lowest layer first, as the import-linter contract in pyproject.toml orders them.
    "controlplane.core",
    "controlplane.audit",
    "controlplane.accounts",
    "controlplane.jobs",
    "controlplane.clusters",
    "controlplane.flows",
    "controlplane.orchestration",
    "controlplane.monitoring",
    "controlplane.failover",
    "controlplane.reports",
    "controlplane.alerts",
    "controlplane.ui",
    "controlplane.demo",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    # Static files from STATIC_ROOT (collectstatic) in the production server; runserver serves them itself.
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "csp.middleware.CSPMiddleware",
    "controlplane.core.middleware.RejectNulBytes",
    "controlplane.core.middleware.BoundRequestBody",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # Last, as django-axes asks: it turns a locked-out login (on /login/ and /admin/login/) into the lockout page.
    "axes.middleware.AxesMiddleware",
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

# Brute-force protection (django-axes). Every password check goes through authenticate(), so the UI's /login/ and
# the admin's /admin/login/ are both covered. The API takes session cookies and random tokens, never a
# password, so it has nothing to guess. A client that fails MIRRORPLANE_LOGIN_FAILURE_LIMIT times in a row for one
# user name gets HTTP 429 and the lockout page for MIRRORPLANE_LOGIN_COOLOFF_MINUTES (each further try during the
# lock starts it again); `manage.py axes_reset` lifts every lock at once. A success before the limit clears the count.
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
AXES_ENABLED = env_bool("MIRRORPLANE_LOGIN_LOCKOUT", True)
AXES_FAILURE_LIMIT = env_positive_int("MIRRORPLANE_LOGIN_FAILURE_LIMIT", 10)
AXES_COOLOFF_TIME = timedelta(minutes=env_positive_int("MIRRORPLANE_LOGIN_COOLOFF_MINUTES", 15))
# user+ip: a guesser is stopped without letting anyone lock a user out from every address (the default);
# user: also stops guessing spread over many addresses, at that cost; ip: one address, whatever names it tries.
_LOCKOUT_BY = env_choice("MIRRORPLANE_LOGIN_LOCKOUT_BY", "user+ip", ("user+ip", "user", "ip"))
_LOCKOUT_PARAMETERS: dict[str, list[str | list[str]]] = {
    "user+ip": [["username", "ip_address"]],
    "user": ["username"],
    "ip": ["ip_address"],
}
AXES_LOCKOUT_PARAMETERS = _LOCKOUT_PARAMETERS[_LOCKOUT_BY]
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_TEMPLATE = "ui/locked_out.html"

# --- Single sign-on (OpenID Connect) and LDAP logins; docs/sso.md ------------------------------------------------
# Both are off unless configured; local accounts log in with a password unless MIRRORPLANE_LOCAL_LOGIN=false. A
# directory login sets the user's roles from their groups (MIRRORPLANE_*_ROLE_GROUPS) and refuses a user whose groups
# map to no role. The client secret and the bind password are read with env_secret (or *_FILE) and never echoed.
MIRRORPLANE_LOCAL_LOGIN = env_bool("MIRRORPLANE_LOCAL_LOGIN", True)
if not MIRRORPLANE_LOCAL_LOGIN:
    AUTHENTICATION_BACKENDS.remove("django.contrib.auth.backends.ModelBackend")

MIRRORPLANE_OIDC_ISSUER = env_str("MIRRORPLANE_OIDC_ISSUER", "")
MIRRORPLANE_OIDC = bool(MIRRORPLANE_OIDC_ISSUER)
_OIDC_ON = "MIRRORPLANE_OIDC_ISSUER is set"
OIDC_RP_CLIENT_ID = env_str("MIRRORPLANE_OIDC_CLIENT_ID", "")
OIDC_RP_CLIENT_SECRET = env_secret("MIRRORPLANE_OIDC_CLIENT_SECRET", "")
OIDC_RP_SIGN_ALGO = env_choice("MIRRORPLANE_OIDC_SIGN_ALGO", "RS256", ("RS256", "RS384", "RS512", "ES256", "ES384"))
OIDC_RP_SCOPES = env_str("MIRRORPLANE_OIDC_SCOPES", "openid email profile")
OIDC_USE_PKCE = True
OIDC_TIMEOUT = env_positive_int("MIRRORPLANE_OIDC_TIMEOUT_SECONDS", 10)
OIDC_VERIFY_SSL = env_bool("MIRRORPLANE_OIDC_VERIFY_TLS", True)
LOGIN_REDIRECT_URL_FAILURE = "/login/"  # mozilla-django-oidc redirects to it as it is
MIRRORPLANE_OIDC_LABEL = env_str("MIRRORPLANE_OIDC_LABEL", "Log in with single sign-on")
MIRRORPLANE_OIDC_USERNAME_CLAIM = env_str("MIRRORPLANE_OIDC_USERNAME_CLAIM", "preferred_username")
MIRRORPLANE_OIDC_GROUPS_CLAIM = env_str("MIRRORPLANE_OIDC_GROUPS_CLAIM", "groups")
MIRRORPLANE_OIDC_ROLE_GROUPS = sso_config.env_role_groups("MIRRORPLANE_OIDC_ROLE_GROUPS")
if MIRRORPLANE_OIDC:
    sso_config.required("MIRRORPLANE_OIDC_CLIENT_ID", OIDC_RP_CLIENT_ID, _OIDC_ON)
    sso_config.required("MIRRORPLANE_OIDC_CLIENT_SECRET", OIDC_RP_CLIENT_SECRET, _OIDC_ON)
    sso_config.required("MIRRORPLANE_OIDC_ROLE_GROUPS", MIRRORPLANE_OIDC_ROLE_GROUPS, _OIDC_ON)
    AUTHENTICATION_BACKENDS.append("controlplane.accounts.backends.OidcBackend")

MIRRORPLANE_LDAP_URL = env_str("MIRRORPLANE_LDAP_URL", "")
MIRRORPLANE_LDAP = bool(MIRRORPLANE_LDAP_URL)
_LDAP_ON = "MIRRORPLANE_LDAP_URL is set"
AUTH_LDAP_SERVER_URI = MIRRORPLANE_LDAP_URL
AUTH_LDAP_START_TLS = env_bool("MIRRORPLANE_LDAP_START_TLS", False)
# An empty bind DN binds anonymously to search; a user DN template skips the search and binds as the user.
AUTH_LDAP_BIND_DN = env_str("MIRRORPLANE_LDAP_BIND_DN", "")
AUTH_LDAP_BIND_PASSWORD = env_secret("MIRRORPLANE_LDAP_BIND_PASSWORD", "")
AUTH_LDAP_USER_DN_TEMPLATE = env_str("MIRRORPLANE_LDAP_USER_DN_TEMPLATE", "") or None
_LDAP_USER_BASE = env_str("MIRRORPLANE_LDAP_USER_SEARCH_BASE", "")
_LDAP_USER_FILTER = env_str("MIRRORPLANE_LDAP_USER_FILTER", "(uid=%(user)s)")
_LDAP_GROUP_BASE = env_str("MIRRORPLANE_LDAP_GROUP_SEARCH_BASE", "")
AUTH_LDAP_GROUP_TYPE = sso_config.ldap_group_type(
    "MIRRORPLANE_LDAP_GROUP_TYPE", env_str("MIRRORPLANE_LDAP_GROUP_TYPE", "groupOfNames")
)
AUTH_LDAP_USER_ATTR_MAP = {"first_name": "givenName", "last_name": "sn", "email": "mail"}
AUTH_LDAP_CONNECTION_OPTIONS = {ldap.OPT_NETWORK_TIMEOUT: 10, ldap.OPT_TIMEOUT: 10}
MIRRORPLANE_LDAP_ROLE_GROUPS = sso_config.env_role_groups("MIRRORPLANE_LDAP_ROLE_GROUPS", fold_case=True)
if MIRRORPLANE_LDAP:
    if AUTH_LDAP_USER_DN_TEMPLATE is None:
        _LDAP_WHY = f"{_LDAP_ON} and MIRRORPLANE_LDAP_USER_DN_TEMPLATE is not"
        _LDAP_USER_BASE = sso_config.required("MIRRORPLANE_LDAP_USER_SEARCH_BASE", _LDAP_USER_BASE, _LDAP_WHY)
        AUTH_LDAP_USER_SEARCH = LDAPSearch(_LDAP_USER_BASE, ldap.SCOPE_SUBTREE, _LDAP_USER_FILTER)
    _LDAP_GROUP_BASE = sso_config.required("MIRRORPLANE_LDAP_GROUP_SEARCH_BASE", _LDAP_GROUP_BASE, _LDAP_ON)
    AUTH_LDAP_GROUP_SEARCH = LDAPSearch(_LDAP_GROUP_BASE, ldap.SCOPE_SUBTREE, "(objectClass=*)")
    sso_config.required("MIRRORPLANE_LDAP_ROLE_GROUPS", MIRRORPLANE_LDAP_ROLE_GROUPS, _LDAP_ON)
    AUTHENTICATION_BACKENDS.append("controlplane.accounts.backends.LdapBackend")
# --- end of single sign-on and LDAP ------------------------------------------------------------------------------

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
# 24-hour times everywhere, the admin included (controlplane/formats/en/formats.py).
FORMAT_MODULE_PATH = "controlplane.formats"

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "frontend" / "static"]
STATIC_ROOT = STATE_DIR / "static"
STATIC_ROOT.mkdir(exist_ok=True)  # WhiteNoise warns about a missing root before the first collectstatic
# Production serves hashed, compressed copies with far-future caching; the manifest they need exists only after
# collectstatic, so debug (the demo, the tests) keeps plain names served from the source folders.
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"
        if DEBUG
        else "whitenoise.storage.CompressedManifestStaticFilesStorage"
    },
}
STATICFILES_FINDERS = [
    "django.contrib.staticfiles.finders.FileSystemFinder",
    "django.contrib.staticfiles.finders.AppDirectoriesFinder",
    # vendor/plotly.min.js straight from the plotly package: served locally, never from a CDN, never committed.
    "controlplane.ui.staticfinders.PlotlyFinder",
]

# Content-Security-Policy (django-csp): the pages load only same-origin scripts, styles, images and API calls,
# Plotly included (served from /static/vendor/). No inline script or style attribute anywhere in the templates.
# Plotly adds its few global rules (modebar, hover labels) by appending an *empty* <style> element and filling it
# through the CSSOM (sheet.insertRule), which CSP does not govern; the hash of the empty string admits exactly that
# empty element and no inline style with content. Its other styling goes through element.style (CSSOM) too.
PLOTLY_EMPTY_STYLE_HASH = "'sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU='"
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [SELF],
        "script-src": [SELF],
        "style-src": [SELF, PLOTLY_EMPTY_STYLE_HASH],
        "img-src": [SELF, "data:"],
        "font-src": [SELF],
        "connect-src": [SELF],
        "object-src": [NONE],
        "base-uri": [NONE],
        "form-action": [SELF],
        "frame-ancestors": [NONE],
    },
}

# TLS: MIRRORPLANE_TLS=true says browsers reach this deployment over HTTPS only (Django's own port, or a proxy that
# terminates TLS). Cookies then carry Secure, plain HTTP is redirected, and HSTS pins the host to HTTPS.
MIRRORPLANE_TLS = env_bool("MIRRORPLANE_TLS", False)
SESSION_COOKIE_SECURE = CSRF_COOKIE_SECURE = MIRRORPLANE_TLS
SECURE_SSL_REDIRECT = MIRRORPLANE_TLS
# The compose health check asks the container itself over plain HTTP.
SECURE_REDIRECT_EXEMPT = [r"^healthz$"]
SECURE_HSTS_SECONDS = env_int("MIRRORPLANE_HSTS_SECONDS", 31_536_000) if MIRRORPLANE_TLS else 0
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("MIRRORPLANE_HSTS_INCLUDE_SUBDOMAINS", True)
SECURE_HSTS_PRELOAD = env_bool("MIRRORPLANE_HSTS_PRELOAD", True)
if env_bool("MIRRORPLANE_TRUST_X_FORWARDED_PROTO", False):
    # Only behind a proxy that sets this header itself and drops a client's copy: otherwise anyone could claim HTTPS.
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SESSION_COOKIE_HTTPONLY = True
# The pages read the CSRF token from their <meta> tag, so no script needs the cookie.
CSRF_COOKIE_HTTPONLY = True
X_FRAME_OPTIONS = "DENY"
SECURE_REFERRER_POLICY = "same-origin"

# API tokens (django-rest-knox, in controlplane.accounts): only a SHA-512 hash of each is stored, each expires, and
# a password change deletes its user's tokens. A token lives MIRRORPLANE_TOKEN_TTL_HOURS unless it is created with
# a shorter life (the command may also give a longer one); the API never hands out a longer one.
MIRRORPLANE_TOKEN_TTL_HOURS = env_positive_int("MIRRORPLANE_TOKEN_TTL_HOURS", 720)
KNOX_TOKEN_MODEL = "accounts.ApiToken"
REST_KNOX = {
    "TOKEN_TTL": timedelta(hours=MIRRORPLANE_TOKEN_TTL_HOURS),
    # Marks a Mirrorplane token wherever it is pasted, for people and for secret scanners.
    "TOKEN_PREFIX": "mp_",
    "AUTO_REFRESH": False,
    "AUTH_HEADER_PREFIX": "Token",
}

REST_FRAMEWORK = {
    # The token first, so a refused token is a 401 with its challenge; a request with neither token nor session
    # gets 403 (controlplane.accounts.authentication says why).
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "controlplane.accounts.authentication.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
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
    # A failover's step is named in several places (the failover, its stepper, an abort): one enum for all.
    "ENUM_NAME_OVERRIDES": {
        "StepEnum": "controlplane.failover.choices.Step",
        "AlertKindEnum": "controlplane.alerts.choices.AlertKind",
        "TargetKindEnum": "controlplane.alerts.choices.TargetKind",
    },
    # Every operation's 400/401/403/404/415/429 answers and their bodies, documented once rather than on each view.
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "controlplane.core.schema.document_errors",
    ],
}

# The host part is ignored by the filesystem transport; naming one only silences a kombu warning.
CELERY_BROKER_URL = _broker_url("filesystem://localhost/")
if CELERY_BROKER_URL.startswith("filesystem://"):
    # One shared spool directory lets web, worker and beat exchange messages with no broker server.
    _spool = STATE_DIR / "celery"
    for _folder in ("queue", "processed", "control"):
        (_spool / _folder).mkdir(parents=True, exist_ok=True)
    CELERY_BROKER_TRANSPORT = "controlplane.core.spool:Transport"  # message files that appear whole
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
# Replication tasks a worker runs at most, each in a pool process; a worker advertises at most its concurrency - 1.
MIRRORPLANE_WORKER_SLOTS = env_positive_int("MIRRORPLANE_WORKER_SLOTS", 4)
# The UI's time series and what it reads from the clusters (heartbeats, checkpoints), sampled by beat.
MIRRORPLANE_SAMPLE_INTERVAL_SECONDS = env_int("MIRRORPLANE_SAMPLE_INTERVAL_SECONDS", 5)
MIRRORPLANE_OBSERVE_INTERVAL_SECONDS = env_int("MIRRORPLANE_OBSERVE_INTERVAL_SECONDS", 15)
# An unreachable cluster is probed again after the observer's interval, doubled at each failed probe up to this.
MIRRORPLANE_UNREACHABLE_PROBE_MAX_SECONDS = env_positive_int("MIRRORPLANE_UNREACHABLE_PROBE_MAX_SECONDS", 120)
MIRRORPLANE_SAMPLE_RETENTION_HOURS = env_int("MIRRORPLANE_SAMPLE_RETENTION_HOURS", 24)
# Period of beat's alert evaluation (rules over the samples and observations above).
MIRRORPLANE_ALERT_INTERVAL_SECONDS = env_positive_int("MIRRORPLANE_ALERT_INTERVAL_SECONDS", 10)
# Host names a webhook may name although they resolve to loopback, link-local, private or other internal
# addresses (webhooks reach public addresses only otherwise): comma-separated, compared case-insensitively.
MIRRORPLANE_WEBHOOK_ALLOWED_HOSTS = env_list("MIRRORPLANE_WEBHOOK_ALLOWED_HOSTS", [])
# --- E-mail notification targets (alerts): Django's SMTP backend, the deployment's own server. ---
EMAIL_BACKEND = env_str("EMAIL_BACKEND", "django.core.mail.backends.smtp.EmailBackend")
EMAIL_HOST = env_str("EMAIL_HOST", "localhost")
EMAIL_PORT = env_positive_int("EMAIL_PORT", 25)
EMAIL_HOST_USER = env_str("EMAIL_HOST_USER", "")
EMAIL_HOST_PASSWORD = env_secret("EMAIL_HOST_PASSWORD", "")
EMAIL_USE_TLS = env_bool("EMAIL_USE_TLS", False)
EMAIL_USE_SSL = env_bool("EMAIL_USE_SSL", False)
EMAIL_TIMEOUT = env_positive_int("EMAIL_TIMEOUT", 5)  # seconds: a test send waits for it in a web request
DEFAULT_FROM_EMAIL = env_str("DEFAULT_FROM_EMAIL", "mirrorplane@localhost")
# --- end of e-mail notification targets ---
# Analytics: the facts lake flows write and the jobs read (default <state dir>/lake), whether flows write facts at
# all (a flow can also opt out, or name its own lake), and an optional Spark master URL.
MIRRORPLANE_FACTS_LAKE = env_str("MIRRORPLANE_FACTS_LAKE", "")
MIRRORPLANE_FACTS_ENABLED = env_bool("MIRRORPLANE_FACTS_ENABLED", True)
MIRRORPLANE_HEARTBEAT_FACTS_INTERVAL_SECONDS = env_int("MIRRORPLANE_HEARTBEAT_FACTS_INTERVAL_SECONDS", 30)
MIRRORPLANE_SPARK_MASTER = env_str("MIRRORPLANE_SPARK_MASTER", "")
# Hours of facts the lake keeps: beat prunes older hour partitions of the default lake hourly, and a report's
# window may not start before them.
MIRRORPLANE_FACTS_RETENTION_HOURS = env_positive_int("MIRRORPLANE_FACTS_RETENTION_HOURS", 7 * 24)
# Report runs queued or running at once, per user and in all; a request past either is refused with HTTP 429.
MIRRORPLANE_REPORT_MAX_ACTIVE_PER_USER = env_positive_int("MIRRORPLANE_REPORT_MAX_ACTIVE_PER_USER", 3)
MIRRORPLANE_REPORT_MAX_ACTIVE = env_positive_int("MIRRORPLANE_REPORT_MAX_ACTIVE", 10)
CELERY_BEAT_SCHEDULE = {
    "analytics-hourly": {"task": "controlplane.reports.tasks.schedule_hourly_reports", "schedule": 3600.0},
    "heartbeat-facts": {
        "task": "controlplane.reports.tasks.collect_heartbeat_facts",
        "schedule": float(MIRRORPLANE_HEARTBEAT_FACTS_INTERVAL_SECONDS),
    },
    "facts-retention": {"task": "controlplane.reports.tasks.prune_facts_lake", "schedule": 3600.0},
    "flow-samples": {
        "task": "controlplane.monitoring.tasks.sample_flows",
        "schedule": float(MIRRORPLANE_SAMPLE_INTERVAL_SECONDS),
    },
    "alert-evaluation": {
        "task": "controlplane.alerts.tasks.evaluate_alerts",
        "schedule": float(MIRRORPLANE_ALERT_INTERVAL_SECONDS),
    },
    "cluster-observations": {
        "task": "controlplane.monitoring.tasks.observe",
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
    "loggers": {
        "django": {"handlers": [], "level": LOG_LEVEL, "propagate": True},
        "celery.worker.strategy": {"level": TASK_LOG_LEVEL},
        "celery.app.trace": {"level": TASK_LOG_LEVEL},
    },
}

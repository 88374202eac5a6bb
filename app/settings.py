"""Perfcase settings. Every value comes from the environment; `.env.example` lists them all.

The defaults are the embedded set-up of `make run`: SQLite and a filesystem broker under
var/, DEBUG on. Production (DEBUG off) refuses to start without a real secret key and
credential key rather than fall back to an insecure one.
"""

import ipaddress
import os
from datetime import timedelta
from pathlib import Path
from urllib.parse import urlsplit

import dj_database_url
from csp.constants import NONE, SELF, UNSAFE_INLINE
from django.core.exceptions import ImproperlyConfigured

APP_DIR = Path(__file__).resolve().parent
BASE_DIR = APP_DIR.parent
# A checkout keeps templates/, static/ and locale/ beside the packages; a wheel carries them
# inside the app package (setup.py), and has no var/ of its own: PERFCASE_VAR_DIR says where.
FROM_WHEEL = (APP_DIR / "templates").is_dir()
SHARED_DIR = APP_DIR if FROM_WHEEL else BASE_DIR


def env_str(name: str, default: str | None = None) -> str:
    # An empty value counts as unset: env files often carry "NAME=" lines.
    value = os.environ.get(name) or default
    if value is None:
        raise ImproperlyConfigured(f"{name} must be set")
    return value


def env_bool(name: str, default: bool) -> bool:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    if raw.lower() in ("1", "true", "yes", "on"):
        return True
    if raw.lower() in ("0", "false", "no", "off"):
        return False
    raise ImproperlyConfigured(f"{name} must be a boolean (1/0, true/false), not {raw!r}")


def env_int(name: str, default: int, *, minimum: int = 0) -> int:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be an integer, not {raw!r}") from None
    if value < minimum:
        raise ImproperlyConfigured(f"{name} must be at least {minimum}, not {value}")
    return value


def env_list(name: str, default: str = "") -> list[str]:
    return [item.strip() for item in env_str(name, default).split(",") if item.strip()]


_RATE_PERIODS = {"second": 1, "minute": 60, "hour": 3600, "day": 86400}


def env_rate(name: str, default: str) -> tuple[int, int] | None:
    """A rate such as "120/minute" as (requests, seconds); "0": no limit. Empty is unset, as
    for every setting (an env file's "NAME=" line must not lift a limit)."""
    raw = env_str(name, default).strip()
    if raw == "0":
        return None
    count, _, period = raw.partition("/")
    if not count.isdigit() or period not in _RATE_PERIODS:
        raise ImproperlyConfigured(
            f"{name} must be a number of requests per second, minute, hour or day "
            f"(e.g. 120/minute), or 0 for no limit, not {raw!r}"
        )
    return (int(count), _RATE_PERIODS[period]) if int(count) else None


def env_networks(name: str) -> list[str]:
    """Comma-separated CIDRs (a bare address is a network of one), each checked."""
    networks = env_list(name)
    for network in networks:
        try:
            ipaddress.ip_network(network, strict=False)
        except ValueError:
            raise ImproperlyConfigured(f"{name}: {network!r} is not a network (CIDR)") from None
    return networks


DEBUG = env_bool("PERFCASE_DEBUG", True)
if FROM_WHEEL and not os.environ.get("PERFCASE_VAR_DIR"):
    raise ImproperlyConfigured(
        "PERFCASE_VAR_DIR must be set when Perfcase runs from an installed package: the folder "
        "of its SQLite database, embedded broker, cache and uploaded files"
    )
VAR_DIR = Path(env_str("PERFCASE_VAR_DIR", str(BASE_DIR / "var")))

_DEV_SECRET_KEY = "perfcase-insecure-development-key-do-not-use-in-production"
SECRET_KEY = env_str("PERFCASE_SECRET_KEY", _DEV_SECRET_KEY if DEBUG else None)
if not DEBUG and SECRET_KEY == _DEV_SECRET_KEY:
    raise ImproperlyConfigured("PERFCASE_SECRET_KEY must be set to a real secret when DEBUG is off")

ALLOWED_HOSTS = env_list("PERFCASE_ALLOWED_HOSTS", "127.0.0.1,localhost,[::1]" if DEBUG else "")
if not DEBUG and not ALLOWED_HOSTS:
    raise ImproperlyConfigured("PERFCASE_ALLOWED_HOSTS must list the host names the app serves")
CSRF_TRUSTED_ORIGINS = env_list("PERFCASE_CSRF_TRUSTED_ORIGINS")

# Where people reach the app, for absolute links (webhook messages, the postmortem's
# Markdown). Unset: a page's links are built from the request it answers, and what is made
# without one (a webhook message) links nowhere, rather than to a guessed address.
BASE_URL = env_str("PERFCASE_BASE_URL", "").rstrip("/")
if BASE_URL and urlsplit(BASE_URL).scheme not in ("http", "https"):
    raise ImproperlyConfigured("PERFCASE_BASE_URL must start with http:// or https://")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    # `make run`'s server leaves static files to WhiteNoise, as production does: compressed
    # (the .gz beside each big file, see `make static`) and answered 304 when unchanged.
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "django_htmx",
    "ninja",
    "axes",
    "investigations",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "csp.middleware.CSPMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "investigations.middleware.chosen_language",
    "django.contrib.messages.middleware.MessageMiddleware",
    "investigations.uploads.UploadLimitMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "investigations.middleware.browser_time_zone",
    # Last: it answers a sign-in that was refused for too many failures.
    "axes.middleware.AxesMiddleware",
]

# Content-Security-Policy on every answer (django-csp): scripts only from our own static files
# (htmx, plotly.js and ours are vendored; no inline script, no eval), styles ours plus the
# inline styles plotly and Swagger UI set on their elements, nothing framed, forms posted
# here only. Violations are reported to /csp-report/ and logged.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [SELF],
        "script-src": [SELF],
        "style-src": [SELF, UNSAFE_INLINE],
        "img-src": [SELF, "data:", "blob:"],
        "font-src": [SELF, "data:"],
        "connect-src": [SELF],
        "object-src": [NONE],
        "base-uri": [SELF],
        "form-action": [SELF],
        "frame-ancestors": [NONE],
        "report-uri": "/csp-report/",
    }
}

# Password guessing (django-axes and investigations/security.py). A user name is locked at
# one address after PERFCASE_LOGIN_FAILURE_LIMIT failed sign-ins from there, for
# PERFCASE_LOGIN_LOCKOUT_MINUTES: nobody can lock a person out from elsewhere. An address that
# fails PERFCASE_LOGIN_ADDRESS_FAILURES times (any user names) is slowed, not locked: each
# further failure doubles the wait before its next sign-in (2 s, 4 s, ... up to
# PERFCASE_LOGIN_ADDRESS_MAX_DELAY_SECONDS), refused meanwhile with 429 and Retry-After, so
# that people behind one proxy are not locked out together and no worker sleeps. This holds
# for the sign-in page, POST /api/auth/token and /admin/; a team lead sees and lifts the
# locks of members on the team page, an admin anyone's (manage.py axes_reset).
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
AXES_FAILURE_LIMIT = env_int("PERFCASE_LOGIN_FAILURE_LIMIT", 5, minimum=1)
AXES_COOLOFF_TIME = timedelta(minutes=env_int("PERFCASE_LOGIN_LOCKOUT_MINUTES", 15, minimum=1))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
# A refused attempt is not a failure: it neither extends a lock nor lengthens a wait.
AXES_RESET_COOL_OFF_ON_FAILURE_DURING_LOCKOUT = False
AXES_HANDLER = "investigations.security.SignInHandler"
AXES_LOCKOUT_CALLABLE = "investigations.security.lockout_response"
AXES_CLIENT_IP_CALLABLE = "investigations.security.client_ip"
AXES_VERBOSE = False
LOGIN_ADDRESS_FAILURES = env_int("PERFCASE_LOGIN_ADDRESS_FAILURES", 10, minimum=1)
LOGIN_ADDRESS_MAX_DELAY_SECONDS = env_int("PERFCASE_LOGIN_ADDRESS_MAX_DELAY_SECONDS", 30, minimum=1)
# Proxies (CIDRs) whose X-Forwarded-For is believed for the client's address; none by default,
# so the address is the peer's (REMOTE_ADDR) and a client cannot choose its own.
TRUSTED_PROXIES = env_networks("PERFCASE_TRUSTED_PROXIES")
# Uploads are measured while they stream (investigations/uploads.py): a file past
# PERFCASE_UPLOAD_MAX_FILE_MB or a request past PERFCASE_UPLOAD_MAX_REQUEST_MB is stopped and
# refused with a 413 before anything reads it; each kind of import has a smaller limit.
FILE_UPLOAD_HANDLERS = [
    "investigations.uploads.LimitedUploadHandler",
    "django.core.files.uploadhandler.MemoryFileUploadHandler",
    "django.core.files.uploadhandler.TemporaryFileUploadHandler",
]
UPLOAD_MAX_FILE_MB = env_int("PERFCASE_UPLOAD_MAX_FILE_MB", 2048, minimum=1)
UPLOAD_MAX_REQUEST_MB = env_int("PERFCASE_UPLOAD_MAX_REQUEST_MB", 20480, minimum=1)
DATA_UPLOAD_MAX_NUMBER_FILES = 50
# A file kept as the evidence of a traffic-path hop.
PATH_EVIDENCE_MAX_MB = env_int("PERFCASE_PATH_EVIDENCE_MAX_MB", 50, minimum=1)
# API tokens from POST /api/auth/token and the profile page stop working after this many days.
API_TOKEN_DAYS = env_int("PERFCASE_API_TOKEN_DAYS", 30, minimum=1)
# The API's own rate limits (investigations/api/limits.py), per token (per address without
# one), counted in the cache below so that every web process shares them: writes, and the
# reads that cost the most (search, similar cases, diffs and comparisons, the postmortem,
# the baseline export) together with imports.
API_WRITE_RATE = env_rate("PERFCASE_API_WRITE_RATE", "120/minute")
API_EXPENSIVE_RATE = env_rate("PERFCASE_API_EXPENSIVE_RATE", "30/minute")


# A lead's invitation to join a team lapses unanswered after this many days.
INVITATION_DAYS = env_int("PERFCASE_INVITATION_DAYS", 14, minimum=1)

ROOT_URLCONF = "app.urls"
WSGI_APPLICATION = "app.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [SHARED_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

_SQLITE_PATH = VAR_DIR / "perfcase.sqlite3"
DATABASES = {
    "default": dj_database_url.parse(
        env_str("DATABASE_URL", f"sqlite:///{_SQLITE_PATH}"), conn_max_age=60
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    VAR_DIR.mkdir(parents=True, exist_ok=True)
    # The web server and the worker write at once: WAL and IMMEDIATE transactions turn
    # "database is locked" errors into short waits.
    DATABASES["default"]["CONN_MAX_AGE"] = 0
    DATABASES["default"]["OPTIONS"] = {
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
        "transaction_mode": "IMMEDIATE",
        "timeout": 20,
    }
    # A file, not memory, so that a test's Celery worker process sees the test data.
    DATABASES["default"]["TEST"] = {"NAME": str(VAR_DIR / "test.sqlite3")}

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "investigation_list"
LOGOUT_REDIRECT_URL = "login"

# The interface speaks English and Chinese: a person's own choice (profile, or the menu's
# switch) wins, then the browser's Accept-Language, then PERFCASE_LANGUAGE.
LANGUAGES = [("en", "English"), ("zh-hans", "简体中文")]
LANGUAGE_CODE = env_str("PERFCASE_LANGUAGE", "en")
if LANGUAGE_CODE not in dict(LANGUAGES):
    raise ImproperlyConfigured(
        f"PERFCASE_LANGUAGE must be one of {', '.join(code for code, _ in LANGUAGES)}"
    )
LOCALE_PATHS = [SHARED_DIR / "locale"]
# Chinese numbers grouped by thousands with a comma, as the English ones.
FORMAT_MODULE_PATH = ["investigations.formats"]
LANGUAGE_COOKIE_AGE = 365 * 24 * 3600
# The default zone for display; a browser's own zone (sent in a cookie) wins per request.
TIME_ZONE = env_str("PERFCASE_TIME_ZONE", "UTC")
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [SHARED_DIR / "static"]
# Collected by `collectstatic` for production; in DEBUG whitenoise serves from the finders.
_STATIC_ROOT = VAR_DIR / "staticfiles" if FROM_WHEEL else BASE_DIR / "staticfiles"
STATIC_ROOT = None if DEBUG else Path(env_str("PERFCASE_STATIC_ROOT", str(_STATIC_ROOT)))
WHITENOISE_USE_FINDERS = DEBUG
# In DEBUG a file is looked up when asked for (whitenoise's own default there), instead of
# every static file being scanned each time a request handler starts; decided here, not by
# DEBUG at that moment (the test runner turns DEBUG off, and each test client's handler then
# scanned the 190 static files again: a sixth of a view test's time).
WHITENOISE_AUTOREFRESH = DEBUG
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": (
            "django.contrib.staticfiles.storage.StaticFilesStorage"
            if DEBUG
            else "whitenoise.storage.CompressedManifestStaticFilesStorage"
        )
    },
}
MEDIA_ROOT = Path(env_str("PERFCASE_MEDIA_ROOT", str(VAR_DIR / "media")))
MEDIA_URL = "media/"
# Artifacts (raw outputs, perf scripts, pcaps, evidence files) in S3-compatible object
# storage instead of MEDIA_ROOT, so that workers on other machines share them with the web:
# set the bucket (and the endpoint for anything but AWS). Downloads stream through the app.
S3_BUCKET = env_str("PERFCASE_S3_BUCKET", "")
if S3_BUCKET:
    STORAGES["default"] = {
        "BACKEND": "storages.backends.s3.S3Storage",
        "OPTIONS": {
            "bucket_name": S3_BUCKET,
            "endpoint_url": env_str("PERFCASE_S3_ENDPOINT_URL", "") or None,
            "region_name": env_str("PERFCASE_S3_REGION", "") or None,
            "access_key": env_str("PERFCASE_S3_ACCESS_KEY", "") or None,
            "secret_key": env_str("PERFCASE_S3_SECRET_KEY", "") or None,
            "location": env_str("PERFCASE_S3_PREFIX", "perfcase"),
            "addressing_style": env_str("PERFCASE_S3_ADDRESSING_STYLE", "path"),
            "default_acl": None,
            "file_overwrite": False,
            "querystring_auth": True,
        },
    }

# Security. The production defaults satisfy `manage.py check --deploy`; each can be changed.
SECURE_COOKIES = env_bool("PERFCASE_SECURE_COOKIES", not DEBUG)
SESSION_COOKIE_SECURE = SECURE_COOKIES
CSRF_COOKIE_SECURE = SECURE_COOKIES
SESSION_COOKIE_HTTPONLY = True
SECURE_SSL_REDIRECT = env_bool("PERFCASE_SSL_REDIRECT", not DEBUG)
# Load balancers probe over plain HTTP.
SECURE_REDIRECT_EXEMPT = [r"^healthz$"]
SECURE_HSTS_SECONDS = env_int("PERFCASE_HSTS_SECONDS", 0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("PERFCASE_HSTS_INCLUDE_SUBDOMAINS", False)
SECURE_HSTS_PRELOAD = env_bool("PERFCASE_HSTS_PRELOAD", False)
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
# For the scheme only (X-Forwarded-Proto); the client's address comes from X-Forwarded-For
# only when the peer is one of PERFCASE_TRUSTED_PROXIES.
BEHIND_TLS_PROXY = env_bool("PERFCASE_BEHIND_TLS_PROXY", False)
if BEHIND_TLS_PROXY:
    # Only behind a proxy that sets this header itself and strips it from clients.
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SILENCED_SYSTEM_CHECKS = env_list("PERFCASE_SILENCED_SYSTEM_CHECKS")

# Private keys of SSH credentials are encrypted with the first of these Fernet keys;
# the others still decrypt, so keys can be rotated. In DEBUG a key is derived from
# SECRET_KEY so that `make run` needs no set-up.
CREDENTIAL_KEYS = env_list("PERFCASE_CREDENTIAL_KEYS")
if not CREDENTIAL_KEYS and not DEBUG:
    raise ImproperlyConfigured(
        "PERFCASE_CREDENTIAL_KEYS must be set when DEBUG is off; make one with "
        "python -c 'from cryptography.fernet import Fernet; print(Fernet.generate_key().decode())'"
    )

# Celery. Tasks name their own limits too; these are the floor for any that forget.
CELERY_BROKER_URL = env_str("CELERY_BROKER_URL", "filesystem://")
if CELERY_BROKER_URL == "filesystem://":
    _BROKER_DIR = VAR_DIR / "broker"
    # The embedded broker is a pair of folders; they must exist before anyone sends.
    for _folder in ("queue", "control"):
        (_BROKER_DIR / _folder).mkdir(parents=True, exist_ok=True)
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(_BROKER_DIR / "queue"),
        "data_folder_out": str(_BROKER_DIR / "queue"),
        "control_folder": str(_BROKER_DIR / "control"),
        "store_processed": False,
        # The worker looks for new work this often (kombu's default is once a second): a
        # listing of one small folder, cheap enough to do 50 times a second.
        "polling_interval": 0.02,
    }
else:
    # Longer than any task may run, so a slow acks_late task is not delivered twice.
    CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": 2 * 3600}
CELERY_TASK_DEFAULT_QUEUE = env_str("PERFCASE_QUEUE", "perfcase")

# The cache holds what every web process must share (the API's rate-limit counters): Redis
# when the broker is Redis (or PERFCASE_CACHE_URL names one), else files under var/ for
# the embedded stack, whose web server and worker are processes on one machine.
_CACHE_URL = env_str(
    "PERFCASE_CACHE_URL",
    CELERY_BROKER_URL
    if CELERY_BROKER_URL.startswith(("redis://", "rediss://"))
    else f"file://{VAR_DIR / 'cache'}",
)
if _CACHE_URL.startswith(("redis://", "rediss://")):
    _CACHE_BACKEND = "django.core.cache.backends.redis.RedisCache"
    _CACHE_LOCATION = _CACHE_URL
elif _CACHE_URL.startswith("file:///"):
    _CACHE_BACKEND = "django.core.cache.backends.filebased.FileBasedCache"
    _CACHE_LOCATION = _CACHE_URL.removeprefix("file://")
else:
    raise ImproperlyConfigured(
        f"PERFCASE_CACHE_URL must be redis://, rediss:// or file:///<absolute folder>, "
        f"not {_CACHE_URL!r}"
    )
CACHES = {
    "default": {
        "BACKEND": _CACHE_BACKEND,
        "LOCATION": _CACHE_LOCATION,
        # Installations (or test runs) sharing one Redis keep their counters apart by it.
        "KEY_PREFIX": env_str("PERFCASE_CACHE_KEY_PREFIX", "perfcase"),
    }
}
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_SOFT_TIME_LIMIT = 300
CELERY_TASK_TIME_LIMIT = 360
CELERY_TASK_IGNORE_RESULT = True
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_WORKER_HIJACK_ROOT_LOGGER = False
CELERY_TASK_ALWAYS_EAGER = False

WEBHOOK_TIMEOUT_SECONDS = env_int("PERFCASE_WEBHOOK_TIMEOUT", 10, minimum=1)
# Networks a webhook may be delivered to although they are not public (comma-separated CIDRs,
# e.g. 10.20.0.0/16 for a chat server inside): by default none, so a webhook cannot be made
# to probe loopback, private or cloud-metadata addresses.
WEBHOOK_ALLOWED_NETWORKS = env_networks("PERFCASE_WEBHOOK_ALLOWED_NETWORKS")

# Collections. The local transport runs probes on the app's own machine (demo, single-machine
# set-ups); it is off unless DEBUG or explicitly enabled.
LOCAL_TRANSPORT = env_bool("PERFCASE_LOCAL_TRANSPORT", DEBUG)
SSH_CONNECT_TIMEOUT = env_int("PERFCASE_SSH_CONNECT_TIMEOUT", 10, minimum=1)
FACTS_TIMEOUT = env_int("PERFCASE_FACTS_TIMEOUT", 90, minimum=5)
# A collection's targets begin together once all are connected (runs/gate.py), and never
# before this long after the request.
COLLECTION_START_DELAY_MS = env_int("PERFCASE_COLLECTION_START_DELAY_MS", 0)
# How many hosts one collection reaches at once (a thread each in its task).
COLLECTION_PARALLELISM = env_int("PERFCASE_COLLECTION_PARALLELISM", 32, minimum=1)
# Every worker fails the targets and ladder sides past their deadline this often
# (investigations/worker.py), so a killed worker's work never stays "running". Each sweep is
# three index scans over the unfinished rows only.
SWEEP_SECONDS = env_int("PERFCASE_SWEEP_SECONDS", 5, minimum=1)
# A collection target's deadline is its own length (connecting, then the seconds it was asked
# to measure) and this much more; a live run moves it on every few seconds while it works
# (the check, the analysis), so only a run whose worker died or hung passes it.
TARGET_GRACE_SECONDS = env_int("PERFCASE_TARGET_GRACE_SECONDS", 30, minimum=10)
# A ladder's run may take its steps and this much more (stopping the tools, the analysis);
# past that its sides are failed.
LADDER_GRACE_SECONDS = env_int("PERFCASE_LADDER_GRACE_SECONDS", 120, minimum=5)
# A profile or a capture during a ladder's step is asked for at least this long before the
# step begins (its hosts connect and check first), and a ladder that holds a knee's load
# for them starts this long and 5 s more after it is asked for. Raise it for hosts behind
# slow jump hosts; lower it where hosts answer at once.
STEP_LEAD_SECONDS = env_int("PERFCASE_STEP_LEAD_SECONDS", 15, minimum=2)
# The case page draws the newest this many timeline events; earlier ones load as they scroll
# into view.
TIMELINE_WINDOW = env_int("PERFCASE_TIMELINE_WINDOW", 50, minimum=10)
# How often an open page asks for new timeline events, in milliseconds.
TIMELINE_POLL_MS = env_int("PERFCASE_TIMELINE_POLL_MS", 3000, minimum=500)

# Every record goes through one handler whose filter escapes control characters in what
# it writes (investigations/log_records.py): user text in a log line (a URL, a user name, a
# CSP report) cannot start a line of its own. Django's loggers send theirs there too, rather
# than to Django's own console handler, which writes them raw.
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {"escape_controls": {"()": "investigations.log_records.EscapeControls"}},
    "handlers": {
        "console": {"class": "logging.StreamHandler", "filters": ["escape_controls"]},
    },
    "loggers": {
        "django": {"handlers": [], "level": "INFO", "propagate": True},
        "django.server": {"handlers": ["console"], "level": "INFO", "propagate": False},
    },
    "root": {"handlers": ["console"], "level": env_str("PERFCASE_LOG_LEVEL", "INFO")},
}
# Browsers' reports of what the Content-Security-Policy blocked (/csp-report/): logged at
# most this many a minute from one address (an IPv6 /64); more are answered 429, unlogged.
CSP_REPORTS_PER_MINUTE = env_int("PERFCASE_CSP_REPORTS_PER_MINUTE", 60, minimum=1)

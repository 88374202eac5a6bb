"""Production settings: `check --deploy` is clean, and bad values fail loudly at start-up.

What Django's checks or the app must see runs `manage.py` in a process of its own; what the
settings module alone decides is read by running that module afresh in this process, with
the environment the test gives it (a process start costs a second or two of CPU).
"""

import os
import runpy
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from cryptography.fernet import Fernet
from django.core.exceptions import ImproperlyConfigured

ROOT = Path(__file__).resolve().parent.parent.parent

PRODUCTION = {
    "PERFCASE_DEBUG": "0",
    "PERFCASE_SECRET_KEY": "n6Qx-3vS0Zp1rUe9mW4yBq7cJk2hTfL8aD5gXoVbNsYiRwPjEuCzHlMtKdGq",
    "PERFCASE_ALLOWED_HOSTS": "perfcase.example.org",
    "PERFCASE_CREDENTIAL_KEYS": Fernet.generate_key().decode(),
    "PERFCASE_HSTS_SECONDS": "31536000",
    "PERFCASE_HSTS_INCLUDE_SUBDOMAINS": "1",
    "PERFCASE_HSTS_PRELOAD": "1",
}


def manage(*args: str, **env: str) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items() if not k.startswith("PERFCASE_")}
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env={**base, "PERFCASE_VAR_DIR": str(ROOT / "var" / "settings-test"), **env},
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.fixture
def settings_of(monkeypatch):
    """The settings module run afresh with these environment values (and none of the
    PERFCASE_ values this process has), as `manage.py` would read it."""

    def read(**env: str) -> SimpleNamespace:
        for name in [name for name in os.environ if name.startswith("PERFCASE_")]:
            monkeypatch.delenv(name)
        monkeypatch.setenv("PERFCASE_VAR_DIR", str(ROOT / "var" / "settings-test"))
        for name, value in env.items():
            monkeypatch.setenv(name, value)
        return SimpleNamespace(**runpy.run_path(str(ROOT / "app" / "settings.py")))

    return read


def test_check_deploy_says_nothing_with_production_settings():
    result = manage("check", "--deploy", "--fail-level", "WARNING", **PRODUCTION)

    assert result.returncode == 0, result.stderr
    assert "System check identified no issues" in result.stdout


def test_check_deploy_names_what_is_left_to_set():
    env = {**PRODUCTION, "PERFCASE_HSTS_SECONDS": "0"}

    result = manage("check", "--deploy", "--fail-level", "WARNING", **env)

    assert result.returncode != 0
    assert "security.W004" in result.stderr


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"PERFCASE_SECRET_KEY": ""}, "PERFCASE_SECRET_KEY"),
        ({"PERFCASE_CREDENTIAL_KEYS": ""}, "PERFCASE_CREDENTIAL_KEYS"),
        ({"PERFCASE_ALLOWED_HOSTS": ""}, "PERFCASE_ALLOWED_HOSTS"),
        ({"PERFCASE_HSTS_SECONDS": "a year"}, "PERFCASE_HSTS_SECONDS must be an integer"),
        ({"PERFCASE_DEBUG": "maybe"}, "PERFCASE_DEBUG must be a boolean"),
        ({"PERFCASE_BASE_URL": "ftp://x"}, "PERFCASE_BASE_URL"),
        ({"PERFCASE_API_WRITE_RATE": "lots"}, "PERFCASE_API_WRITE_RATE must be a number"),
        ({"PERFCASE_API_EXPENSIVE_RATE": "30/fortnight"}, "PERFCASE_API_EXPENSIVE_RATE"),
        ({"PERFCASE_CACHE_URL": "memcached://cache:11211"}, "PERFCASE_CACHE_URL must be"),
        ({"PERFCASE_TRUSTED_PROXIES": "10.0.0.0/8,the lb"}, "PERFCASE_TRUSTED_PROXIES"),
    ],
)
def test_bad_or_missing_production_values_stop_the_start(settings_of, env, message):
    settings = {**PRODUCTION, **env}
    settings = {k: v for k, v in settings.items() if v != ""}

    with pytest.raises(ImproperlyConfigured) as refused:
        settings_of(**settings)

    assert message in str(refused.value)


def test_a_bad_value_stops_manage_py_with_its_message():
    result = manage("check", **{**PRODUCTION, "PERFCASE_HSTS_SECONDS": "a year"})

    assert result.returncode != 0
    assert "ImproperlyConfigured" in result.stderr
    assert "PERFCASE_HSTS_SECONDS must be an integer" in result.stderr


def test_a_credential_key_that_is_not_a_fernet_key_is_refused():
    result = manage(
        "shell",
        "-c",
        "from investigations.vault import seal; seal('x')",
        **{**PRODUCTION, "PERFCASE_CREDENTIAL_KEYS": "not-a-key"},
    )

    assert result.returncode != 0
    assert "PERFCASE_CREDENTIAL_KEYS must hold Fernet keys" in result.stderr


def test_the_example_environment_passes_check_deploy_as_the_readme_says():
    """.env.example with its blanks filled in is what production starts from."""
    example = {}
    for line in (ROOT / ".env.example").read_text().splitlines():
        if line.startswith("PERFCASE_") and "=" in line:
            key, value = line.split("=", 1)
            example[key] = value
    example["PERFCASE_SECRET_KEY"] = PRODUCTION["PERFCASE_SECRET_KEY"]
    example["PERFCASE_CREDENTIAL_KEYS"] = PRODUCTION["PERFCASE_CREDENTIAL_KEYS"]

    result = manage("check", "--deploy", "--fail-level", "WARNING", **example)

    assert result.returncode == 0, result.stderr
    assert "System check identified no issues" in result.stdout


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({"CELERY_BROKER_URL": "redis://redis:6379/0"}, "RedisCache redis://redis:6379/0"),
        (
            {"CELERY_BROKER_URL": "redis://redis:6379/0", "PERFCASE_CACHE_URL": "redis://c:6379/2"},
            "RedisCache redis://c:6379/2",
        ),
        (
            {"CELERY_BROKER_URL": "filesystem://"},
            "FileBasedCache " + str(ROOT / "var" / "settings-test" / "cache"),
        ),
    ],
)
def test_the_cache_every_process_shares_follows_the_broker(settings_of, env, expected):
    cache = settings_of(**env).CACHES["default"]

    assert f"{cache['BACKEND'].rsplit('.', 1)[1]} {cache['LOCATION']}" == expected


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({}, "(120, 60) (30, 60)"),
        (
            {"PERFCASE_API_WRITE_RATE": "10/second", "PERFCASE_API_EXPENSIVE_RATE": "5/hour"},
            "(10, 1) (5, 3600)",
        ),
        ({"PERFCASE_API_WRITE_RATE": "0", "PERFCASE_API_EXPENSIVE_RATE": ""}, "None (30, 60)"),
    ],
)
def test_api_rates_are_read_per_period_and_zero_is_no_limit_empty_the_default(
    settings_of, env, expected
):
    settings = settings_of(**env)

    assert f"{settings.API_WRITE_RATE} {settings.API_EXPENSIVE_RATE}" == expected

"""Shared fixtures: personas (lead, member, viewer, outsider), API clients, a real Celery worker."""

import contextlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass
from html import unescape
from pathlib import Path
from types import SimpleNamespace
from urllib.parse import quote

import psycopg
import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.hashers import make_password
from django.test import Client

from investigations.choices import Role
from investigations.models import Membership
from investigations.services.investigations import investigation_create
from investigations.services.teams import team_create
from investigations.services.tokens import api_token_create
from tests.serial import SERIAL_TESTS

# Real sshd test hosts (tests/sshd.py): the test_hosts, start_host and sshd_host fixtures.
pytest_plugins = ["tests.sshd", "tests.ladders"]

PASSWORD = "correct-horse-battery-staple"
ARTIFACTS = Path(__file__).resolve().parent.parent / "test-artifacts"

# Strings that have broken other apps: markup, quotes, shell syntax, CJK, emoji, length.
HOSTILE_STRINGS = [
    '<script>alert("x")</script><img src=x onerror=alert(1)>',
    "'; DROP TABLE investigations_investigation; --",
    '"$(rm -rf /)" `reboot` && echo pwned | sh; $HOME %s %n {{ 7*7 }}',
    "容器性能不如虚拟机：TPS 差一倍",
    "🔥🐢 slow side 👩‍💻",
    # As long as a short text may be (investigations/limits.py): stored whole, like the rest.
    "x" * 200,
]


@dataclass
class Personas:
    team: object
    lead: object
    member: object
    viewer: object
    outsider: object
    investigation: object

    def client(self, user) -> Client:
        client = Client()
        client.force_login(user)
        return client


def fresh(obj):
    return type(obj).objects.get(pk=obj.pk)


# The frames of an investigation page (the header's, each panel's), which htmx fills.
FRAME = re.compile(
    r'<(?P<tag>section|div) class="[^"]*\bframe\b[^"]*" id="[^"]+" hx-get="(?P<url>[^"]+)"'
    r".*?</(?P=tag)>",
    re.S,
)


def loaded_page(client: Client, url: str, data: dict | None = None, **headers) -> str:
    """An investigation page as a browser shows it once htmx has filled its frames: the
    page, then the header and each panel from its own URL in place of its frame (each must
    answer 200)."""
    response = client.get(url, data, **headers)
    assert response.status_code == 200, f"{url} answered {response.status_code}"

    def card(frame: re.Match) -> str:
        panel = client.get(unescape(frame["url"]), HTTP_HX_REQUEST="true", **headers)
        assert panel.status_code == 200, f"{frame['url']} answered {panel.status_code}"
        return panel.content.decode()

    return FRAME.sub(card, response.content.decode())


@pytest.fixture
def make_key(tmp_path):
    """Real ed25519 key pairs made by ssh-keygen, with the fingerprint ssh-keygen prints."""
    if shutil.which("ssh-keygen") is None:
        require_real_tool("ssh-keygen is not installed")
    counter = iter(range(1000))

    def make(passphrase: str = ""):
        path = tmp_path / f"id_ed25519_{next(counter)}"
        subprocess.run(
            ["ssh-keygen", "-q", "-t", "ed25519", "-N", passphrase, "-C", "perfcase", "-f", path],
            check=True,
            capture_output=True,
        )
        listing = subprocess.run(
            ["ssh-keygen", "-l", "-f", f"{path}.pub"], check=True, capture_output=True, text=True
        )
        text = path.read_text()
        body = [line for line in text.splitlines() if line and not line.startswith("-----")]
        return SimpleNamespace(
            text=text,
            body_lines=body,
            public=(tmp_path / f"{path.name}.pub").read_text(),
            fingerprint=listing.stdout.split()[1],
        )

    return make


def make_user(username: str):
    return get_user_model().objects.create_user(username=username, password=PASSWORD)


@pytest.fixture
def personas(db) -> Personas:
    # Almost every test starts here: the people in one statement, as create_user would make
    # them (the same password for each), and the team's two other members in another.
    User, password = get_user_model(), make_password(PASSWORD)
    lead, member, viewer, outsider = User.objects.bulk_create(
        User(username=name, password=password) for name in ["lena", "max", "vera", "otto"]
    )
    team = team_create(user=lead, name="Payments SRE")
    Membership.objects.bulk_create(
        [
            Membership(team=team, user=member, role=Role.RESPONDER),
            Membership(team=team, user=viewer, role=Role.VIEWER),
        ]
    )
    team_create(user=outsider, name="Another team")
    investigation = investigation_create(
        team=team,
        user=lead,
        title="Checkout p99 doubled on the new cloud",
        side_a_label="new cloud",
        side_b_label="old cloud",
    )
    return Personas(team, lead, member, viewer, outsider, investigation)


class ApiClient:
    """JSON calls with a real bearer token."""

    def __init__(self, user=None):
        self.client = Client()
        self.headers = {}
        if user is not None:
            _, raw = api_token_create(user=user, name="tests")
            self.headers["Authorization"] = f"Bearer {raw}"

    def _call(self, method: str, path: str, body=None, **extra):
        kwargs = {"headers": self.headers, **extra}
        if body is not None:
            kwargs.update(data=json.dumps(body), content_type="application/json")
        response = getattr(self.client, method)(path, **kwargs)
        json_answer = "json" in response.get("Content-Type", "") and not response.streaming
        response.body = response.json() if json_answer and response.content else None
        return response

    def get(self, path, **extra):
        return self._call("get", path, **extra)

    def post(self, path, body=None, **extra):
        return self._call("post", path, body if body is not None else {}, **extra)

    def patch(self, path, body=None, **extra):
        return self._call("patch", path, body if body is not None else {}, **extra)

    def delete(self, path, **extra):
        return self._call("delete", path, **extra)

    def post_multipart(self, path, data: dict, **extra):
        """A multipart form post (file uploads), its JSON answer in .body."""
        response = self.client.post(path, data, headers=self.headers, **extra)
        response.body = response.json() if "json" in response.get("Content-Type", "") else None
        return response


@pytest.fixture
def api_as():
    return ApiClient


def require_real_tool(reason: str) -> None:
    """Skip for a missing real tool, except in CI where it must be there."""
    if os.environ.get("PERFCASE_REQUIRE_REAL_TOOLS") == "1":
        pytest.fail(f"{reason} (PERFCASE_REQUIRE_REAL_TOOLS=1 forbids skipping)")
    pytest.skip(reason)


# --- a real Celery worker, in its own process, on the configured broker -------------------

TEST_QUEUE = f"perfcase-test-{uuid.uuid4().hex[:8]}"


def pytest_configure(config):
    from django.conf import settings

    from app.celery import app

    # Our own queue, so that a test run never takes or leaves work on a shared broker.
    app.conf.task_default_queue = TEST_QUEUE
    # Personas are made in almost every test; a cheap hasher keeps the suite fast.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    # Rate-limit counters of our own (and of the processes a test starts): parallel test
    # processes' users share ids, not counters.
    os.environ["PERFCASE_CACHE_KEY_PREFIX"] = f"perfcase-{TEST_QUEUE}"
    settings.CACHES["default"]["KEY_PREFIX"] = os.environ["PERFCASE_CACHE_KEY_PREFIX"]
    # The test hosts answer at once: a profile or capture during a ladder's step is asked for
    # 6 s ahead, not the 15 s hosts on real networks get (and a knee's load is held 11 s
    # after it is asked for, not 20), in this process and the workers it starts.
    os.environ["PERFCASE_STEP_LEAD_SECONDS"] = "6"
    settings.STEP_LEAD_SECONDS = 6
    # The run's id, known to the pytest-xdist controller as to every process: it names what
    # the run's processes share (tests/once.py), which the controller removes at the end.
    if not hasattr(config, "workerinput") and getattr(config.option, "numprocesses", None):
        config.option.testrunuid = config.option.testrunuid or uuid.uuid4().hex


def pytest_collection_modifyitems(config, items):
    for item in items:
        if item.nodeid.startswith(SERIAL_TESTS):
            item.add_marker(pytest.mark.serial)
    # Spread over processes: each begins with its share of the long files (tests/schedule.py).
    processes = getattr(config, "workerinput", {}).get("workercount", 1)
    if processes > 1:
        from tests.schedule import deal

        skip_serial = "not serial" in (config.option.markexpr or "")
        items[:] = deal(
            items,
            processes,
            runs=lambda item: not (skip_serial and item.get_closest_marker("serial")),
            kind=_django_order,
        )


def _django_order(item) -> int:
    """Where pytest-django's own ordering puts a test: 0 in a rolled-back transaction, 1
    transactional (its end empties every table), 2 without a database."""
    from pytest_django.plugin import validate_django_db

    marker = item.get_closest_marker("django_db")
    transactional = bool(marker) and any(validate_django_db(marker)[:2])
    fixtures = getattr(item, "fixturenames", [])
    if transactional or "transactional_db" in fixtures or "live_server" in fixtures:
        return 1
    return 0 if marker or "db" in fixtures else 2


def _database_url(settings_dict: dict) -> str:
    if settings_dict["ENGINE"].endswith("sqlite3"):
        return f"sqlite:///{settings_dict['NAME']}"
    user = quote(settings_dict.get("USER") or "", safe="")
    password = quote(settings_dict.get("PASSWORD") or "", safe="")
    auth = f"{user}:{password}@" if password else (f"{user}@" if user else "")
    host = settings_dict.get("HOST") or "localhost"
    port = settings_dict.get("PORT") or 5432
    return f"postgres://{auth}{host}:{port}/{settings_dict['NAME']}"


def start_worker(
    queue: str, log_name: str = "celery-worker.log", env: dict | None = None
) -> tuple[subprocess.Popen, str]:
    """A `celery worker` process (concurrency 2, as make run's) on the test database and
    on `queue`; returns it with its host name once it answers a ping."""
    from django.db import connection

    from app.celery import app

    ARTIFACTS.mkdir(exist_ok=True)
    hostname = f"{queue}@localhost"
    env = {
        **os.environ,
        "DATABASE_URL": _database_url(connection.settings_dict),
        "PERFCASE_QUEUE": queue,
        # The tests' webhook receivers listen on loopback, which production refuses.
        "PERFCASE_WEBHOOK_ALLOWED_NETWORKS": "127.0.0.0/8",
        # Celery runs Django's system checks as a worker starts: every URL is loaded and the
        # API's schemas built (0.3 s of CPU here; django.setup() is 0.7 s). The suite starts
        # a worker per process and more in its tests; test_settings.py runs the checks.
        "CELERY_SKIP_CHECKS": "1",
        **(env or {}),
    }
    log = open(ARTIFACTS / log_name, "w")
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "app",
            "worker",
            "--concurrency",
            "2",
            "--loglevel",
            "INFO",
            "--hostname",
            hostname,
            "--without-gossip",
            "--without-mingle",
        ],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        cwd=Path(__file__).resolve().parent.parent,
    )
    log.close()  # the worker has its own copy of the descriptor
    deadline = time.monotonic() + 60
    while not app.control.ping(destination=[hostname], timeout=1.0):
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            raise RuntimeError(f"The test Celery worker did not start; see {ARTIFACTS / log_name}")
    return process, hostname


def stop_worker(process: subprocess.Popen) -> None:
    process.terminate()
    try:
        process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        process.kill()


def pytest_sessionfinish(session):
    config = session.config
    if hasattr(config, "workerinput"):
        return  # the controller, or a run without pytest-xdist, cleans up once
    from django.db import connection

    from tests import once, testdb

    if connection.vendor == "postgresql":
        with contextlib.suppress(psycopg.OperationalError):  # no server: nothing to drop
            testdb.drop_other_templates(connection.settings_dict, testdb.source_digest())
    once.remove(config)


@pytest.fixture(autouse=True)
def default_language():
    """Each test starts in the default language. Django activates a request's language in
    the thread that serves it and never deactivates it, so after a test's request in
    Chinese, text made outside a request (a service's error) would be Chinese in the next
    test of the process."""
    from django.utils import translation

    translation.deactivate()
    yield
    translation.deactivate()


@pytest.fixture
def shipped_knowledge(db):
    """The knowledge base's entries the migrations ship, put back if an earlier
    transactional test of this process emptied every table (as each does when it ends)."""
    from importlib import import_module

    from django.apps import apps

    import_module("investigations.migrations.0013_root_causes").ship(apps, None)
    import_module("investigations.migrations.0027_root_cause_signals").ship_signals(apps, None)


@pytest.fixture(scope="session")
def django_db_setup(
    request, django_test_environment, django_db_blocker, django_db_modify_db_settings
):
    """pytest-django's, except that on PostgreSQL each process copies the one migrated
    template database of this version of the code instead of migrating its own, commits
    without waiting for the disk, and empties it after a transactional test with DELETE
    (tests/testdb.py)."""
    from django.db import connection
    from django.test.utils import setup_databases, teardown_databases

    with django_db_blocker.unblock():
        if connection.vendor == "postgresql":
            from tests import testdb

            testdb.clone_test_database(connection, testdb.source_digest())
            testdb.flush_by_delete()
            yield
            testdb.drop_test_database(connection)
            return
        databases = setup_databases(verbosity=0, interactive=False)
    yield
    with django_db_blocker.unblock():
        teardown_databases(databases, verbosity=0)


@pytest.fixture(scope="session", autouse=True)
def ids_of_this_process(django_db_setup, django_db_blocker):
    """Under pytest-xdist, the ids of worker gw<n>'s rows start at (n + 1) x 10,000,000.

    Each test process has a database of its own, so without this two processes' ladders,
    collections and targets have the same ids, and what is named after an id outside the
    database (a run's PID and scratch files in /tmp, shared by every test host) would meet.
    """
    from django.db import connection

    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    if not (worker.startswith("gw") and worker[2:].isdigit()) or connection.vendor != "postgresql":
        return
    start = (int(worker[2:]) + 1) * 10_000_000
    with django_db_blocker.unblock(), connection.cursor() as cursor:
        cursor.execute(
            "SELECT quote_ident(schemaname) || '.' || quote_ident(sequencename) "
            "FROM pg_sequences WHERE schemaname = current_schema()"
        )
        for (sequence,) in cursor.fetchall():
            cursor.execute("SELECT setval(%s, %s, false)", [sequence, start])


@pytest.fixture(scope="session")
def celery_worker(django_db_setup, django_db_blocker):
    """A `celery worker` process on the test database and a queue of this run's own.

    Tests that use it need `django_db(transaction=True)`: the worker sees committed rows only.
    """
    # A log of each test process's own (pytest-xdist runs several at once).
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    process, hostname = start_worker(
        TEST_QUEUE, log_name=f"celery-worker-{worker}.log" if worker else "celery-worker.log"
    )
    yield hostname
    stop_worker(process)


@pytest.fixture
def credential(personas, test_hosts):
    """The team's credential with the key every sshd test host accepts."""
    from investigations.services.inventory import credential_create

    return credential_create(
        team=personas.team,
        user=personas.member,
        name="probe key",
        private_key=test_hosts.client_key,
    )


def host_key_scanned(api: ApiClient, host, timeout: float = 30.0) -> dict:
    """Ask a worker to scan the host's key and wait for the scan's end (done or failed)."""
    asked = api.post(f"/api/hosts/{host.pk}/host-key/scan")
    assert asked.status_code == 202, asked.body
    return host_key_scan_end(api, host, timeout)


def host_key_scan_end(api: ApiClient, host, timeout: float = 30.0) -> dict:
    """The host's last scan once it has ended (done or failed)."""
    return wait_for(
        lambda: (
            (body := api.get(f"/api/hosts/{host.pk}/host-key/scan").body)["status"]
            in ("done", "failed")
            and body
        ),
        timeout=timeout,
        interval=0.1,
    )


def trust_host_key(api: ApiClient, host) -> dict:
    """Scan the host's key and trust it through the API, as a person does on the host page.

    The scan runs here, not in the worker: a test that only needs a trusted key must not
    wait behind whatever an earlier test left running in the shared worker (a scan through
    the worker is tested on its own, with `host_key_scanned`)."""
    from investigations.models import Host
    from investigations.services.hostkeys import host_key_scan

    # As stored (a jump host's key was trusted through the API, not on this object).
    key = host_key_scan(host=Host.objects.select_related("jump_host").get(pk=host.pk))
    trusted = api.post(f"/api/hosts/{host.pk}/host-key/trust", {"fingerprint": key.fingerprint})
    assert trusted.status_code == 200, trusted.body
    return {"status": "done", "fingerprint": key.fingerprint, "key_type": key.key_type}


def wait_for(predicate, timeout: float = 20.0, interval: float = 0.2):
    """Poll until predicate() returns something truthy; return it, or fail after timeout."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        result = predicate()
        if result:
            return result
        time.sleep(interval)
    raise AssertionError(f"condition not met within {timeout}s")


@pytest.fixture
def console_log():
    """What the console handler settings.LOGGING configures writes during the test (its
    filter and all), as a StringIO."""
    import io
    import logging

    [handler] = [h for h in logging.getLogger().handlers if h.get_name() == "console"]
    stream = io.StringIO()
    previous = handler.setStream(stream)
    yield stream
    handler.setStream(previous)


def log_records(text: str) -> list[str]:
    """The records in a log's text: the lines that do not continue a traceback."""
    from investigations.log_records import TRACEBACK_INDENT

    return [line for line in text.split("\n") if line and not line.startswith(TRACEBACK_INDENT)]


@pytest.fixture
def http_port():
    """A port on 127.0.0.1 where an HTTP server listens (a host's web port given as its SSH
    port): it answers the SSH client's banner with an HTTP error page."""
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Quiet(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server.server_port
    server.shutdown()
    server.server_close()


@pytest.fixture
def silent_port():
    """A port on 127.0.0.1 that accepts connections and never sends a byte (a hung sshd, a
    load balancer without a backend)."""
    import socket
    import threading

    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    held, stop = [], threading.Event()

    def accept():
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(server.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield server.getsockname()[1]
    stop.set()
    thread.join()
    for connection in held:
        connection.close()
    server.close()


def jobs_of(rows):
    """The Job rows of these rows (a queryset of collection targets, say): where their
    status, claims and deadline live, to set them in a test."""
    from investigations.models import Job

    return Job.objects.filter(pk__in=rows.values("job_id"))

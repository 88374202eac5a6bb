"""A long case stays fast: the case page of an investigation with 10,000 timeline events,
served by gunicorn as in production, against a bare Django view under the same gunicorn.

    python -m tests.bench.bench_case_page

Set-up, in a temporary var dir with the embedded defaults (SQLite, as `make run`): migrate,
one team, one investigation, 10,000 events, a signed-in session. Then gunicorn (2 workers,
as on a 2-core machine) on a free loopback port, and two measurements:

1. the case page fetched one request at a time: p50 and p95 of the time to the last byte
   (on loopback, the server's time); target p95 under 100 ms;
2. 8 clients at once for 10 s each, first on the case page, then on /healthz (a bare view:
   one query, a small JSON answer): requests a second of each; target: the case page at
   least half of the bare view's.

Exit status 1 when a target is missed.
"""

import http.client
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from tests.bench.stack import ROOT, _free_port, stack_environment

EVENTS = 10_000
SEQUENTIAL = 60
CLIENTS, SECONDS = 8, 10.0

SETUP = """
import django, sys
django.setup()
from datetime import timedelta
from django.contrib.auth import get_user_model
from django.contrib.sessions.backends.db import SessionStore
from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY
from django.utils import timezone
from investigations.models import TimelineEvent
from investigations.services.investigations import investigation_create
from investigations.services.teams import team_create
user = get_user_model().objects.create_user(username="bench", password="bench-password")
team = team_create(user=user, name="Bench")
case = investigation_create(team=team, user=user, title="Ten thousand events")
start = timezone.now() - timedelta(minutes=%(events)d)
TimelineEvent.objects.bulk_create(
    TimelineEvent(investigation=case, occurred_at=start + timedelta(minutes=n), kind="note",
                  summary=f"note {n}: the p99 of checkout on side A is up again", author=user)
    for n in range(%(events)d)
)
session = SessionStore()
session[SESSION_KEY] = str(user.pk)
session[BACKEND_SESSION_KEY] = "django.contrib.auth.backends.ModelBackend"
session[HASH_SESSION_KEY] = user.get_session_auth_hash()
session.create()
print(case.pk, session.session_key)
"""


def _get(port: int, path: str, cookie: str) -> tuple[int, int, float]:
    started = time.perf_counter()
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    connection.request("GET", path, headers={"Cookie": cookie})
    response = connection.getresponse()
    body = response.read()
    connection.close()
    return response.status, len(body), time.perf_counter() - started


def _rate(port: int, path: str, cookie: str) -> float:
    done, stop = [0] * CLIENTS, time.monotonic() + SECONDS

    def client(index: int) -> None:
        while time.monotonic() < stop:
            status, _, _ = _get(port, path, cookie)
            if status != 200:
                raise RuntimeError(f"{path} answered {status}")
            done[index] += 1

    threads = [threading.Thread(target=client, args=(i,)) for i in range(CLIENTS)]
    started = time.monotonic()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return sum(done) / (time.monotonic() - started)


def main() -> int:
    var_dir = Path(tempfile.mkdtemp(prefix="perfcase-bench-case-"))
    env, _dropped = stack_environment(var_dir)
    env["DJANGO_SETTINGS_MODULE"] = "app.settings"
    env["PERFCASE_DEBUG"] = "0"  # production: no debug toolbar of queries, cached templates
    env["PERFCASE_SECRET_KEY"] = "bench-" + "x" * 50
    env["PERFCASE_ALLOWED_HOSTS"] = "127.0.0.1"
    env["PERFCASE_CREDENTIAL_KEYS"] = "ZmDfcTF7_60GrrY167zsiPd67pEvs0aGOv2oasOM1Pg="
    env["PERFCASE_SSL_REDIRECT"] = "0"
    env["PERFCASE_SECURE_COOKIES"] = "0"
    env["PERFCASE_STATIC_ROOT"] = str(var_dir / "static")
    python = sys.executable
    for command in (["migrate", "--noinput"], ["collectstatic", "--noinput"]):
        subprocess.run([python, "manage.py", *command, "-v", "0"], cwd=ROOT, env=env, check=True)
    made = time.monotonic()
    case, session = subprocess.run(
        [python, "-c", SETUP % {"events": EVENTS}],
        cwd=ROOT,
        env=env,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()[-2:]
    print(f"case #{case} with {EVENTS:,} events made in {time.monotonic() - made:.1f} s")
    port = _free_port()
    server = subprocess.Popen(
        [
            python,
            "-m",
            "gunicorn",
            "app.wsgi",
            "--workers",
            "2",
            "--bind",
            f"127.0.0.1:{port}",
            "--log-level",
            "warning",
        ],
        cwd=ROOT,
        env=env,
    )
    cookie = f"sessionid={session}"
    page = f"/investigations/{case}/"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if _get(port, "/healthz", cookie)[0] == 200:
                    break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("gunicorn did not answer")
            time.sleep(0.2)
        for _ in range(5):  # warm both workers
            _get(port, page, cookie)
        times, size = [], 0
        for _ in range(SEQUENTIAL):
            status, size, seconds = _get(port, page, cookie)
            if status != 200:
                raise RuntimeError(f"the case page answered {status}")
            times.append(seconds * 1000)
        times.sort()
        p50 = statistics.median(times)
        p95 = times[int(0.95 * len(times)) - 1]
        print(
            f"case page, one at a time: p50 {p50:.1f} ms, p95 {p95:.1f} ms, "
            f"{size / 1024:.0f} KiB (target: p95 under 100 ms)"
        )
        page_rate = _rate(port, page, cookie)
        bare_rate = _rate(port, "/healthz", cookie)
        ratio = page_rate / bare_rate
        print(
            f"{CLIENTS} clients for {SECONDS:g} s: case page {page_rate:.0f} req/s, "
            f"/healthz {bare_rate:.0f} req/s, ratio {ratio:.2f} (target: at least 0.5)"
        )
    finally:
        server.terminate()
        server.wait(timeout=30)
        subprocess.run(["rm", "-rf", str(var_dir)], check=False)
    missed = p95 >= 100 or ratio < 0.5
    print("case page bench:", "MISSED a target" if missed else "targets met")
    return 1 if missed else 0


if __name__ == "__main__":
    os.chdir(ROOT)
    sys.exit(main())

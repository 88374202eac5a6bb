"""A long case stays fast: the case page of an investigation with 10,000 timeline events,
served by gunicorn as in production, against a bare Django view under the same gunicorn.

    python -m tests.bench.bench_case_page

Set-up, in a temporary var dir with the embedded defaults (SQLite, as `make run`): migrate,
one team, one investigation with 10,000 events (notes and actions), a signed-in session.
Then gunicorn (2 sync workers, as on a 2-core machine) on a free loopback port, and:

1. one request at a time: the case page (the title, and frames for the header and each
   panel), then the header and every panel as htmx loads them (HX-Request), an earlier
   window of the timeline too: p50 and p95 of the time to the last byte (on loopback, the
   server's time); target: p95 under 100 ms for the page and for every part;
2. the whole page as a browser gets it: the page, then its header and panels over 6
   connections at once (a browser's limit per host): p50 and p95 until the last is in;
3. wrk, 50 connections for 10 s, on the case page and then on /healthz (a view that runs
   `SELECT 1` and answers a small JSON: the bare view, through the same middleware with the
   same session cookie); target: the case page's requests a second at least half of it.

Exit status 1 when a target is missed.
"""

import concurrent.futures
import http.client
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tests.bench.stack import ROOT, _free_port, stack_environment

EVENTS = 10_000
SEQUENTIAL, PANEL_SEQUENTIAL = 60, 20
CONNECTIONS, SECONDS = 50, 10
BROWSER_CONNECTIONS = 6
TARGET_MS, TARGET_RATIO = 100.0, 0.5

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
    TimelineEvent(
        investigation=case, occurred_at=start + timedelta(minutes=n), author=user,
        kind="action" if n %% 4 == 0 else "note",
        action="restart" if n %% 4 == 0 else "",
        summary=f"note {n}: the p99 of checkout on side A is up again",
    )
    for n in range(%(events)d)
)
session = SessionStore()
session[SESSION_KEY] = str(user.pk)
session[BACKEND_SESSION_KEY] = "django.contrib.auth.backends.ModelBackend"
session[HASH_SESSION_KEY] = user.get_session_auth_hash()
session.create()
print(case.pk, session.session_key)
"""

# A frame on the case page (the header's, each panel's), which htmx fills, and the button of
# the timeline that loads an earlier window.
FRAME = re.compile(r'class="[^"]*\bframe\b[^"]*" id="([^"]+)" hx-get="([^"]+)"')
EARLIER = re.compile(r'hx-get="([^"]*before=\d+[^"]*)"')


def _get(port: int, path: str, cookie: str, htmx: bool = False) -> tuple[int, str, float]:
    started = time.perf_counter()
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    headers = {"Cookie": cookie, **({"HX-Request": "true"} if htmx else {})}
    connection.request("GET", path, headers=headers)
    response = connection.getresponse()
    body = response.read().decode()
    connection.close()
    return response.status, body, (time.perf_counter() - started) * 1000


def _percentiles(times: list[float]) -> tuple[float, float]:
    times = sorted(times)
    return statistics.median(times), times[max(0, int(0.95 * len(times)) - 1)]


def _times(port: int, path: str, cookie: str, count: int, htmx: bool = False) -> list[float]:
    times = []
    for _ in range(count):
        status, _body, ms = _get(port, path, cookie, htmx)
        if status != 200:
            raise RuntimeError(f"{path} answered {status}")
        times.append(ms)
    return times


def _whole_page(port: int, page: str, cookie: str) -> float:
    """The page, then its panels as htmx loads them, 6 at a time: ms until the last is in."""
    started = time.perf_counter()
    status, body, _ = _get(port, page, cookie)
    if status != 200:
        raise RuntimeError(f"{page} answered {status}")
    urls = [url for _name, url in FRAME.findall(body)]
    with concurrent.futures.ThreadPoolExecutor(BROWSER_CONNECTIONS) as pool:
        for status, _body, _ms in pool.map(lambda url: _get(port, url, cookie, True), urls):
            if status != 200:
                raise RuntimeError(f"a panel answered {status}")
    return (time.perf_counter() - started) * 1000


def _wrk_rate(port: int, path: str, cookie: str) -> float:
    answer = subprocess.run(
        [
            "wrk",
            "--threads",
            "2",
            "--connections",
            str(CONNECTIONS),
            "--duration",
            f"{SECONDS}s",
            "--timeout",
            "30s",
            "--header",
            f"Cookie: {cookie}",
            f"http://127.0.0.1:{port}{path}",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    if "Non-2xx" in answer or "Socket errors" in answer:
        raise RuntimeError(f"wrk on {path} saw failures:\n{answer}")
    return float(re.search(r"Requests/sec:\s+([\d.]+)", answer).group(1))


def main() -> int:
    if shutil.which("wrk") is None:
        print("case page bench: wrk is missing (apt-get install wrk)")
        return 1
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
        [python, "-m", "gunicorn", "app.wsgi", "--workers", "2"]
        + ["--bind", f"127.0.0.1:{port}", "--log-level", "warning"],
        cwd=ROOT,
        env=env,
    )
    # A browser's cookies: the session, and the CSRF cookie it got with its first page.
    cookie = f"sessionid={session}; csrftoken={'c' * 32}"
    page = f"/investigations/{case}/"
    slowest = 0.0
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
        _status, body, _ = _get(port, page, cookie)
        panels = FRAME.findall(body)
        timeline = dict(panels)["timeline"]
        earlier = EARLIER.findall(_get(port, timeline, cookie, True)[1])
        urls = [(name, url) for name, url in panels] + [
            ("timeline, an earlier window", url.replace("&amp;", "&")) for url in earlier[:1]
        ]
        for _ in range(5):  # warm both workers
            _get(port, page, cookie)
            for _name, url in urls:
                _get(port, url, cookie, True)
        p50, p95 = _percentiles(_times(port, page, cookie, SEQUENTIAL))
        slowest = p95
        print(
            f"case page, one at a time: p50 {p50:.1f} ms, p95 {p95:.1f} ms, "
            f"{len(body.encode()) / 1024:.0f} KiB (target: p95 under {TARGET_MS:g} ms)"
        )
        for name, url in urls:
            p50, p95 = _percentiles(_times(port, url, cookie, PANEL_SEQUENTIAL, htmx=True))
            slowest = max(slowest, p95)
            print(f"  {name}: p50 {p50:.1f} ms, p95 {p95:.1f} ms")
        p50, p95 = _percentiles([_whole_page(port, page, cookie) for _ in range(10)])
        print(
            f"the whole page as a browser loads it (the page, then {len(panels)} parts over "
            f"{BROWSER_CONNECTIONS} connections): p50 {p50:.0f} ms, p95 {p95:.0f} ms"
        )
        page_rate = _wrk_rate(port, page, cookie)
        bare_rate = _wrk_rate(port, "/healthz", cookie)
        ratio = page_rate / bare_rate
        print(
            f"wrk, {CONNECTIONS} connections for {SECONDS} s: case page {page_rate:.0f} req/s, "
            f"/healthz {bare_rate:.0f} req/s, ratio {ratio:.2f} (target: at least {TARGET_RATIO})"
        )
    finally:
        server.terminate()
        server.wait(timeout=30)
        shutil.rmtree(var_dir, ignore_errors=True)
    missed = slowest >= TARGET_MS or ratio < TARGET_RATIO
    print("case page bench:", "MISSED a target" if missed else "targets met")
    return 1 if missed else 0


if __name__ == "__main__":
    os.chdir(ROOT)
    sys.exit(main())

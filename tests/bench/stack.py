"""The default stack of `make run`, started for a bench in a directory of its own, and a
small client for its JSON API.

    with Stack() as stack:
        api = stack.api()
        api.login("demo", "perfcase-demo")
        api.post("/api/teams", {"name": "Bench"})

`Stack` runs what `make run` runs: `manage.py migrate`, `manage.py load_demo`, then
`manage.py runstack --port PORT` (the development web server and one Celery worker of
concurrency 2), on a free loopback port. Its environment is this one's without
DATABASE_URL, CELERY_BROKER_URL, DJANGO_SETTINGS_MODULE and every PERFCASE_* variable,
with PERFCASE_VAR_DIR set to a temporary directory: so it is the embedded set-up with its
defaults (SQLite, the filesystem broker), and its database, broker folders and media live
in that directory, never in the user's var/. Leaving the `with` block stops it (SIGTERM,
then SIGKILL for its whole process group) and removes the directory.
"""

import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
READY_TIMEOUT = 90.0
STOP_TIMEOUT = 30.0
REQUEST_TIMEOUT = 120.0
# Celery prints this line once the worker consumes from its queue.
WORKER_READY = " ready."


class StackError(RuntimeError):
    """The stack would not start, or an API call did not answer as it should."""


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def stack_environment(var_dir: Path) -> tuple[dict[str, str], list[str]]:
    """The child environment of the default stack, and the names of the variables left out."""
    dropped = sorted(
        name
        for name in os.environ
        if name.startswith("PERFCASE_")
        or name in ("DATABASE_URL", "CELERY_BROKER_URL", "DJANGO_SETTINGS_MODULE")
    )
    env = {name: value for name, value in os.environ.items() if name not in dropped}
    env["PERFCASE_VAR_DIR"] = str(var_dir)
    env["PYTHONUNBUFFERED"] = "1"
    return env, dropped


class Api:
    """JSON over HTTP/1.1 to the stack on loopback, a fresh connection per request (as a
    script with curl would), with the bearer token once `login` got one."""

    def __init__(self, port: int):
        self.port = port
        self.token: str | None = None

    def login(self, username: str, password: str) -> None:
        answer = self.post("/api/auth/token", {"username": username, "password": password})
        self.token = answer["token"]

    def request(self, method: str, path: str, body: dict | None = None, expect=(200, 201)):
        headers = {"Accept": "application/json"}
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=REQUEST_TIMEOUT)
        try:
            connection.request(method, path, body=data, headers=headers)
            response = connection.getresponse()
            raw = response.read()
        except OSError as error:
            raise StackError(f"{method} {path}: {type(error).__name__}: {error}") from error
        finally:
            connection.close()
        if response.status not in expect:
            raise StackError(
                f"{method} {path} answered {response.status}: {raw[:1000].decode(errors='replace')}"
            )
        return json.loads(raw) if raw else None

    def get(self, path: str, **options):
        return self.request("GET", path, **options)

    def post(self, path: str, body: dict | None = None, **options):
        return self.request("POST", path, {} if body is None else body, **options)


class Stack:
    def __init__(self, port: int | None = None):
        self.port = port or _free_port()
        self._directory: tempfile.TemporaryDirectory | None = None
        self.var_dir: Path | None = None
        self.process: subprocess.Popen | None = None
        self.dropped: list[str] = []
        self.setup_seconds = 0.0

    @property
    def log_path(self) -> Path:
        return self.var_dir / "stack.log"

    def log_tail(self, lines: int = 40) -> str:
        try:
            text = self.log_path.read_text(errors="replace")
        except (OSError, TypeError):
            return ""
        return "\n".join(text.splitlines()[-lines:])

    def api(self) -> Api:
        return Api(self.port)

    def __enter__(self) -> "Stack":
        self._directory = tempfile.TemporaryDirectory(prefix="perfcase-bench-stack-")
        self.var_dir = Path(self._directory.name)
        try:
            self._start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def _manage(self, env: dict[str, str], *command: str) -> None:
        with open(self.log_path, "ab") as log:
            log.write(f"--- manage.py {' '.join(command)}\n".encode())
            log.flush()
            done = subprocess.run(
                [sys.executable, "manage.py", *command],
                cwd=ROOT,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                timeout=300,
            )
        if done.returncode != 0:
            raise StackError(
                f"manage.py {' '.join(command)} exited {done.returncode}:\n{self.log_tail()}"
            )

    def _start(self) -> None:
        started = time.monotonic()
        env, self.dropped = stack_environment(self.var_dir)
        self._manage(env, "migrate", "--noinput")
        self._manage(env, "load_demo")
        with open(self.log_path, "ab") as log:
            log.write(f"--- manage.py runstack --port {self.port}\n".encode())
            log.flush()
            # A session of its own: its process group is the web server, the worker and the
            # worker's pool, so that all of them can be stopped together whatever happens.
            self.process = subprocess.Popen(
                [sys.executable, "manage.py", "runstack", "--port", str(self.port)],
                cwd=ROOT,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        deadline = time.monotonic() + READY_TIMEOUT
        api = self.api()
        while True:
            if self.process.poll() is not None:
                raise StackError(
                    f"runstack exited {self.process.returncode} before answering:\n"
                    f"{self.log_tail()}"
                )
            try:
                healthy = api.get("/healthz") == {"status": "ok"}
            except StackError:
                healthy = False
            if healthy and WORKER_READY in self.log_path.read_text(errors="replace"):
                break
            if time.monotonic() > deadline:
                raise StackError(
                    f"the stack did not answer on port {self.port} with a ready worker within "
                    f"{READY_TIMEOUT:g} s:\n{self.log_tail()}"
                )
            time.sleep(0.1)
        self.setup_seconds = time.monotonic() - started

    def stop(self) -> None:
        process, self.process = self.process, None
        if process is not None:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
                try:
                    process.wait(timeout=STOP_TIMEOUT)
                except subprocess.TimeoutExpired:
                    pass
            # runstack's group (its own session): whatever is left of it, the pool included.
            try:
                os.killpg(process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            process.wait(timeout=STOP_TIMEOUT)
        if self._directory is not None:
            self._directory.cleanup()
            self._directory = None

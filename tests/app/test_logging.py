"""Log lines cannot be forged: the console handler settings.LOGGING configures escapes every
control character of every record, whatever logger wrote it and whatever text it carries,
and indents tracebacks under their record."""

import io
import json
import logging
import os
import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from django.test import Client

from investigations.log_records import TRACEBACK_INDENT, escape_controls
from tests.conftest import log_records, wait_for

ROOT = Path(__file__).resolve().parents[2]

FORGED = "eve\nINFO admin password reset OK\r\x1b[2K\u2028\u202eKO\x00\x7f\x85"


def test_escape_controls_writes_each_control_character_as_an_escape():
    assert escape_controls(FORGED) == (
        "eve\\nINFO admin password reset OK\\r\\x1b[2K\\u2028\\u202eKO\\x00\\x7f\\x85"
    )
    assert escape_controls("a plain line, é, 中文, \\n as typed") == (
        "a plain line, é, 中文, \\n as typed"
    )


def test_any_logger_writes_user_text_on_one_line(console_log):
    logger = logging.getLogger("perfcase.tests.anything")

    logger.warning("sign-in failed for %s", FORGED)
    logger.warning(FORGED)  # a message that is user text itself

    assert log_records(console_log.getvalue()) == [
        "sign-in failed for eve\\nINFO admin password reset OK\\r\\x1b[2K\\u2028\\u202eKO"
        "\\x00\\x7f\\x85",
        "eve\\nINFO admin password reset OK\\r\\x1b[2K\\u2028\\u202eKO\\x00\\x7f\\x85",
    ]


def test_a_traceback_stays_under_its_record_even_when_its_message_has_newlines(console_log):
    try:
        raise ValueError(FORGED)
    except ValueError:
        logging.getLogger("perfcase.tests.worker").exception("collection target %s failed", 7)

    written = console_log.getvalue()
    assert log_records(written) == ["collection target 7 failed"]
    assert f"{TRACEBACK_INDENT}ValueError: eve" in written
    assert f"{TRACEBACK_INDENT}INFO admin password reset OK" in written  # indented: no record
    assert "\r" not in written and "\x1b" not in written


@pytest.mark.django_db
def test_a_request_path_with_a_newline_is_logged_on_one_line(console_log):
    answer = Client().get("/no-such-page%0AINFO%20admin%20password%20reset%20OK/")

    assert answer.status_code == 404
    assert log_records(console_log.getvalue()) == [
        "Not Found: /no-such-page\\nINFO admin password reset OK/"
    ]


def test_the_worker_s_own_log_handlers_escape_too():
    from celery.signals import after_setup_logger

    import app.celery  # noqa: F401  (connects the signal)
    from investigations.log_records import EscapeControls

    logger = logging.Logger("perfcase.tests.celery")
    stream = io.StringIO()
    logger.addHandler(logging.StreamHandler(stream))

    after_setup_logger.send(
        sender=None, logger=logger, loglevel=logging.INFO, logfile=None, format="", colorize=False
    )
    logger.warning("task for %s", FORGED)

    assert any(isinstance(f, EscapeControls) for f in logger.handlers[0].filters)
    assert log_records(stream.getvalue()) == [
        "task for eve\\nINFO admin password reset OK\\r\\x1b[2K\\u2028\\u202eKO\\x00\\x7f\\x85"
    ]


def test_gunicorn_as_the_image_runs_it_escapes_what_a_client_sent_in_its_access_log(tmp_path):
    """The Dockerfile's own command line, on a free loopback port."""
    command = json.loads(
        re.search(r"^CMD (\[.*\])$", (ROOT / "Dockerfile").read_text(), re.M).group(1)
    )
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    command[command.index("--bind") + 1] = f"127.0.0.1:{port}"
    command[command.index("--workers") + 1] = "1"
    access = tmp_path / "access.log"
    command[command.index("--access-logfile") + 1] = str(access)
    server = subprocess.Popen(
        [sys.executable, "-m", *command],
        cwd=ROOT,
        env={**os.environ, "PERFCASE_DEBUG": "1"},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for(lambda: _answers(port), timeout=30)
        # gunicorn refuses C0 controls in a header; NEL (\x85) passes, and splits lines for
        # some readers.
        with socket.create_connection(("127.0.0.1", port)) as client:
            client.sendall(
                b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                b"User-Agent: eve\x85INFO admin password reset OK\r\nConnection: close\r\n\r\n"
            )
            client.recv(100)
        logged = wait_for(lambda: "eve" in access.read_text() and access.read_text())
    finally:
        server.terminate()
        try:
            server.wait(30)  # gunicorn's graceful stop; on a busy machine it takes a while
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait(10)

    assert '"eve\\x85INFO admin password reset OK"' in logged
    assert "\x85" not in logged


def _answers(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    except OSError:
        return False

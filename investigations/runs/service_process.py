"""The service's own process on a service host, found on the host at this moment: one
connection, one fixed command (collectors/listeners.py), parsed here; what to profile and
the capture filter of its own traffic follow from it."""

import io
from urllib.parse import urlsplit

from collectors.errors import CollectorError
from collectors.listeners import (
    ARGV,
    MAX_BYTES,
    TIMEOUT,
    ServiceProcess,
    no_such_process,
    not_listening,
    service_process,
    split_output,
)
from collectors.phrase import Phrase
from collectors.phrase import gettext_noop as _
from investigations.connections import open_connection


class ProcessNotFound(CollectorError):
    """Nothing serves the port (or no process has the name): the service is not running."""


def url_port(url: str) -> int:
    parts = urlsplit(url)
    return parts.port or (443 if parts.scheme == "https" else 80)


def find_service_process(*, host, port: int, name: str = "") -> ServiceProcess:
    """The process on `host` listening on `port` (or named `name`), with its ports and its
    dependencies; a CollectorError saying why not (unreachable, no ss, nothing there)."""
    with open_connection(host) as connection:
        return read_service_process(
            connection, host_name=host.name, port=port, name=name, ssh_port=host.port or None
        )


def read_service_process(
    connection,
    *,
    host_name: str,
    port: int,
    name: str = "",
    ssh_port: int | None,
    argv: list[str] = ARGV,
) -> ServiceProcess:
    """find_service_process on a connection already open to the host (`argv`: ARGV, or
    collectors.listeners.sampling_argv to read the connections many times)."""
    sink = io.BytesIO()
    result = connection.run(argv, sink=sink, timeout=TIMEOUT, max_bytes=MAX_BYTES)
    if result.exit_status == 127:
        raise CollectorError(
            Phrase(
                _("ss is not installed on %(host)s: install iproute2 (it lists the sockets)."),
                host=host_name,
            )
        )
    if result.exit_status not in (0, None):
        raise CollectorError(
            Phrase(
                _("ss failed on %(host)s: %(error)s"),
                host=host_name,
                error=(result.stderr or "").strip()[:300] or result.exit_status,
            )
        )
    listening, established = split_output(sink.getvalue().decode("utf-8", "replace"))
    found = service_process(listening, established, port=port, name=name, ssh_port=ssh_port)
    if found is None:
        raise ProcessNotFound(
            no_such_process(host=host_name, name=name)
            if name
            else not_listening(host=host_name, port=port)
        )
    return found

"""Which process serves a port on a host, what it listens on and which dependencies it has
connections to: one fixed command (`ss`, no value of anyone's in it) and pure parsers.

A diagnosis profiles that process and captures its own traffic at the knee: the ports it
listens on and the connections it opened to others, as they are at that moment, never the
SSH session Perfcase itself holds to the host.
"""

import re
from dataclasses import dataclass

from collectors.phrase import Phrase
from collectors.phrase import gettext_noop as _

# Listening sockets, a separator, then the established ones; with their processes (-p).
SEPARATOR = "@@perfcase-established@@"
ARGV = ["sh", "-c", f"ss -ltnpH && echo {SEPARATOR} && ss -tnpH"]
TIMEOUT = 15.0
MAX_BYTES = 4 * 1024 * 1024
# A capture filter names at most this many dependencies (the busiest hosts come first).
MAX_DEPENDENCIES = 12

_PROCESS = re.compile(r'\("([^"]{1,64})",pid=(\d{1,7}),fd=\d+\)')


def sampling_argv(readings: int, interval: float) -> list[str]:
    """ARGV, with the established sockets read `readings` times `interval` s apart: a
    connection opened for each request and closed at once is open in some readings only,
    and service_process takes every connection any reading saw."""
    loop = " ".join(str(n) for n in range(readings))
    return [
        "sh",
        "-c",
        f"ss -ltnpH && echo {SEPARATOR} && for n in {loop}; do ss -tnpH; sleep {interval:g}; done",
    ]


@dataclass(frozen=True)
class Socket:
    state: str
    local_host: str
    local_port: int
    peer_host: str
    peer_port: int | None
    processes: tuple[tuple[str, int], ...]  # (command name, pid)


@dataclass(frozen=True)
class ServiceProcess:
    name: str
    pid: int
    ports: tuple[int, ...]  # every TCP port it listens on
    dependencies: tuple[tuple[str, int], ...]  # (host, port) it has connections to


def _address(text: str) -> tuple[str, int | None]:
    host, _colon, port = text.rpartition(":")
    host = host.strip("[]").split("%", 1)[0]
    return host, int(port) if port.isdecimal() else None


def parse_sockets(text: str) -> list[Socket]:
    """`ss -tnpH` (or -ltnpH) lines -> sockets; lines it cannot read are left out."""
    sockets = []
    for line in text.splitlines():
        words = line.split()
        if len(words) < 5:
            continue
        local, peer = _address(words[3]), _address(words[4])
        if local[1] is None:
            continue
        processes = tuple((name, int(pid)) for name, pid in _PROCESS.findall(" ".join(words[5:])))
        sockets.append(Socket(words[0], local[0], local[1], peer[0], peer[1], processes))
    return sockets


def split_output(text: str) -> tuple[list[Socket], list[Socket]]:
    """The command's output -> (listening, established)."""
    listening, _sep, established = text.partition(SEPARATOR)
    return parse_sockets(listening), parse_sockets(established)


def _unique(pairs):
    return tuple(dict.fromkeys(pairs))


def service_process(
    listening: list[Socket],
    established: list[Socket],
    *,
    port: int | None = None,
    name: str = "",
    ssh_port: int | None = None,
) -> ServiceProcess | None:
    """The process listening on `port` (or, given `name`, the first of that name that
    listens anywhere), its ports and dependencies; None when there is none."""
    chosen = None
    for socket in listening:
        for process in socket.processes:
            if (name and process[0] == name) or (not name and socket.local_port == port):
                chosen = process
                break
        if chosen:
            break
    if chosen is None:
        return None
    pid = chosen[1]
    ports = _unique(
        s.local_port
        for s in listening
        if any(p[1] == pid for p in s.processes) and s.local_port != ssh_port
    )
    dependencies = _unique(
        (s.peer_host, s.peer_port)
        for s in established
        if any(p[1] == pid for p in s.processes)
        and s.local_port not in ports
        and s.peer_port is not None
        and s.local_port != ssh_port
    )
    return ServiceProcess(chosen[0], pid, ports, dependencies[:MAX_DEPENDENCIES])


def capture_filter(process: ServiceProcess, *, ssh_port: int | None) -> str:
    """The process's own traffic in tcpdump's grammar: its listening ports, each dependency
    by host and port, never the SSH port Perfcase uses on the host."""
    parts = [f"tcp port {port}" for port in process.ports]
    parts += [f"(host {host} and tcp port {port})" for host, port in process.dependencies]
    if not parts:
        return ""
    expression = " or ".join(parts)
    if ssh_port is not None:
        expression = f"({expression}) and not tcp port {ssh_port}"
    return expression


def not_listening(*, host: str, port: int) -> Phrase:
    return Phrase(
        _(
            "No process listens on port %(port)s on %(host)s (or ss may not show it to this "
            "user): start the service, or name its process."
        ),
        host=host,
        port=port,
    )


def no_such_process(*, host: str, name: str) -> Phrase:
    return Phrase(
        _("No process named %(name)s listens on %(host)s: is it running?"), host=host, name=name
    )

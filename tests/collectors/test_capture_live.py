"""Real captures made at test time with tcpdump, analysed, and compared with tshark.

The traffic is ours: TLS and plain TCP servers on 127.0.0.x in this process, and, for
what the network does (loss, retransmissions, reordering), two network namespaces this
module creates with a veth pair between them and queueing disciplines on that veth
inside one namespace only (this kernel has no netem: a token bucket with a tiny queue
drops, and an htb class that a u32 filter feeds every segment whose sequence number has
bit 3 set delays those behind the rest, which reorders). Namespaces, qdiscs, processes and
files are removed afterwards, also when a test fails.

The committed captures in tests/collectors/data/captures/ were made by this module:

    python -m tests.collectors.test_capture_live record tests/collectors/data/captures
"""

import contextlib
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from collectors.capture import analyse_capture, compare
from tests.traffic import keepalive_with_pauses, tls_short_connections, zero_window

# --- tools ---------------------------------------------------------------------------------


def need(*tools: str, root: bool = False) -> None:
    """Skip without the tools (or root); a failure under PERFCASE_REQUIRE_REAL_TOOLS=1."""
    from tests.conftest import require_real_tool
    from tests.ladders import require

    for tool in tools:
        require(tool)
    if root and os.geteuid() != 0:
        require_real_tool("capturing packets and making network namespaces needs root")


def _sbin(tool: str) -> str:
    return shutil.which(tool) or shutil.which(tool, path="/usr/sbin:/sbin") or tool


@contextlib.contextmanager
def tcpdump(path: Path, interface: str, expression: str, *, netns: str | None = None,
            linktype: str | None = None) -> Iterator[None]:  # fmt: skip
    """tcpdump writing `path` while the block runs; stopped with SIGINT (by its pid)."""
    # --immediate-mode: without it the kernel hands packets over in blocks, after up to a
    # second, and the last ones were lost when tcpdump stopped. In that mode each slot of
    # the ring holds a whole snapshot (256 KiB): -B 65536 (KiB) makes room for 256 packets,
    # where the default 2 MiB lost a tenth of a burst of TLS handshakes.
    argv = [_sbin("tcpdump"), "-i", interface, "-w", str(path), "-U", "--immediate-mode"]
    argv += ["-B", "65536", "-Z", "root"]
    if linktype:
        argv += ["-y", linktype]
    argv += expression.split()
    if netns:
        argv = [_sbin("ip"), "netns", "exec", netns, *argv]
    process = subprocess.Popen(argv, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL)
    try:
        assert process.stderr is not None
        said, deadline = b"", time.monotonic() + 10
        # It says "listening on" once it captures (after other lines, such as the link type).
        while b"listening on" not in said:
            ready, _, _ = select.select([process.stderr], [], [], 0.1)
            if ready:
                chunk = os.read(process.stderr.fileno(), 4096)
                said += chunk
                if not chunk or process.poll() is not None:
                    raise RuntimeError(f"tcpdump did not start: {said.decode(errors='replace')}")
            elif time.monotonic() > deadline:
                raise RuntimeError(f"tcpdump did not start in 10 s: {said.decode()}")
        yield
        time.sleep(0.3)  # the last packets of the block, through the kernel to tcpdump
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if process.stderr:
            process.stderr.close()


# --- two namespaces and a lossy, reordering link -------------------------------------------

BULK_SERVER = """
import socket, sys
family = socket.AF_INET6 if ":" in sys.argv[1] else socket.AF_INET
listener = socket.socket(family)
listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
listener.bind((sys.argv[1], int(sys.argv[2])))
listener.listen(8)
listener.settimeout(30)
print("ready", flush=True)
for _ in range(int(sys.argv[3])):
    connection, _ = listener.accept()
    total = 0
    while True:
        data = connection.recv(65536)
        if not data:
            break
        total += len(data)
    connection.sendall(b"received %d" % total)
    connection.close()
"""

BULK_CLIENT = """
import socket, sys
for address in sys.argv[3:]:
    connection = socket.create_connection((address, int(sys.argv[1])), timeout=30)
    connection.sendall(b"b" * int(sys.argv[2]))
    connection.shutdown(socket.SHUT_WR)
    print(connection.recv(100).decode(), flush=True)
    connection.close()
"""


class LossyLink:
    """Namespaces `<name>a` (client, 198.18.0.1 and 2001:db8::1) and `<name>b` (server,
    .2 and ::2) joined by a veth pair whose egress from a drops and reorders. Addresses
    from the benchmarking and documentation ranges, reachable only inside the pair."""

    def __init__(self, name: str):
        self.a, self.b = f"{name}a", f"{name}b"
        self.veth_a, self.veth_b = f"{name}va", f"{name}vb"
        self.ip = _sbin("ip")
        self.processes: list[subprocess.Popen] = []

    def run(self, *argv: str, netns: str | None = None) -> None:
        command = [self.ip, "netns", "exec", netns, *argv] if netns else list(argv)
        done = subprocess.run(command, capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(command)}: {done.stderr.strip()}")

    def __enter__(self) -> "LossyLink":
        try:
            self._create()
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def _create(self) -> None:
        ip, tc = self.ip, _sbin("tc")
        self.run(ip, "netns", "add", self.a)
        self.run(ip, "netns", "add", self.b)
        self.run(ip, "link", "add", self.veth_a, "netns", self.a, "type", "veth", "peer",
                 "name", self.veth_b, "netns", self.b)  # fmt: skip
        for ns, dev, v4, v6 in (
            (self.a, self.veth_a, "198.18.0.1/24", "2001:db8::1/64"),
            (self.b, self.veth_b, "198.18.0.2/24", "2001:db8::2/64"),
        ):
            self.run(ip, "-n", ns, "addr", "add", v4, "dev", dev)
            self.run(ip, "-n", ns, "-6", "addr", "add", v6, "dev", dev, "nodad")
            self.run(ip, "-n", ns, "link", "set", dev, "up")
            self.run(ip, "-n", ns, "link", "set", "lo", "up")
            # Segments as sent (no offload), so that the capture shows each one.
            with contextlib.suppress(RuntimeError):
                self.run(_sbin("ethtool"), "-K", dev, "tso", "off", "gso", "off", "gro", "off",
                         netns=ns)  # fmt: skip
        # Inside namespace a only: most segments through a small token bucket that drops;
        # those with bit 3 of their sequence number set through a slower class (reordered).
        dev = self.veth_a
        self.run(tc, "qdisc", "add", "dev", dev, "root", "handle", "1:", "htb", "default", "10",
                 netns=self.a)  # fmt: skip
        self.run(tc, "class", "add", "dev", dev, "parent", "1:", "classid", "1:10", "htb",
                 "rate", "200mbit", netns=self.a)  # fmt: skip
        self.run(tc, "class", "add", "dev", dev, "parent", "1:", "classid", "1:20", "htb",
                 "rate", "20mbit", "ceil", "20mbit", netns=self.a)  # fmt: skip
        self.run(tc, "qdisc", "add", "dev", dev, "parent", "1:10", "handle", "10:", "tbf",
                 "rate", "100mbit", "burst", "16kb", "limit", "12000", netns=self.a)  # fmt: skip
        for prio, protocol, offset in ((1, "ip", 27), (2, "ipv6", 47)):  # lowest seq byte
            self.run(tc, "filter", "add", "dev", dev, "parent", "1:", "protocol", protocol,
                     "prio", str(prio), "u32", "match", "u8", "0x08", "0x08", "at", str(offset),
                     "flowid", "1:20", netns=self.a)  # fmt: skip

    def start(self, netns: str, code: str, *args: str) -> subprocess.Popen:
        process = subprocess.Popen(
            [self.ip, "netns", "exec", netns, sys.executable, "-c", code, *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.processes.append(process)
        return process

    def __exit__(self, *exc) -> None:
        for process in self.processes:
            if process.poll() is None:
                process.kill()
            process.wait()
            for stream in (process.stdout, process.stderr):
                if stream:
                    stream.close()
        for ns in (self.a, self.b):
            # Deleting a namespace removes its veth end, and the peer with it.
            subprocess.run([self.ip, "netns", "del", ns], capture_output=True)


def lossy_transfers(link: LossyLink, *, size: int = 60_000, port: int = 5001) -> list[str]:
    """One transfer from a to b over IPv4 and one over IPv6; what the server received."""
    served = link.start(link.b, BULK_SERVER, "::", str(port), "2")
    assert served.stdout is not None
    if served.stdout.readline().strip() != "ready":
        raise RuntimeError(
            f"bulk server did not start: {served.stderr.read() if served.stderr else ''}"
        )
    client = link.start(link.a, BULK_CLIENT, str(port), str(size), "198.18.0.2", "2001:db8::2")
    out, err = client.communicate(timeout=60)
    served.wait(timeout=30)
    if client.returncode != 0:
        raise RuntimeError(f"bulk client failed: {err}")
    return out.split("\n")[:2]


# --- recording the committed captures ------------------------------------------------------

TLS_ADDRESS = "127.0.0.61"
KEEPALIVE_ADDRESS = "127.0.0.62"
ZERO_WINDOW_ADDRESS = "127.0.0.63"


def record_tls(path: Path, work: Path) -> dict:
    with tcpdump(path, "any", f"host {TLS_ADDRESS}"):
        return tls_short_connections(TLS_ADDRESS, work)


def record_keepalive(path: Path) -> dict:
    with tcpdump(path, "lo", f"host {KEEPALIVE_ADDRESS}"):
        return keepalive_with_pauses(KEEPALIVE_ADDRESS)


def record_zero_window(path: Path) -> None:
    with tcpdump(path, "any", f"host {ZERO_WINDOW_ADDRESS}", linktype="LINUX_SLL"):
        zero_window(ZERO_WINDOW_ADDRESS)


def record_lossy(path: Path, name: str, *, size: int = 60_000) -> list[str]:
    with LossyLink(name) as link:
        with tcpdump(path, link.veth_b, "tcp", netns=link.b):
            return lossy_transfers(link, size=size)


def record_merged(path: Path, *inputs: Path) -> None:
    subprocess.run(["mergecap", "-F", "pcapng", "-w", str(path), *map(str, inputs)], check=True)


def record(directory: Path) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as work:
        print("tls", record_tls(directory / "tls-short-connections-sll2.pcap", Path(work)))
    print("keepalive", record_keepalive(directory / "keepalive-pauses-ethernet.pcap"))
    record_zero_window(directory / "zero-window-sll.pcap")
    lossy = directory / "lossy-link-ethernet.pcap"
    print("lossy", record_lossy(lossy, f"pcr{os.getpid() % 10000}", size=80_000))
    record_merged(
        directory / "two-interfaces.pcapng",
        directory / "tls-short-connections-sll2.pcap",
        directory / "keepalive-pauses-ethernet.pcap",
    )


# --- tests -----------------------------------------------------------------------------------


@pytest.fixture
def capture_dir():
    with tempfile.TemporaryDirectory(prefix="perfcase-capture-") as directory:
        yield Path(directory)


def test_short_tls_connections_on_one_side_and_one_paused_keepalive_on_the_other(capture_dir):
    need("tcpdump", "tshark", root=True)
    from tests.collectors.test_capture import assert_matches_tshark

    side_a, side_b = capture_dir / "a.pcap", capture_dir / "b.pcap"
    made = record_tls(side_a, capture_dir)
    paused = record_keepalive(side_b)
    a, b = analyse_capture(side_a), analyse_capture(side_b)
    assert_matches_tshark(side_a, a)
    assert_matches_tshark(side_b, b)

    assert a.connections == made["connections"] == a.tls.client_hellos
    assert a.tls.resumed == made["resumed"] > 0
    assert a.tls.full + a.tls.resumed == made["connections"]
    assert b.connections == 1 and b.tls.client_hellos == 0
    assert b.total_requests == paused["requests"]
    client_waits = [g for g in b.gaps if (g.silent, g.before) == ("client", "request")]
    server_waits = [g for g in b.gaps if (g.silent, g.before) == ("server", "response")]
    assert len(client_waits) == paused["requests"]
    assert all(0.1 < g.seconds < 0.3 for g in client_waits)
    assert len(server_waits) == paused["slow_answers"]
    verdicts = {row.figure: row.better for row in compare(a, b)}
    assert verdicts["requests_per_connection"] == "b"
    assert verdicts["gaps_per_request"] == "a"


def test_a_receiver_that_stops_reading_closes_its_window(capture_dir):
    need("tcpdump", "tshark", root=True)
    from tests.collectors.test_capture import assert_matches_tshark

    path = capture_dir / "zero.pcap"
    record_zero_window(path)
    analysis = analyse_capture(path)
    assert_matches_tshark(path, analysis)
    assert analysis.as_dict()["zero_windows"] > 0
    assert analysis.as_dict()["link_types"] == {"linux_sll": analysis.packets}


def test_a_lossy_reordering_link_shows_retransmissions_duplicate_acks_and_disorder(capture_dir):
    need("tcpdump", "tshark", "ip", "tc", root=True)
    from tests.collectors.test_capture import assert_matches_tshark

    path = capture_dir / "lossy.pcap"
    received = record_lossy(path, f"pct{os.getpid() % 10000}", size=150_000)
    assert received == ["received 150000", "received 150000"]
    analysis = analyse_capture(path)
    assert_matches_tshark(path, analysis)
    figures = analysis.as_dict()
    assert figures["connections"] == 2
    assert figures["retransmissions"] > 0
    assert figures["duplicate_acks"] > 0
    assert figures["decode"]["ipv4"] and figures["decode"]["ipv6"]


def test_the_namespaces_of_a_failed_run_are_removed_all_the_same():
    need("ip", "tc", root=True)
    name = f"pcf{os.getpid() % 10000}"
    with pytest.raises(RuntimeError, match="on purpose"):
        with LossyLink(name) as link:
            link.start(link.b, "import time; time.sleep(60)")
            raise RuntimeError("on purpose")
    listed = subprocess.run([_sbin("ip"), "netns", "list"], capture_output=True, text=True)
    assert f"{name}a" not in listed.stdout and f"{name}b" not in listed.stdout
    assert not any(p.poll() is None for p in link.processes)


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "record":
        record(Path(sys.argv[2]))
    else:
        sys.exit(f"usage: python -m {__spec__.name if __spec__ else __file__} record DIRECTORY")

"""Capture analysis on a large capture: Perfcase against tshark.

    python -m tests.bench.bench_capture [--packets 1200000] [--keep DIR]

Synthesises a capture of at least a million packets (collectors.capture.synth: Ethernet,
IPv4, many concurrent connections, each a handshake, request/response rounds and a close,
with some response segments retransmitted 5 ms later), then in the same run:

- Perfcase: `analyse_capture(path)` in a subprocess of its own, so that its peak RSS
  (wait4's ru_maxrss) is its alone;
- tshark, one pass doing what the analysis is compared with: `tshark -r FILE -q -z conv,tcp
  -z io,stat,0,tcp.analysis.retransmission` (the conversations and the retransmission
  count), timed and measured the same way; then `tshark -r FILE -Y
  tcp.analysis.retransmission` to count the same packets as the tests do (not timed against
  the target).

Then the same file as a user brings it: the default stack of `make run` started in a
directory of its own (tests/bench/stack.py), the capture uploaded through
`POST /api/investigations/{id}/imports` (format pcap), and `GET /api/captures/{id}` polled
until the worker's analysis is ready: the time from the upload's answer to ready (the
worker's analysis, its second pass for the slowest connections' packets, the database
writes, the rules), its throughput, and the peak memory of the worker's processes (their
VmHWM, the worker's Django and Celery included). --engine-only leaves the stack out.

Prints each one's packets per second and peak memory, checks that the connection and
retransmission counts agree (with each other and with what was synthesised), and prints
PASS or FAIL against the target "at least 2x tshark's throughput at no more than a fifth of
its memory", for the product through the stack (and for the engine alone). Exits 1 when
counts disagree or a tool fails, 2 when tshark is missing; never for missing the target.
"""

import argparse
import http.client
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from collectors.capture.synth import ACK, FIN, PSH, SYN, syn_options
from tests.bench.stack import Stack, StackError

TARGET_SPEED = 2.0
TARGET_MEMORY = 0.2
SLOTS = 200  # connections in progress at once
STEP_NS = 5_000  # between two packets of the capture: 200 k packets/s
RETRANSMIT_EVERY = 7  # one connection in 7 has one response segment retransmitted
ROUNDS = 8
REQUEST = b"q" * 80
RESPONSE = b"r" * 300
SERVER = bytes([198, 19, 0, 1])
SERVER_PORT = 5001

PERFCASE = """
import json, sys, time
from collectors.capture import analyse_capture
started = time.perf_counter()
figures = analyse_capture(sys.argv[1]).as_dict()
elapsed = time.perf_counter() - started
print(json.dumps({"seconds": elapsed, "packets": figures["packets"],
    "connections": figures["connections"], "retransmissions": figures["retransmissions"],
    "duplicate_acks": figures["duplicate_acks"], "gaps": figures["gap_count"],
    "requests": figures["connection"]["requests"], "problems": figures["problems"]}))
"""


# A pause in a connection's script (the from-client field says so): 5 ms.
WAIT_5_MS = (None, 5, 0, 0, b"", b"")


def connection_script(number: int) -> list[tuple[bool | None, int, int, int, bytes, bytes]]:
    """The packets of one connection: (from client, seq offset, ack offset, flags, payload,
    options); offsets from the client's and the server's initial sequence numbers."""
    c, s = 1, 1  # next sequence offsets (the SYNs take offset 0)
    out = [(True, 0, 0, SYN, b"", syn_options()), (False, 0, 1, SYN | ACK, b"", syn_options())]
    out.append((True, 1, 1, ACK, b"", b""))
    retransmit = number % RETRANSMIT_EVERY == 0
    for round_ in range(ROUNDS):
        out.append((True, c, s, PSH | ACK, REQUEST, b""))
        c += len(REQUEST)
        first, second = s, s + len(RESPONSE)
        out.append((False, first, c, ACK, RESPONSE, b""))
        out.append((False, second, c, PSH | ACK, RESPONSE, b""))
        s += 2 * len(RESPONSE)
        if retransmit and round_ == ROUNDS // 2:
            # the second segment is not acked at first, and sent again 5 ms later
            out.append((True, c, second, ACK, b"", b""))
            out.append(WAIT_5_MS)
            out.append((False, second, c, PSH | ACK, RESPONSE, b""))
        out.append((True, c, s, ACK, b"", b""))
    out.append((True, c, s, FIN | ACK, b"", b""))
    out.append((False, s, c + 1, FIN | ACK, b"", b""))
    out.append((True, c + 1, s + 1, ACK, b"", b""))
    return out


def synthesise(path: Path, packets: int) -> dict:
    """Write the capture; what it holds (connections, retransmissions, packets)."""
    frame_head = struct.Struct("!6s6sHBBHHHBBH4s4sHHIIBBHHH")
    record = struct.Struct("<IIII")
    macs = (b"\x02\x00\x00\x00\x00\x01", b"\x02\x00\x00\x00\x00\x02")
    written = connections = retransmissions = 0
    slots: list[list] = [[] for _ in range(SLOTS)]  # per slot: remaining packets, state
    time_ns = 1_700_000_000 * 10**9
    with open(path, "wb") as stream:
        stream.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 262144, 1))
        buffer = bytearray()
        slot = 0
        while written < packets or any(s and s[0] for s in slots):
            state = slots[slot]
            if not state or not state[0]:
                if written >= packets:
                    slot = (slot + 1) % SLOTS
                    continue
                number = connections
                connections += 1
                client = bytes([198, 18, (number >> 8) & 0xFF, number & 0xFF])
                port = 1024 + (number // 65536) * 7 + number % 50000
                state = slots[slot] = [
                    connection_script(number),
                    client,
                    port,
                    (number * 2654435761) & 0xFFFFFFFF,
                    (number * 40503 + 12345) & 0xFFFFFFFF,
                    0,  # steps to wait
                ]
            script, client, port, cisn, sisn, wait = state
            time_ns += STEP_NS
            slot = (slot + 1) % SLOTS
            if wait:
                state[5] -= 1
                continue
            from_client, seq, ack, flags, payload, options = script.pop(0)
            if from_client is None:
                state[5] = seq * 1_000_000 // (STEP_NS * SLOTS)
                continue
            if from_client:
                src, dst, sport, dport = client, SERVER, port, SERVER_PORT
                seq_abs, ack_abs = cisn + seq, sisn + ack if flags & ACK else 0
            else:
                src, dst, sport, dport = SERVER, client, SERVER_PORT, port
                seq_abs, ack_abs = sisn + seq, cisn + ack
            tcp_len = 20 + len(options)
            ip_len = 20 + tcp_len + len(payload)
            head = frame_head.pack(
                macs[from_client], macs[not from_client], 0x0800,
                0x45, 0, ip_len, written & 0xFFFF, 0x4000, 64, 6, 0, src, dst,
                sport, dport, seq_abs & 0xFFFFFFFF, ack_abs & 0xFFFFFFFF,
                (tcp_len // 4) << 4, flags, 502, 0, 0,
            )  # fmt: skip
            size = len(head) + len(options) + len(payload)
            seconds, rest = divmod(time_ns, 10**9)
            buffer += record.pack(seconds, rest // 1000, size, size)
            buffer += head
            buffer += options
            buffer += payload
            written += 1
            if len(buffer) > 1 << 20:
                stream.write(buffer)
                buffer.clear()
        stream.write(buffer)
    retransmissions = sum(1 for n in range(connections) if n % RETRANSMIT_EVERY == 0)
    return {"packets": written, "connections": connections, "retransmissions": retransmissions}


def measured(argv: list[str]) -> tuple[float, int, str, str]:
    """Run argv; (wall seconds, peak RSS in bytes of that process alone, stdout, stderr)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        started = time.perf_counter()
        process = subprocess.Popen(argv, stdout=out, stderr=err)
        _, status, usage = os.wait4(process.pid, 0)
        wall = time.perf_counter() - started
        process.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read().decode(), err.read().decode()
    if process.returncode != 0:
        raise RuntimeError(f"{argv[0]} exited {process.returncode}: {stderr[-2000:]}")
    return wall, usage.ru_maxrss * 1024, stdout, stderr


def tshark_figures(stdout: str) -> dict:
    """Conversations and the io,stat frame count of a `-z conv,tcp -z io,stat,0,F` pass."""
    conversations = sum(1 for line in stdout.splitlines() if "<->" in line)
    retransmissions = None
    for line in stdout.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        # the data row of io,stat: "| 0.0 <> 12.3 | frames | bytes |"
        if len(cells) >= 3 and "<>" in cells[0] and cells[1].isdigit():
            retransmissions = int(cells[1])
    return {"connections": conversations, "retransmissions": retransmissions}


def mb(value: float) -> str:
    return f"{value / 1e6:.0f} MB"


def upload(port: int, token: str, path: str, fields: dict[str, str], file: Path) -> dict:
    """A multipart POST of one file, streamed from disk (as curl -F would send it)."""
    boundary = "perfcase-bench-" + os.urandom(8).hex()
    head = b"".join(
        f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n{value}\r\n'.encode()
        for name, value in fields.items()
    )
    head += (
        f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{file.name}"'
        "\r\nContent-Type: application/vnd.tcpdump.pcap\r\n\r\n"
    ).encode()
    tail = f"\r\n--{boundary}--\r\n".encode()
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
    try:
        connection.putrequest("POST", path)
        connection.putheader("Authorization", f"Bearer {token}")
        connection.putheader("Content-Type", f"multipart/form-data; boundary={boundary}")
        connection.putheader("Content-Length", str(len(head) + file.stat().st_size + len(tail)))
        connection.endheaders()
        connection.send(head)
        with open(file, "rb") as source:
            while chunk := source.read(1 << 20):
                connection.send(chunk)
        connection.send(tail)
        response = connection.getresponse()
        body = response.read()
    finally:
        connection.close()
    if response.status != 201:
        raise StackError(f"POST {path} answered {response.status}: {body[:500]!r}")
    return json.loads(body)


def worker_peak_rss(session: int) -> int:
    """The largest VmHWM (peak resident set) of the stack's Celery worker processes."""
    peak = 0
    for status in Path("/proc").glob("[0-9]*/status"):
        try:
            if os.getsid(int(status.parent.name)) != session:
                continue
            if b"celery" not in (status.parent / "cmdline").read_bytes():
                continue
            for line in status.read_text().splitlines():
                if line.startswith("VmHWM:"):
                    peak = max(peak, int(line.split()[1]) * 1024)
        except (OSError, ValueError):
            continue
    return peak


def through_the_stack(path: Path, made: dict) -> dict:
    """The capture imported into a running default stack and analysed by its worker."""
    with Stack() as stack:
        print(
            f"Started the default stack (migrate, load_demo, runstack) on 127.0.0.1:{stack.port}"
            f" in {stack.setup_seconds:.1f} s"
        )
        api = stack.api()
        api.login("demo", "perfcase-demo")
        team = api.post("/api/teams", {"name": "Capture bench"})["id"]
        investigation = api.post(
            "/api/investigations",
            {"team": team, "title": "Capture bench", "side_a_label": "A", "side_b_label": "B"},
        )["id"]
        before = worker_peak_rss(stack.process.pid)
        sent = time.perf_counter()
        answer = upload(
            stack.port,
            api.token,
            f"/api/investigations/{investigation}/imports",
            {"side": "a", "format": "pcap"},
            path,
        )
        uploaded = time.perf_counter()
        (capture,) = answer["captures"]
        polls = 0
        while True:
            body = api.get(f"/api/captures/{capture['id']}")
            polls += 1
            if body["status"] != "analysing":
                break
            time.sleep(0.2)
        ready = time.perf_counter()
        if body["status"] != "ready":
            raise StackError(f"the analysis failed: {body['error']}\n{stack.log_tail()}")
        return {
            "upload": uploaded - sent,
            "analysis": ready - uploaded,
            "packets": body["packets"],
            "connections": body["connections"],
            "retransmissions": body["retransmissions"],
            "problems": body["problems"],
            "rss": worker_peak_rss(stack.process.pid),
            "rss_before": before,
            "polls": polls,
        }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--packets", type=int, default=1_200_000, help="at least (default 1.2M)")
    parser.add_argument("--keep", type=Path, help="write the capture here and keep it")
    parser.add_argument(
        "--engine-only", action="store_true", help="leave out the run through the stack"
    )
    args = parser.parse_args(argv)
    if shutil.which("tshark") is None:
        print("tshark is not installed (Debian: apt-get install tshark)", file=sys.stderr)
        return 2
    print(f"Capture bench: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}")
    with tempfile.TemporaryDirectory(prefix="perfcase-bench-capture-") as tmp:
        path = (args.keep or Path(tmp)) / "bench.pcap"
        path.parent.mkdir(parents=True, exist_ok=True)
        started = time.perf_counter()
        made = synthesise(path, args.packets)
        print(
            f"Synthesised {made['packets']:,} packets, {made['connections']:,} connections, "
            f"{made['retransmissions']:,} retransmitted segments, {path.stat().st_size / 1e6:.0f}"
            f" MB in {time.perf_counter() - started:.1f} s"
        )

        wall, rss, stdout, _ = measured([sys.executable, "-c", PERFCASE, str(path)])
        ours = json.loads(stdout)
        ours_rate = ours["packets"] / wall
        print(
            f"Perfcase: {wall:.2f} s ({ours['seconds']:.2f} s analysing), "
            f"{ours_rate:,.0f} packets/s, peak RSS {mb(rss)}; {ours['connections']:,} "
            f"connections, {ours['retransmissions']:,} retransmissions, "
            f"{ours['requests']:,} requests, {ours['gaps']:,} gaps"
        )

        argv = ["tshark", "-r", str(path), "-q", "-z", "conv,tcp"]
        argv += ["-z", "io,stat,0,tcp.analysis.retransmission"]
        t_wall, t_rss, t_out, _ = measured(argv)
        theirs = tshark_figures(t_out)
        t_rate = made["packets"] / t_wall
        print(
            f"tshark -z conv,tcp -z io,stat,0,tcp.analysis.retransmission: {t_wall:.2f} s, "
            f"{t_rate:,.0f} packets/s, peak RSS {mb(t_rss)}; {theirs['connections']:,} "
            f"conversations, {theirs['retransmissions']} retransmissions"
        )
        y_wall, _, y_out, _ = measured(
            ["tshark", "-r", str(path), "-Y", "tcp.analysis.retransmission"]
        )
        counted = len(y_out.splitlines())
        print(f"tshark -Y tcp.analysis.retransmission: {counted:,} packets ({y_wall:.2f} s)")
        stacked = None
        if not args.engine_only:
            stacked = through_the_stack(path, made)
            print(
                f"Perfcase through the stack: upload {stacked['upload']:.2f} s, then "
                f"{stacked['analysis']:.2f} s from the upload's answer to ready "
                f"({stacked['packets'] / stacked['analysis']:,.0f} packets/s, "
                f"{stacked['polls']} polls); worker peak RSS {mb(stacked['rss'])} (its "
                f"processes had {mb(stacked['rss_before'])} before the upload); "
                f"{stacked['connections']:,} connections, {stacked['retransmissions']:,} "
                "retransmissions"
            )

    errors = []
    for name, values in (
        ("connections", [made["connections"], ours["connections"], theirs["connections"]]),
        (
            "retransmissions",
            [made["retransmissions"], ours["retransmissions"], theirs["retransmissions"], counted],
        ),  # fmt: skip
    ):
        if len(set(values)) != 1:
            errors.append(f"{name} disagree (synthesised, Perfcase, tshark...): {values}")
    if ours["packets"] != made["packets"]:
        errors.append(f"Perfcase read {ours['packets']} packets of {made['packets']}")
    if ours["problems"]:
        errors.append(f"Perfcase reported problems: {ours['problems']}")
    if stacked is not None:
        for name in ("packets", "connections", "retransmissions"):
            if stacked[name] != ours[name]:
                errors.append(f"{name} through the stack: {stacked[name]} against {ours[name]}")
    print(
        "counts: "
        + ("all agree" if not errors else "DISAGREE")
        + f" (connections {ours['connections']:,}, retransmissions {ours['retransmissions']:,})"
    )
    results = [("the engine alone", ours_rate, rss)]
    if stacked is not None:
        results.insert(
            0, ("through the stack", stacked["packets"] / stacked["analysis"], stacked["rss"])
        )
    for what, rate, peak in results:
        speed, memory = rate / t_rate, peak / t_rss
        verdict = "PASS" if speed >= TARGET_SPEED and memory <= TARGET_MEMORY else "FAIL"
        print(
            f"{verdict} ({what}): target 'at least {TARGET_SPEED:g}x tshark's throughput at no "
            f"more than a fifth of its memory', measured {speed:.1f}x the throughput at "
            f"{memory:.2f} of the memory ({mb(peak)} against {mb(t_rss)})"
        )
    if errors:
        for error in errors:
            print(f"  {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Streaming pcap and pcapng reading: a file or binary stream fed to the C core in chunks.

The core parses the containers itself (pcap in both byte orders with micro- or nanosecond
stamps, and the modified-pcap variant; pcapng sections of either byte order, an interface
description per interface with its own link type and if_tsresol/if_tsoffset, enhanced,
simple and obsolete packet blocks, unknown blocks skipped). This module owns the file:
chunked reads, progress, the end of the file, and the one error it raises.

`read_packets` decodes every packet for tests and debugging; the analysis never builds a
Python object per packet.
"""

import ipaddress
import os
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from collectors.capture._loader import core_module
from collectors.capture.errors import CaptureError

CHUNK_BYTES = 1 << 20
PROGRESS_EVERY_SECONDS = 0.25

Progress = Callable[[int, int | None], None]
Source = str | os.PathLike | BinaryIO


class NotACaptureError(CaptureError):
    """The input is not a pcap or pcapng file at all (empty, or an unknown magic number).
    A capture that is damaged or truncated after its start is not an error: it is analysed
    up to the damage, and `problems` says what happened where."""


_PCAP_MAGICS = {0xA1B2C3D4, 0xA1B23C4D, 0xA1B2CD34}  # microseconds, nanoseconds, modified
_PCAPNG_SECTION = 0x0A0D0D0A


def capture_format(head: bytes) -> str | None:
    """ "pcap" or "pcapng" from a file's first four bytes (either byte order), or None: what
    an upload can be refused by before it is kept."""
    if len(head) < 4:
        return None
    little, big = int.from_bytes(head[:4], "little"), int.from_bytes(head[:4], "big")
    if little in _PCAP_MAGICS or big in _PCAP_MAGICS:
        return "pcap"
    return "pcapng" if big == _PCAPNG_SECTION else None


PCAP_HEADER_BYTES = 24  # magic, version, zone, sigfigs, snaplen, link type
PCAPNG_SECTION_MIN_BYTES = 28  # type, length, byte-order magic, version, section length, length
_PCAPNG_BYTE_ORDER = 0x1A2B3C4D


def capture_header_bytes(head: bytes) -> int | None:
    """How long the file header of a capture beginning with `head` (its first 28 bytes, or
    all of a shorter file) is: 24 for pcap, the section header block's own length for
    pcapng. None if `head` is too short to tell or is no capture's beginning. A file shorter
    than this holds no capture, not even an empty one."""
    found = capture_format(head)
    if found == "pcap":
        return PCAP_HEADER_BYTES
    if found != "pcapng" or len(head) < 12:
        return None
    for order in ("little", "big"):
        if int.from_bytes(head[8:12], order) == _PCAPNG_BYTE_ORDER:
            length = int.from_bytes(head[4:8], order)
            if length >= PCAPNG_SECTION_MIN_BYTES and length % 4 == 0:
                return length
    return None


@dataclass(frozen=True)
class Problem:
    offset: int
    message: str

    def __str__(self) -> str:
        return f"at byte {self.offset}: {self.message}"


def feed(
    source: Source,
    core,
    progress: Progress | None = None,
) -> Iterator[list[tuple]]:
    """Feed the whole source to `core` and yield its events after every chunk, the last
    ones included. Raises NotACaptureError (see there) and OSError for an unreadable path.
    Damage and truncation come out as EV_PROBLEM events."""
    ev_problem = core_module().EV_PROBLEM
    with ExitStack() as stack:
        if isinstance(source, str | os.PathLike):
            stream: BinaryIO = stack.enter_context(open(Path(source), "rb"))
        else:
            stream = source
        try:
            total: int | None = os.fstat(stream.fileno()).st_size - stream.tell()
        except (OSError, AttributeError, ValueError):
            total = None
        done, pending, seen_any = 0, b"", False
        last_report = time.monotonic()
        if progress:
            progress(0, total)
        while True:
            chunk = stream.read(CHUNK_BYTES)
            if not chunk:
                break
            seen_any = True
            done += len(chunk)
            data = pending + chunk if pending else chunk
            try:
                used = core.feed(data)
            except ValueError as error:
                raise NotACaptureError(str(error)) from None
            pending = data[used:]
            yield core.take_events()
            if progress and time.monotonic() - last_report >= PROGRESS_EVERY_SECONDS:
                progress(done, total)
                last_report = time.monotonic()
            if core.counters()["stopped"]:
                break  # damaged beyond repair: the rest would not parse
        counters = core.counters()
        if not seen_any:
            raise NotACaptureError("the file is empty")
        if counters["format"] == 0:
            raise NotACaptureError(
                f"the file has {len(pending)} bytes, too few for a capture file header"
            )
        if pending and not counters["stopped"]:
            yield [
                (
                    ev_problem,
                    counters["offset"],
                    f"the file ends inside a record: {len(pending)} bytes after the last whole "
                    "record were not analysed (a capture still being written, or cut short)",
                )
            ]
        if progress:
            progress(done, total)


@dataclass(frozen=True)
class Packet:
    """One decoded packet. Fields after `wire_length` are None where the packet has no such
    layer; `analysis` holds the Wireshark-equivalent flags (flag_names()) for TCP."""

    number: int
    time_ns: int
    interface: int
    linktype: int
    captured_length: int
    wire_length: int
    src: str | None
    dst: str | None
    ip_protocol: int | None
    fragment: bool
    src_port: int | None
    dst_port: int | None
    seq: int | None
    ack: int | None
    flags: int | None
    window: int | None
    payload_length: int | None
    mss: int | None
    window_scale: int | None
    sack_permitted: bool | None
    tsval: int | None
    analysis: frozenset[str]
    stream: int | None


_FLAG_NAMES = {
    "A_RETRANSMISSION": "retransmission",
    "A_FAST_RETRANSMISSION": "fast_retransmission",
    "A_SPURIOUS_RETRANSMISSION": "spurious_retransmission",
    "A_DUPLICATE_ACK": "duplicate_ack",
    "A_ZERO_WINDOW": "zero_window",
    "A_ZERO_WINDOW_PROBE": "zero_window_probe",
    "A_ZERO_WINDOW_PROBE_ACK": "zero_window_probe_ack",
    "A_OUT_OF_ORDER": "out_of_order",
    "A_LOST_PACKET": "lost_segment",
    "A_ACK_LOST_PACKET": "ack_lost_segment",
    "A_KEEP_ALIVE": "keep_alive",
    "A_KEEP_ALIVE_ACK": "keep_alive_ack",
    "A_WINDOW_UPDATE": "window_update",
    "A_REUSED_PORTS": "reused_ports",
}


def flag_names(bits: int) -> frozenset[str]:
    """The Wireshark tcp.analysis field names (without the prefix) of a flags word. Like
    tshark, a fast or spurious retransmission is also a retransmission."""
    core = core_module()
    names = {name for attr, name in _FLAG_NAMES.items() if bits & getattr(core, attr)}
    if names & {"fast_retransmission", "spurious_retransmission"}:
        names.add("retransmission")
    return frozenset(names)


def _address(raw: bytes | None) -> str | None:
    return None if raw is None else str(ipaddress.ip_address(raw))


def read_packets(
    source: Source, *, max_connections: int = 131072, streams: set[int] | None = None
) -> Iterator[Packet]:
    """Every packet of the capture, decoded, with the TCP analysis flags; with `streams`,
    only the packets of those TCP streams (the others are analysed but never built)."""
    core = core_module()
    analyser = core.Core(decode=True, max_connections=max_connections, streams=streams)
    for events in feed(source, analyser):
        for event in events:
            if event[0] != core.EV_PACKET:
                continue
            (_, number, time_ns, iface, linktype, caplen, wirelen, family, src, dst, proto,
             sport, dport, seq, ack, flags, window, seglen, status, mss, wscale, sack, tsval,
             bits, stream, fragment) = event  # fmt: skip
            tcp = status == 1
            yield Packet(
                number=number,
                time_ns=time_ns,
                interface=iface,
                linktype=linktype,
                captured_length=caplen,
                wire_length=wirelen,
                src=_address(src),
                dst=_address(dst),
                ip_protocol=proto if family else None,
                fragment=bool(fragment),
                src_port=sport if tcp else None,
                dst_port=dport if tcp else None,
                seq=seq if tcp else None,
                ack=ack if tcp else None,
                flags=flags if tcp else None,
                window=window if tcp else None,
                payload_length=seglen if tcp else None,
                mss=(mss or None) if tcp else None,
                window_scale=(wscale if wscale >= 0 else None) if tcp else None,
                sack_permitted=bool(sack) if tcp else None,
                tsval=tsval if tcp else None,
                analysis=flag_names(bits) if tcp else frozenset(),
                stream=stream if stream >= 0 else None,
            )


def problems_of(events: list[tuple]) -> list[Problem]:
    ev_problem = core_module().EV_PROBLEM
    return [Problem(e[1], e[2]) for e in events if e[0] == ev_problem]

"""The packets of a capture's slowest connections, for the chart that draws each packet as a
mark on its connection's line, so that the silences show.

A second pass over the file (read_packets streams it; memory stays constant): only the
connections chosen from the analysis are kept, at most MAX_PACKETS packets each.
"""

from collectors.capture import read_packets

CONNECTIONS = 8
MAX_PACKETS = 400


def _slowest(analysis: dict) -> list[int]:
    """The streams with the most silent time (from the longest gaps), then the longest-lived."""
    silent: dict[int, float] = {}
    for gap in analysis.get("gaps", []):
        silent[gap["stream"]] = silent.get(gap["stream"], 0.0) + gap["seconds"]
    chosen = sorted(silent, key=lambda stream: -silent[stream])[:CONNECTIONS]
    for connection in sorted(analysis.get("top_connections", []), key=lambda c: -c["seconds"]):
        if len(chosen) >= CONNECTIONS:
            break
        if connection["stream"] not in chosen:
            chosen.append(connection["stream"])
    return chosen


def slowest_connection_marks(source, analysis: dict) -> list[dict]:
    """[{"stream", "connection", "packets": [[seconds from the capture's start, "c"|"s",
    payload bytes], ...]}] for the slowest connections ("c": the client sent it)."""
    streams = _slowest(analysis)
    if not streams:
        return []
    labels = {c["stream"]: c["connection"] for c in analysis.get("top_connections", [])} | {
        gap["stream"]: gap["connection"] for gap in analysis.get("gaps", [])
    }
    first = analysis.get("first_packet_at") or 0.0
    marks: dict[int, list] = {stream: [] for stream in streams}
    clients: dict[int, tuple] = {}
    for packet in read_packets(source, streams=set(streams)):
        kept = marks.get(packet.stream)
        if kept is None or len(kept) >= MAX_PACKETS:
            continue
        if packet.stream not in clients:
            client = labels.get(packet.stream, "").split(" -> ")[0]
            clients[packet.stream] = client
        sender = f"{packet.src}:{packet.src_port}"
        if ":" in (packet.src or "") and packet.src_port is not None:
            sender = f"[{packet.src}]:{packet.src_port}"
        kept.append(
            [
                round(packet.time_ns / 1e9 - first, 6),
                "c" if sender == clients[packet.stream] else "s",
                packet.payload_length or 0,
            ]
        )
    return [
        {"stream": stream, "connection": labels.get(stream, ""), "packets": marks[stream]}
        for stream in streams
        if marks[stream]
    ]

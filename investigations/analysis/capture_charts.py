"""The charts of packet captures: stored analyses (CaptureAnalysis.as_dict()) and the marks of
the slowest connections in, plotly figure dicts out, one side or both on each chart.

Pure apart from the translation of the texts, which happens here because the figures are
built for each request in the reader's language. Time runs from each capture's own start,
so that two captures taken at different moments still line up.
"""

import html
import math

from django.utils.translation import gettext as _

from collectors.capture.stats import TIME_EDGES_NS
from investigations.analysis.ladder import SIDE_COLOURS

GRID = "#dde2e8"
# The server's packets on a connection's line: a neutral grey beside the side's colour.
SERVER_COLOUR = "#5d6878"
# At most this many points a line: longer timelines merge neighbouring buckets.
MAX_POINTS = 1500
# The bucket edges of the time histograms, in seconds (1-2-5 from 1 µs to 500 s).
TIME_EDGES = tuple(edge / 1e9 for edge in TIME_EDGES_NS)
DECADES = (
    (1e-6, "1 µs"),
    (1e-5, "10 µs"),
    (1e-4, "100 µs"),
    (1e-3, "1 ms"),
    (1e-2, "10 ms"),
    (1e-1, "100 ms"),
    (1.0, "1 s"),
    (10.0, "10 s"),
    (100.0, "100 s"),
)


def _side_name(side: str, labels: dict[str, str]) -> str:
    # plotly reads trace names as a little HTML: a label shows as typed.
    label = html.escape(labels.get(side, ""), quote=False)
    return f"{side.upper()} · {label}" if label else side.upper()


def _layout(title: str, x_title: str, y_title: str, *, height: int = 340) -> dict:
    return {
        "title": {"text": title, "font": {"size": 14}},
        "xaxis": {
            "title": {"text": x_title},
            "gridcolor": GRID,
            "zeroline": False,
            "automargin": True,
        },
        "yaxis": {
            "title": {"text": y_title},
            "rangemode": "tozero",
            "gridcolor": GRID,
            "automargin": True,
        },
        # At the foot of the figure, whatever its height: the plot gives way to it, never
        # the axis title.
        "legend": {"orientation": "h", "yref": "container", "y": 0, "yanchor": "bottom"},
        "margin": {"l": 50, "r": 20, "t": 40, "b": 10},
        "height": height,
        "hovermode": "closest",
        "paper_bgcolor": "rgba(0,0,0,0)",
        "plot_bgcolor": "rgba(0,0,0,0)",
    }


def _seconds_title() -> str:
    return _("seconds since the capture began")


# --- over time ------------------------------------------------------------------------------


def _timeline(analysis: dict) -> tuple[float, list[dict]]:
    """(bucket seconds, rows): every bucket from the first to the last (a bucket without a
    packet has no row in the analysis: it is a zero), merged to at most MAX_POINTS."""
    timeline = analysis.get("timeline") or {}
    width = timeline.get("bucket_seconds") or 1
    stored = timeline.get("rows") or []
    if not stored:
        return width, []
    by_start = {row["t"]: row for row in stored}
    first, last = stored[0]["t"], stored[-1]["t"]
    count = int((last - first) // width) + 1
    merge = max(1, math.ceil(count / MAX_POINTS))
    rows = []
    for index in range(0, count, merge):
        merged = {"t": index * width, "seconds": width * min(merge, count - index)}
        for offset in range(index, min(index + merge, count)):
            for name, value in by_start.get(first + offset * width, {}).items():
                if name != "t":
                    merged[name] = merged.get(name, 0) + value
        rows.append(merged)
    return width, rows


def _rate_trace(name: str, rows: list[dict], value, colour: str, **extra) -> dict:
    return {
        "type": "scatter",
        # A short capture has a bucket or two: a line alone would not show them.
        "mode": "lines+markers" if len(rows) <= 30 else "lines",
        "name": name,
        "x": [row["t"] for row in rows],
        "y": [round(value(row) / row["seconds"], 6) for row in rows],
        "line": {"color": colour, "shape": "hv", **extra.pop("line", {})},
        **extra,
    }


def connections_figure(analyses: dict[str, dict], labels: dict[str, str]) -> dict:
    """New TCP connections per second over each capture (and TLS handshakes, dotted, where
    there are any): churn shows as a side opening many more connections."""
    data = []
    for side, analysis in analyses.items():
        rows = _timeline(analysis)[1]
        name, colour = _side_name(side, labels), SIDE_COLOURS[side]
        data.append(
            _rate_trace(
                _("%(side)s new connections") % {"side": name},
                rows,
                lambda row: row.get("connections", 0),
                colour,
            )
        )
        if analysis.get("tls_handshakes"):
            data.append(
                _rate_trace(
                    _("%(side)s TLS handshakes") % {"side": name},
                    rows,
                    lambda row: row.get("tls_handshakes", 0),
                    colour,
                    line={"dash": "dot"},
                )
            )
    return {
        "data": data,
        "layout": _layout(_("New connections per second"), _seconds_title(), _("connections/s")),
    }


def traffic_figure(analyses: dict[str, dict], labels: dict[str, str]) -> dict:
    """Throughput (Mbit/s) and packets per second (right axis, dotted) over each capture,
    with retransmissions per second (right axis, dash-dot) where there are any."""
    data = []
    for side, analysis in analyses.items():
        rows = _timeline(analysis)[1]
        name, colour = _side_name(side, labels), SIDE_COLOURS[side]
        data.append(
            _rate_trace(
                _("%(side)s Mbit/s") % {"side": name},
                rows,
                lambda row: row.get("bytes", 0) * 8 / 1e6,
                colour,
            )
        )
        data.append(
            _rate_trace(
                _("%(side)s packets/s") % {"side": name},
                rows,
                lambda row: row.get("packets", 0),
                colour,
                line={"dash": "dot"},
                yaxis="y2",
            )
        )
        if analysis.get("retransmissions"):
            data.append(
                _rate_trace(
                    _("%(side)s retransmissions/s") % {"side": name},
                    rows,
                    lambda row: row.get("retransmissions", 0),
                    colour,
                    line={"dash": "dashdot", "width": 1},
                    yaxis="y2",
                )
            )
    layout = _layout(_("Traffic"), _seconds_title(), _("Mbit/s"))
    layout["yaxis2"] = {
        "title": {"text": _("packets/s")},
        "overlaying": "y",
        "side": "right",
        "rangemode": "tozero",
        "showgrid": False,
        "automargin": True,
    }
    layout["margin"]["r"] = 50
    return {"data": data, "layout": layout}


# --- distributions --------------------------------------------------------------------------


def duration_text(seconds: float) -> str:
    """A bucket edge as people read it: 500 µs, 20 ms, 1 s."""
    if seconds < 1e-3:
        return f"{seconds * 1e6:g} µs"
    if seconds < 1:
        return f"{seconds * 1e3:g} ms"
    return f"{seconds:g} s"


def _histogram_points(histogram: dict | None, edges: list[float]) -> tuple[list, list, list]:
    """(x, percent, counts) at each edge: the share of the values in the bucket that ends
    there (the values above every edge at their maximum)."""
    buckets = (histogram or {}).get("buckets") or []
    total = sum(bucket["count"] for bucket in buckets)
    counts = dict.fromkeys(edges, 0)
    for bucket in buckets:
        edge = bucket["le"] if bucket["le"] is not None else histogram.get("max")
        if edge is None:
            continue
        nearest = min(edges, key=lambda e: abs(math.log10(e) - math.log10(max(edge, 1e-9))))
        counts[nearest] += bucket["count"]
    x = list(edges)
    values = [counts[edge] for edge in x]
    percent = [round(100 * value / total, 3) if total else 0 for value in values]
    return x, percent, values


def _edges_spanning(histograms: list[dict | None]) -> list[float]:
    """The 1-2-5 edges from the lowest bucket of any histogram to the highest (one more each
    way, so that each line rises from and falls to zero)."""
    present = []
    for histogram in histograms:
        for bucket in (histogram or {}).get("buckets") or []:
            edge = bucket["le"] if bucket["le"] is not None else histogram.get("max")
            if edge is not None and edge > 0:
                present.append(edge)
    if not present:
        return []
    low = max(0, max(i for i, e in enumerate(TIME_EDGES) if e <= min(present) * 1.0001) - 1)
    above = [i for i, e in enumerate(TIME_EDGES) if e >= max(present) * 0.9999]
    high = min(len(TIME_EDGES) - 1, (above[0] if above else len(TIME_EDGES) - 1) + 1)
    return list(TIME_EDGES[low : high + 1])


def _log_seconds_axis(title: str, edges: list[float]) -> dict:
    ticks = [(value, text) for value, text in DECADES if edges and edges[0] <= value <= edges[-1]]
    return {
        "title": {"text": title},
        "type": "log",
        "gridcolor": GRID,
        "tickvals": [value for value, text in ticks],
        "ticktext": [text for value, text in ticks],
        "automargin": True,
    }


def _histogram_trace(name: str, histogram: dict | None, edges, colour: str, **extra) -> dict:
    x, percent, counts = _histogram_points(histogram, edges)
    hover = [
        _("up to %(edge)s: %(share)s (%(count)s)")
        % {"edge": duration_text(edge), "share": f"{share:.1f} %", "count": f"{count:,}"}
        for edge, share, count in zip(x, percent, counts, strict=True)
    ]
    return {
        "type": "scatter",
        "mode": "lines+markers",
        "name": name,
        "x": x,
        "y": percent,
        "text": hover,
        "hovertemplate": f"{name}<br>%{{text}}<extra></extra>",
        "line": {"color": colour, **extra.pop("line", {})},
        "marker": {"size": 5},
        **extra,
    }


def intervals_figure(analyses: dict[str, dict], labels: dict[str, str]) -> dict:
    """How long a connection's packets follow each other: the share of the intervals in
    each bucket, on a log scale of time, with the threshold past which an interval counts as
    a gap."""
    histograms = {side: analysis.get("inter_packet_time") for side, analysis in analyses.items()}
    edges = _edges_spanning(list(histograms.values()))
    data = [
        _histogram_trace(_side_name(side, labels), histogram, edges, SIDE_COLOURS[side])
        for side, histogram in histograms.items()
    ]
    layout = _layout(
        _("Time between packets of a connection"),
        _("interval (log scale)"),
        _("share of intervals (%)"),
    )
    layout["xaxis"] = _log_seconds_axis(_("interval (log scale)"), edges)
    thresholds = {a.get("gap_threshold_s") for a in analyses.values()} - {None}
    if len(thresholds) == 1 and edges:
        threshold = thresholds.pop()
        layout["shapes"] = [
            {
                "type": "line",
                "x0": threshold,
                "x1": threshold,
                "yref": "paper",
                "y0": 0,
                "y1": 1,
                "line": {"dash": "dot", "color": SERVER_COLOUR, "width": 1},
            }
        ]
        layout["annotations"] = [
            {
                # On a log axis an annotation's x is the log10 of the value.
                "x": math.log10(threshold),
                "y": 1,
                "yref": "paper",
                "text": _("gaps beyond %(threshold)s") % {"threshold": duration_text(threshold)},
                "showarrow": False,
                "xanchor": "left",
                "yanchor": "top",
                "font": {"size": 11, "color": SERVER_COLOUR},
            }
        ]
    return {"data": data, "layout": layout}


def waits_figure(analyses: dict[str, dict], labels: dict[str, str]) -> dict:
    """Who waits: the client before its next request (solid) and the server before its
    response (dotted), as shares of each kind of wait on a log scale of time."""
    pairs = [
        (side, analysis.get("request_wait"), analysis.get("response_wait"))
        for side, analysis in analyses.items()
    ]
    edges = _edges_spanning([h for side, *both in pairs for h in both])
    data = []
    for side, request_wait, response_wait in pairs:
        name, colour = _side_name(side, labels), SIDE_COLOURS[side]
        data.append(
            _histogram_trace(
                _("%(side)s client before a request") % {"side": name},
                request_wait,
                edges,
                colour,
            )
        )
        data.append(
            _histogram_trace(
                _("%(side)s server before a response") % {"side": name},
                response_wait,
                edges,
                colour,
                line={"dash": "dot"},
            )
        )
    layout = _layout(_("Waits"), _("wait (log scale)"), _("share of waits (%)"))
    layout["xaxis"] = _log_seconds_axis(_("wait (log scale)"), edges)
    return {"data": data, "layout": layout}


# --- the slowest connections, packet by packet ---------------------------------------------


def connection_timeline_figure(
    marks: list[dict], gaps: list[dict], side: str, labels: dict[str, str]
) -> dict:
    """One line per connection (the slowest of the capture), each packet a mark on it: the
    client's in the side's colour, the server's in grey, larger where they carry payload;
    the silences over the threshold are shaded, so that who kept the connection waiting
    shows."""
    colour = SIDE_COLOURS[side]
    rows = list(enumerate(marks))
    who = {"c": _("client"), "s": _("server")}
    lines_x: list = []
    lines_y: list = []
    traces: dict[str, dict] = {}
    for index, entry in rows:
        packets = entry.get("packets") or []
        if not packets:
            continue
        lines_x += [packets[0][0], packets[-1][0], None]
        lines_y += [index, index, None]
        for seconds, sender, payload in packets:
            trace = traces.setdefault(sender, {"x": [], "y": [], "size": [], "text": []})
            trace["x"].append(seconds)
            trace["y"].append(index)
            trace["size"].append(9 if payload else 5)
            trace["text"].append(
                _("#%(stream)s %(who)s, %(bytes)s bytes of payload")
                % {"stream": entry.get("stream"), "who": who[sender], "bytes": payload}
            )
    data = [
        {
            "type": "scatter",
            "mode": "lines",
            "x": lines_x,
            "y": lines_y,
            "line": {"color": GRID, "width": 2},
            "hoverinfo": "skip",
            "showlegend": False,
        }
    ]
    # The server's first, the client's over them: a request answered at once stays in view.
    for sender, symbol, trace_colour, name in (
        ("s", "circle", SERVER_COLOUR, _("server → client")),
        ("c", "triangle-right", colour, _("client → server")),
    ):
        trace = traces.get(sender)
        if trace is None:
            continue
        data.append(
            {
                "type": "scatter",
                "mode": "markers",
                "name": name,
                "x": trace["x"],
                "y": trace["y"],
                "text": trace["text"],
                "hovertemplate": "%{text}<br>%{x:.6f} s<extra></extra>",
                "marker": {
                    "color": trace_colour,
                    "symbol": symbol,
                    "size": trace["size"],
                    "line": {"width": 0},
                },
            }
        )
    row_of = {entry.get("stream"): index for index, entry in rows}
    shapes = [
        {
            "type": "rect",
            "x0": gap["at_offset_s"],
            "x1": gap["at_offset_s"] + gap["seconds"],
            "y0": row_of[gap["stream"]] - 0.35,
            "y1": row_of[gap["stream"]] + 0.35,
            "fillcolor": colour if gap.get("silent") == "client" else SERVER_COLOUR,
            "opacity": 0.15,
            "line": {"width": 0},
            "layer": "below",
        }
        for gap in gaps
        if gap.get("stream") in row_of and gap.get("at_offset_s") is not None
    ]
    layout = _layout(
        _("Slowest connections of side %(side)s") % {"side": side.upper()},
        _seconds_title(),
        _("connection"),
        height=max(220, 110 + 34 * len(rows)),
    )
    layout["yaxis"] = {
        "title": {"text": _("connection")},
        "tickvals": [index for index, entry in rows],
        "ticktext": [f"#{entry.get('stream')}" for index, entry in rows],
        "autorange": "reversed",
        "zeroline": False,
        "showgrid": False,
        "automargin": True,
    }
    layout["shapes"] = shapes
    return {"data": data, "layout": layout}


def capture_figures(analyses: dict[str, dict], labels: dict[str, str]) -> dict[str, dict]:
    """The charts every capture page shows, for one side or both: over time, then the
    distributions."""
    return {
        "connections": connections_figure(analyses, labels),
        "traffic": traffic_figure(analyses, labels),
        "intervals": intervals_figure(analyses, labels),
        "waits": waits_figure(analyses, labels),
    }

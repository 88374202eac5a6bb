"""The traffic path as a plotly figure: left to right by hops, one marker per node.

Pure: plain node and edge data in, a plotly figure dict out (rendered in the browser by the
vendored plotly.js). Node colour shows its state; a node whose two sides' specifications
differ says so under its label.
"""

from dataclasses import dataclass
from html import escape

from django.utils.translation import gettext

from investigations.choices import NodeState

STATE_COLOURS = {
    NodeState.NOT_CHECKED: "#8a94a6",
    NodeState.RULED_OUT: "#1b7f3b",
    NodeState.SUSPECT: "#c62828",
}


def _state_label(state: str) -> str:
    return str(NodeState(state).label) if state in NodeState.values else state.replace("_", " ")


@dataclass(frozen=True)
class DiagramNode:
    id: int
    label: str
    kind: str
    state: str
    specs_differ: bool


@dataclass(frozen=True)
class DiagramEdge:
    source: int
    target: int
    label: str


def layers(nodes: list[DiagramNode], edges: list[DiagramEdge]) -> dict[int, int]:
    """Each node's column: the longest chain of edges leading to it (cycles cut)."""
    incoming: dict[int, list[int]] = {node.id: [] for node in nodes}
    for edge in edges:
        incoming.setdefault(edge.target, []).append(edge.source)
    column: dict[int, int] = {}

    def depth(node_id: int, trail: frozenset) -> int:
        if node_id in column:
            return column[node_id]
        parents = [p for p in incoming.get(node_id, []) if p not in trail]
        value = max((depth(p, trail | {node_id}) + 1 for p in parents), default=0)
        column[node_id] = value
        return value

    for node in nodes:
        depth(node.id, frozenset())
    return column


def positions(nodes: list[DiagramNode], edges: list[DiagramEdge]) -> dict[int, tuple[float, float]]:
    column = layers(nodes, edges)
    by_column: dict[int, list[DiagramNode]] = {}
    for node in nodes:
        by_column.setdefault(column[node.id], []).append(node)
    placed = {}
    for x, members in by_column.items():
        for index, node in enumerate(members):
            placed[node.id] = (float(x), (len(members) - 1) / 2 - index)
    return placed


def figure(nodes: list[DiagramNode], edges: list[DiagramEdge]) -> dict:
    """A plotly figure: node markers (customdata = node id, for clicks), edge arrows with
    their protocol, TLS and reuse written at the middle."""
    where = positions(nodes, edges)
    annotations = []
    for edge in edges:
        if edge.source not in where or edge.target not in where:
            continue
        (x0, y0), (x1, y1) = where[edge.source], where[edge.target]
        annotations.append(
            {
                "x": x1,
                "y": y1,
                "ax": x0,
                "ay": y0,
                "xref": "x",
                "yref": "y",
                "axref": "x",
                "ayref": "y",
                "showarrow": True,
                "arrowhead": 3,
                "arrowsize": 1.3,
                "arrowwidth": 1.6,
                "arrowcolor": "#8a94a6",
                "standoff": 26,
                "startstandoff": 26,
                "text": "",
            }
        )
        if edge.label:
            annotations.append(
                {
                    "x": (x0 + x1) / 2,
                    "y": (y0 + y1) / 2,
                    "xref": "x",
                    "yref": "y",
                    "text": edge.label,
                    "showarrow": False,
                    "yshift": 12,
                    "font": {"size": 11, "color": "#5d6878"},
                }
            )
    text = [
        # plotly reads <b>, <br> and <a> in text: a label is escaped to show as written.
        f"<b>{escape(node.label, quote=False)}</b><br>{node.kind}"
        + ("<br>" + gettext("≠ the sides differ") if node.specs_differ else "")
        for node in nodes
    ]
    trace = {
        "type": "scatter",
        "mode": "markers+text",
        "x": [where[node.id][0] for node in nodes],
        "y": [where[node.id][1] for node in nodes],
        "text": text,
        "textposition": "bottom center",
        "hoverinfo": "text",
        "hovertext": [
            f"{escape(node.label, quote=False)}: {_state_label(node.state)}" for node in nodes
        ],
        "customdata": [node.id for node in nodes],
        "marker": {
            "size": 34,
            "color": [STATE_COLOURS.get(node.state, "#8a94a6") for node in nodes],
            "line": {
                "width": [4 if node.specs_differ else 1 for node in nodes],
                "color": ["#c25e00" if node.specs_differ else "#ffffff" for node in nodes],
            },
        },
    }
    columns = max((x for x, _ in where.values()), default=0)
    rows = max((abs(y) for _, y in where.values()), default=0)
    return {
        "data": [trace],
        "layout": {
            "annotations": annotations,
            "showlegend": False,
            "margin": {"l": 30, "r": 30, "t": 20, "b": 20},
            "height": int(220 + 110 * rows * 2),
            "xaxis": {"visible": False, "range": [-0.5, columns + 0.5]},
            "yaxis": {"visible": False, "range": [-rows - 0.8, rows + 0.6]},
            "plot_bgcolor": "rgba(0,0,0,0)",
            "paper_bgcolor": "rgba(0,0,0,0)",
            "dragmode": False,
        },
    }

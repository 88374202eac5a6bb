"""Reads of the traffic path: its nodes (hops) and edges."""

from django.db.models import QuerySet

from investigations.analysis.diagram import DiagramEdge, DiagramNode, figure
from investigations.models import Investigation, PathEdge, PathNode


def path_nodes(*, investigation: Investigation) -> QuerySet[PathNode]:
    """The investigation's path nodes with the hosts of both sides loaded."""
    return investigation.path_nodes.prefetch_related("hosts_a", "hosts_b")


def path_node_choices(*, investigation: Investigation) -> QuerySet[PathNode]:
    """The investigation's path nodes (the rows only): what an edge form offers."""
    return investigation.path_nodes.all()


def path_node_get(*, investigation: Investigation, node_id: int) -> PathNode | None:
    """The investigation's path node with this id and the hosts of both sides loaded, or
    None (three queries when found)."""
    return path_nodes(investigation=investigation).filter(pk=node_id).first()


def path_nodes_by_id(*, investigation: Investigation, node_ids: list[int]) -> dict[int, PathNode]:
    """The investigation's path nodes among these ids, by id (the rows only); ids of other
    paths' nodes are left out."""
    return {node.pk: node for node in investigation.path_nodes.filter(pk__in=node_ids)}


def path_edges(*, investigation: Investigation) -> QuerySet[PathEdge]:
    """The investigation's path edges with both their nodes loaded."""
    return investigation.path_edges.select_related("source", "target")


def path_edge_get(*, investigation: Investigation, edge_id: int) -> PathEdge | None:
    """The investigation's path edge with this id and both its nodes loaded, or None."""
    return path_edges(investigation=investigation).filter(pk=edge_id).first()


def path_figure(*, nodes, edges) -> dict:
    """The plotly figure of the traffic path, from nodes and edges already loaded."""
    return figure(
        [DiagramNode(n.pk, n.label, n.get_kind_display(), n.state, n.specs_differ) for n in nodes],
        [
            DiagramEdge(
                e.source_id, e.target_id, e.summary if e.protocol != "other" or e.tls else ""
            )
            for e in edges
        ],
    )

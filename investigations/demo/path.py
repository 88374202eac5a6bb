"""The demo cases' paths: drawn in the one-line path grammar, each hop's state set."""

from investigations.choices import NodeState
from investigations.models import Host
from investigations.services.path import path_from_text, path_node_set_state, path_node_update

# The main case's hops ruled out, with what ruled each out.
DEMO_RULED_OUT = (
    ("loadgen", "The same load test plan and machine for both sides."),
    ("slb", "New connections and bandwidth far below the instance's limits."),
    ("gateway", "Gateway CPU under 30 % during the surge."),
    ("mysql", "Same database for both pools; its latency flat during the test."),
)


def path_load(*, investigation, user, hosts: dict[str, Host]) -> None:
    """The main case's path, its service hop on the hosts of each side and suspected."""
    nodes = {
        node.label: node
        for node in path_from_text(
            investigation=investigation,
            user=user,
            text="loadgen -> lb:slb -> gateway -> order-api -[mysql:3306, long]-> db:mysql",
        )
    }
    path_node_update(
        node=nodes["order-api"],
        user=user,
        spec_a="container, 4 vCPU / 8 GB, same image",
        spec_b="VM, 4 vCPU / 8 GB, same image",
        hosts_a=[hosts["a"]],
        hosts_b=[hosts["b"]],
    )
    for label, note in DEMO_RULED_OUT:
        path_node_set_state(node=nodes[label], user=user, state=NodeState.RULED_OUT, note=note)
    path_node_set_state(
        node=nodes["order-api"],
        user=user,
        state=NodeState.SUSPECT,
        note="The container pool serves half the TPS of the VM pool at the same load.",
    )


def path_story_load(*, investigation, user, lines: list[str], node_states: list) -> None:
    """A closed case's path: its lines drawn, then each (label, state, note) set."""
    for line in lines:
        path_from_text(investigation=investigation, user=user, text=line)
    nodes = {node.label: node for node in investigation.path_nodes.all()}
    for label, state, note in node_states:
        path_node_set_state(node=nodes[label], user=user, state=state, note=note)

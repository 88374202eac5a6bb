"""Reads of the baseline pack: which hosts the network benchmarks run between, each side's
newest result of every metric, and the table made of them."""

from investigations.analysis.baseline import DEFAULT_MARGIN, Measured, Row, table, verdict_counts
from investigations.choices import HostRole
from investigations.models import BaselineResult, EnvironmentMember, Investigation
from investigations.phrases import stored_text

# The role a host that has several on a side is compared by: the most telling first.
ROLE_ORDER = [
    HostRole.SERVICE,
    HostRole.DATABASE,
    HostRole.CACHE,
    HostRole.MESSAGE_QUEUE,
    HostRole.GATEWAY,
    HostRole.LOAD_BALANCER,
    HostRole.LOAD_GENERATOR,
    HostRole.OTHER,
]


def host_roles(*, investigation: Investigation) -> dict[tuple[int, int], str]:
    """{(host id, side id): the role the host is compared by on that side}."""
    roles: dict[tuple[int, int], str] = {}
    for host_id, side_id, role in EnvironmentMember.objects.filter(
        investigation=investigation
    ).values_list("host_id", "side_id", "role"):
        key = (host_id, side_id)
        if key not in roles or ROLE_ORDER.index(role) < ROLE_ORDER.index(roles[key]):
            roles[key] = role
    return roles


def baseline_network_pairs(*, investigation: Investigation) -> dict[str, dict]:
    """{side key: {"client": the load generator's host id, "server": the service's host id,
    "address": the service's address}} for each side that has both roles (the first host of
    each role by name)."""
    pairs: dict[str, dict] = {}
    members = (
        EnvironmentMember.objects.filter(
            investigation=investigation, role__in=[HostRole.LOAD_GENERATOR, HostRole.SERVICE]
        )
        .select_related("host", "side")
        .order_by("host__name")
    )
    for member in members:
        found = pairs.setdefault(member.side.key, {})
        name = "client" if member.role == HostRole.LOAD_GENERATOR else "server"
        if name not in found:
            found[name] = member.host_id
            if name == "server":
                found["address"] = member.host.address
    return {key: pair for key, pair in pairs.items() if {"client", "server"} <= set(pair)}


def baseline_measured(*, investigation: Investigation) -> list[Measured]:
    """Each side's newest result of every (role, benchmark, metric)."""
    newest: dict[tuple, Measured] = {}
    results = (
        BaselineResult.objects.filter(investigation=investigation)
        .select_related("side", "host")
        .order_by("-created_at", "-id")
    )
    for result in results:
        key = (result.side.key, result.role, result.benchmark, result.metric)
        if key in newest:
            continue
        newest[key] = Measured(
            side=result.side.key,
            role=result.role,
            benchmark=result.benchmark,
            metric=result.metric,
            status=result.status,
            median=result.median,
            spread=result.spread,
            values=result.values,
            note=stored_text(result, "note"),
            host=result.host.name if result.host else result.source,
        )
    return list(newest.values())


def baseline_table(*, investigation: Investigation, margin: float = DEFAULT_MARGIN) -> list[Row]:
    return table(baseline_measured(investigation=investigation), margin=margin)


def baseline_exists(*, investigation: Investigation) -> bool:
    return BaselineResult.objects.filter(investigation=investigation).exists()


def baseline_summary(*, investigation: Investigation) -> dict | None:
    """How many rows say side A is better, worse, about equal (None: no baseline yet)."""
    rows = baseline_table(investigation=investigation)
    return verdict_counts(rows) if rows else None

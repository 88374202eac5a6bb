"""Reads of fact snapshots: the newest per host and side, paired and compared."""

from dataclasses import dataclass

from django.db.models import Max

from investigations.analysis.diff import ONLY_A, ONLY_B, SAME, VOLATILE, diff_facts
from investigations.choices import SideKey
from investigations.models import EnvironmentMember, FactSnapshot, Investigation
from investigations.selectors.inventory import host_pairs


def latest_snapshots(
    *, investigation: Investigation, load_facts: bool = True
) -> dict[tuple[int, str], FactSnapshot]:
    """The newest fact snapshot of each host on each side: {(host id, side key): snapshot}.

    Two queries: the newest ids, then those rows (older snapshots' facts are never loaded,
    nor the newest ones' without load_facts).
    """
    newest = (
        FactSnapshot.objects.filter(investigation=investigation)
        .values("host", "side")
        .annotate(last=Max("id"))
        .values_list("last", flat=True)
    )
    snapshots = FactSnapshot.objects.filter(id__in=list(newest)).select_related("host", "side")
    if not load_facts:
        snapshots = snapshots.defer("facts", "probes")
    return {(s.host_id, s.side.key): s for s in snapshots}


@dataclass
class FactPair:
    roles: list[str]
    a: EnvironmentMember
    b: EnvironmentMember
    snapshot_a: FactSnapshot | None
    snapshot_b: FactSnapshot | None

    @property
    def key(self) -> str:
        return f"{self.a.host_id}:{self.b.host_id}"

    @property
    def complete(self) -> bool:
        return self.snapshot_a is not None and self.snapshot_b is not None


def fact_pairs(*, investigation: Investigation, load_facts: bool = True) -> list[FactPair]:
    """Every host pair with both sides present, once per pair of hosts, with their newest
    snapshots (without their facts and probes unless load_facts)."""
    snapshots = latest_snapshots(investigation=investigation, load_facts=load_facts)
    pairs: dict[tuple[int, int], FactPair] = {}
    for pair in host_pairs(investigation=investigation):
        if pair.a is None or pair.b is None:
            continue
        key = (pair.a.host_id, pair.b.host_id)
        if key in pairs:
            pairs[key].roles.append(pair.role_label)
            continue
        pairs[key] = FactPair(
            roles=[pair.role_label],
            a=pair.a,
            b=pair.b,
            snapshot_a=snapshots.get((pair.a.host_id, SideKey.A)),
            snapshot_b=snapshots.get((pair.b.host_id, SideKey.B)),
        )
    return list(pairs.values())


@dataclass
class PairDiff:
    pair: FactPair
    rows: list  # analysis.diff.DiffRow
    differences: int
    one_sided: int

    @property
    def categories(self) -> dict[str, list]:
        grouped: dict[str, list] = {}
        for row in self.rows:
            grouped.setdefault(row.category, []).append(row)
        return grouped


def fact_pair_diffs(
    *, investigation: Investigation, only_differences: bool = False
) -> list[PairDiff]:
    """Each host pair's newest facts side by side, with the counts that matter."""
    diffs = []
    for pair in fact_pairs(investigation=investigation):
        rows = diff_facts(
            pair.snapshot_a.facts if pair.snapshot_a else {},
            pair.snapshot_b.facts if pair.snapshot_b else {},
        )
        differences = sum(1 for row in rows if row.counted)
        one_sided = sum(1 for row in rows if row.kind in (ONLY_A, ONLY_B))
        if only_differences:
            rows = [row for row in rows if row.kind not in (SAME, VOLATILE)]
        diffs.append(PairDiff(pair, rows, differences, one_sided))
    return diffs

"""What evidence kinds taken on both sides share: the pairs a kind compares (the newest row
of each side of every host pair that has one on both sides, and the newest imported rows,
which name no host, of each side), one row by its id, and the rows taken during a ladder's
steps. The rows are StoredEvidence (models/evidence.py)."""

from dataclasses import dataclass

from investigations.choices import SideKey
from investigations.selectors.inventory import host_pairs


@dataclass(frozen=True)
class EvidencePair:
    key: str  # "<kind>:<host a>:<host b>", or "<kind>:imported"
    a: object
    b: object

    @property
    def host_a(self):
        return self.a.host

    @property
    def host_b(self):
        return self.b.host


def newest_pairs(*, investigation, rows, kind: str) -> list[EvidencePair]:
    """`rows`: the kind's rows of the investigation (with host_id and side loaded), newest
    first."""
    newest: dict[tuple[int | None, str], object] = {}
    for row in rows:
        newest.setdefault((row.host_id, row.side.key), row)
    if not newest:
        return []  # nothing to pair: the host pairs are not read
    pairs, seen = [], set()
    for pair in host_pairs(investigation=investigation):
        if pair.a is None or pair.b is None:
            continue
        a = newest.get((pair.a.host_id, SideKey.A))
        b = newest.get((pair.b.host_id, SideKey.B))
        key = f"{kind}:{pair.a.host_id}:{pair.b.host_id}"
        if a and b and key not in seen:
            seen.add(key)
            pairs.append(EvidencePair(key, a, b))
    imported_a, imported_b = newest.get((None, SideKey.A)), newest.get((None, SideKey.B))
    if imported_a and imported_b:
        pairs.append(EvidencePair(f"{kind}:imported", imported_a, imported_b))
    return pairs


def evidence_get(*, rows, pk):
    """The row of `rows` (a kind's rows of one investigation) with this id, as a URL or a
    request gave it (anything: what is no id finds nothing), or None."""
    try:
        return rows.filter(pk=int(pk)).first()
    except (TypeError, ValueError):
        return None


def ladder_rows(*, rows, ladder) -> list:
    """The rows (a kind's queryset, linked to its collection target) taken during the
    ladder's steps, by step; each with `step` set (from 1)."""
    found = list(
        rows.filter(
            investigation_id=ladder.investigation_id,
            target__collection__parameters__ladder=ladder.pk,
        )
        .select_related("host", "side", "target__collection")
        .order_by("target__collection__parameters__step", "side__key", "host__name")
    )
    for row in found:
        row.step = row.target.collection.parameters.get("step")
    return found

"""Two hosts' facts side by side: which differ, which only one side has, which never count."""

from dataclasses import dataclass

from collectors.catalog import CATEGORY_ORDER, category_of, is_volatile, tolerance_of

SAME, DIFFERS, ONLY_A, ONLY_B, VOLATILE = "same", "differs", "only_a", "only_b", "volatile"
MISSING = object()


@dataclass(frozen=True)
class DiffRow:
    key: str
    category: str
    a: object
    b: object
    kind: str

    @property
    def counted(self) -> bool:
        return self.kind == DIFFERS


def values_equal(key: str, a, b) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    tolerance = tolerance_of(key)
    if tolerance and isinstance(a, int | float) and isinstance(b, int | float):
        scale = max(abs(a), abs(b))
        return scale == 0 or abs(a - b) <= tolerance * scale
    return a == b


def diff_facts(a: dict, b: dict) -> list[DiffRow]:
    rows = []
    for key in set(a) | set(b):
        value_a, value_b = a.get(key, MISSING), b.get(key, MISSING)
        if is_volatile(key):
            kind = VOLATILE
        elif value_a is MISSING:
            kind = ONLY_B
        elif value_b is MISSING:
            kind = ONLY_A
        else:
            kind = SAME if values_equal(key, value_a, value_b) else DIFFERS
        rows.append(
            DiffRow(
                key=key,
                category=category_of(key),
                a=None if value_a is MISSING else value_a,
                b=None if value_b is MISSING else value_b,
                kind=kind,
            )
        )
    rows.sort(key=lambda row: (CATEGORY_ORDER.index(row.category), row.key))
    return rows

"""The order the parallel lane runs in: each process begins with its share of the long files.

`make test` runs the suite with pytest-xdist's `worksteal` scheduler, which gives each of the
N processes one contiguous N-th of the collected tests and, once a process runs dry, moves
the back half of the longest queue to it. In file order the longest files sat at the end of
the last process's queue (tests/investigations/test_worker_killed.py waits minutes for
deadlines, by design): the last minutes of a run were a few processes waiting on them while
the CPUs idled. So, when the run is spread over processes, the files named here are dealt
out first, each to the process whose share is the lightest so far (the longest first), and
the rest of the suite, in its own order, fills every share up to its N-th. What is stolen is
the ends of the shares: short tests.

Each share keeps pytest-django's order of kinds of test (those in a rolled-back transaction,
then the transactional ones, which empty the tables when they end, then those without a
database), so that no test meets a database a transactional test emptied before it; the
long files come first within their kind.

The weights are seconds one file took in a run on this 2-core machine; they only order the
deal, so they need not be exact. A new file that takes a minute or more belongs here.
"""

LONG = {
    "tests/investigations/test_diagnoses_end_to_end.py": 150,
    "tests/investigations/test_worker_killed.py": 110,
    "tests/app/test_wheel.py": 90,
    "tests/investigations/test_import_kinds.py": 60,
    "tests/e2e/test_start_forms.py": 35,
    "tests/investigations/test_commands.py": 35,
    "tests/investigations/test_job_migrations.py": 30,
    "tests/e2e/test_phone_layout.py": 30,
    "tests/app/test_schema_fuzz.py": 30,
    "tests/investigations/test_ladder_tools.py": 25,
    "tests/app/test_redos.py": 25,
    "tests/collectors/test_capture.py": 25,
    "tests/collectors/test_capture_protocols.py": 25,
    "tests/investigations/test_object_storage.py": 20,
    "tests/investigations/test_similar.py": 15,
    "tests/scenarios/test_scenarios.py": 30,
}


def shares(count: int, processes: int) -> list[int]:
    """How many tests worksteal's first deal gives each process (xdist's own arithmetic)."""
    sizes = []
    for given in range(processes):
        sizes.append(count // (processes - given))
        count -= sizes[-1]
    return sizes


def deal(items: list, processes: int, runs=lambda item: True, kind=lambda item: 0) -> list:
    """`items` reordered as above; `runs(item)` says whether the run keeps an item (the
    serial tests are deselected after this and take no place in a share), `kind(item)`
    where pytest-django orders it."""
    files: dict[str, list] = {}
    for item in items:
        files.setdefault(item.nodeid.split("::")[0], []).append(item)
    hands: list[list] = [[] for _ in range(processes)]
    weights = [0] * processes
    for name in sorted((f for f in files if f in LONG), key=LONG.__getitem__, reverse=True):
        lightest = weights.index(min(weights))
        hands[lightest] += files.pop(name)
        weights[lightest] += LONG[name]
    rest = iter(item for held in files.values() for item in held)
    for hand, size in zip(hands, shares(sum(map(runs, items)), processes), strict=True):
        needed = size - sum(map(runs, hand))
        while needed > 0 and (item := next(rest, None)) is not None:
            hand.append(item)
            needed -= runs(item)
    hands[-1].extend(rest)
    return [item for hand in hands for item in sorted(hand, key=kind)]

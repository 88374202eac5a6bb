"""The demo case's baseline, imported from sysbench's outputs."""

from investigations.choices import HostRole
from investigations.demo.shipped import shipped
from investigations.services.baselines import baseline_import


def baseline_load(*, investigation, user) -> None:
    """The service hosts' sysbench results, imported as a baseline of both sides."""
    for side in ("a", "b"):
        baseline_import(
            investigation=investigation,
            user=user,
            side_key=side,
            role=HostRole.SERVICE,
            files=[
                shipped(f"baseline-{side}-sysbench-cpu.txt"),
                shipped(f"baseline-{side}-sysbench-memory-read.txt"),
            ],
        )

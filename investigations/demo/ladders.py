"""The demo case's load ladder, imported from wrk's outputs."""

from investigations.choices import ImportFormat
from investigations.demo.shipped import DEMO_DIR, shipped
from investigations.services.ladder_imports import ladder_import


def ladder_load(*, investigation, user) -> None:
    """The wrk results of both sides (files/wrk-<side>-c<connections>.txt), imported onto
    one ladder: A first, then B."""
    ladder = None
    for side in ("a", "b"):
        ladder = ladder_import(
            investigation=investigation,
            user=user,
            side_key=side,
            format=ImportFormat.WRK,
            files=[shipped(path.name) for path in sorted(DEMO_DIR.glob(f"wrk-{side}-c*.txt"))],
            ladder=ladder,
        )

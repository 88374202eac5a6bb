"""CPU profiles of the closed demo cases, imported as folded stacks."""

from investigations.choices import ProfileFormat
from investigations.demo.shipped import shipped
from investigations.services.profiles import profile_import


def profiles_load(*, investigation, user, profiles: dict[str, str]) -> None:
    """Each side's shipped profile (side -> its file in files/), imported onto it."""
    for side, name in profiles.items():
        profile_import(
            investigation=investigation,
            user=user,
            side_key=side,
            format=ProfileFormat.FOLDED,
            files=[shipped(name)],
        )

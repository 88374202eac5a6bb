"""The demo's evidence files, shipped in files/: written for the demo, not measured on any
machine (files/README.md says what each one tells)."""

from pathlib import Path

DEMO_DIR = Path(__file__).resolve().parent / "files"


def shipped(name: str) -> tuple[str, bytes]:
    """A shipped file as an upload gives it to the import services: (name, content)."""
    return name, (DEMO_DIR / name).read_bytes()

"""What a test run's processes build once and share: a directory per run and name, made by
the first process to ask for it (under a lock) and found by the others. pytest-xdist may
split a module's tests over processes, so a module-scoped fixture that builds something
costly (the wheel of tests/app/test_wheel.py) would build it once in each.

The run's directory is removed when the run ends (conftest's pytest_sessionfinish)."""

import contextlib
import fcntl
import shutil
import tempfile
import uuid
from collections.abc import Callable
from pathlib import Path


def _run_dir(config) -> Path:
    run = getattr(config, "workerinput", {}).get("testrunuid") or config.option.testrunuid
    if not run:  # a run without pytest-xdist: its one process shares with itself
        run = config._perfcase_run = getattr(config, "_perfcase_run", None) or uuid.uuid4().hex
    return Path(tempfile.gettempdir()) / f"perfcase-run-{run[:16]}"


def shared(config, name: str, make: Callable[[Path], None]) -> Path:
    """The run's directory `name`, which `make(directory)` filled once for the whole run.
    A `make` that fails leaves nothing behind: the next process to ask tries again."""
    base = _run_dir(config)
    base.mkdir(exist_ok=True)
    directory, done = base / name, base / f"{name}.done"
    with open(base / f"{name}.lock", "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        if not done.exists():
            shutil.rmtree(directory, ignore_errors=True)
            directory.mkdir()
            try:
                make(directory)
            except BaseException:
                shutil.rmtree(directory, ignore_errors=True)
                raise
            done.touch()
    return directory


def remove(config) -> None:
    with contextlib.suppress(AttributeError, TypeError):
        shutil.rmtree(_run_dir(config), ignore_errors=True)

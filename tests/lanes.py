"""`make test`'s two lanes, both at once where the machine lets this process make a CPU
cgroup (the default, TEST_LANES=together); otherwise, and with TEST_LANES=in-turn, the
parallel one and then the serial one.

The parallel lane (every test not marked `serial`, on pytest-xdist's processes) keeps both
CPUs busy. The serial lane (the tests tests/serial.py names: they measure time under real
load) asks for little CPU, a core for a few seconds at a knee, but must get it when it
asks. So the parallel lane runs in a cgroup of its own whose CPU weight is a sixteenth of
the default (cgroup v1's cpu.shares, or v2's cpu.weight), and the serial lane beside it
outside that cgroup: whenever both want a CPU the kernel gives the serial lane's processes
(its test hosts and the load they run included) about 94 % of it, and the parallel lane
every cycle the serial one leaves. Everything the parallel lane starts stays in its cgroup,
new sessions too (the test hosts' sshd), which a nice value would not hold: the kernel's
autogroups weigh each session apart. Without such a cgroup (not root, or no cpu
controller), the serial lane runs after the parallel one, alone, as it must.

The serial lane writes to test-artifacts/serial-lane.log as it runs; its output is printed
once the parallel lane's ends.
"""

import contextlib
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

from tests.serial import files

# The parallel lane's CPU weight, against the default of a process group outside it (1,024
# in cgroup v1, 100 in v2).
SHARES = 64
WEIGHT = 6

V1, V2 = Path("/sys/fs/cgroup/cpu"), Path("/sys/fs/cgroup")
PREFIX = "perfcase-parallel-lane-"

# Where the serial lane's output goes as it runs (printed again once both lanes end).
ARTIFACTS = Path(__file__).resolve().parent.parent / "test-artifacts"
SERIAL_LOG = ARTIFACTS / "serial-lane.log"


@contextlib.contextmanager
def low_weight_cgroup():
    """The `cgroup.procs` file of a new cgroup with a low CPU weight, or None where this
    process may not make one. On leaving, what is left in it moves back to the parent and
    the cgroup goes."""
    group = None
    unified = (V2 / "cgroup.controllers").exists()
    try:
        # A killed run's cgroup, empty: it goes (one in use is not empty; one just made by
        # another run may be, for a moment, so only an old one is taken).
        for stale in (V2 if unified else V1).glob(f"{PREFIX}*"):
            with contextlib.suppress(OSError):
                if time.time() - stale.stat().st_mtime > 60:
                    stale.rmdir()
        group = (V2 if unified else V1) / f"{PREFIX}{uuid.uuid4().hex[:8]}"
        if unified:
            if "cpu" not in (V2 / "cgroup.controllers").read_text().split():
                raise OSError("the cgroup v2 root has no cpu controller")
            (V2 / "cgroup.subtree_control").write_text("+cpu")
            group.mkdir()
            (group / "cpu.weight").write_text(str(WEIGHT))
        elif (V1 / "cpu.shares").exists():
            group.mkdir()
            (group / "cpu.shares").write_text(str(SHARES))
        else:
            raise OSError("no cgroup cpu controller")
    except OSError as error:
        print(
            f"tests.lanes: no cgroup for the parallel lane ({error}): the lanes run in turn",
            flush=True,
        )
        if group is not None:
            with contextlib.suppress(OSError):  # made, then refused its weight
                group.rmdir()
        yield None
        return
    try:
        yield group / "cgroup.procs"
    finally:
        for pid in (group / "cgroup.procs").read_text().split():
            with contextlib.suppress(OSError):
                (group.parent / "cgroup.procs").write_text(pid)
        with contextlib.suppress(OSError):
            group.rmdir()


def entering(procs: Path):
    """What a child runs before its program starts: it moves itself into the cgroup, so
    that all it starts is born there."""
    return lambda: procs.write_text(str(os.getpid()))


def prepare() -> None:
    """Before the lanes, side by side: pytest's assertion rewriting of every test module, and
    the test databases' template (tests/testdb.py).

    pytest rewrites a test module as it imports it and keeps the result beside it; on a fresh
    clone the test processes collecting at once each rewrote every module (12 s of CPU apiece
    where a rewritten one takes 6 s), and then all but one waited while the first migrated
    the template. Here one process collects while another migrates. A module already
    rewritten, or a template already made, is not done again. What fails here is left to the
    lanes, which do the same and report it.
    """
    python = sys.executable
    steps = [subprocess.Popen([python, "-m", "tests.testdb"])]
    if not rewritten():
        collect = [python, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider"]
        steps.append(subprocess.Popen(collect, stdout=subprocess.DEVNULL))
    for step in steps:
        step.wait()


def rewritten(folder: Path = Path(__file__).parent) -> bool:
    """Whether every test module's rewritten bytecode is there and newer than its source."""
    import pytest

    tag = f"{sys.implementation.cache_tag}-pytest-{pytest.__version__}.pyc"
    for source in folder.rglob("*.py"):
        if source.name.startswith("test_") or source.name == "conftest.py":
            cached = source.parent / "__pycache__" / f"{source.stem}.{tag}"
            if not cached.exists() or cached.stat().st_mtime < source.stat().st_mtime:
                return False
    return True


def main(workers: str, lanes: str = "together") -> int:
    python = sys.executable
    prepare()
    parallel = [python, "-m", "pytest", "-n", workers, "--dist", "worksteal", "-m", "not serial"]
    serial = [python, "-m", "pytest", "-m", "serial", *files()]
    with low_weight_cgroup() if lanes == "together" else contextlib.nullcontext() as procs:
        if procs is None:  # in turn
            return subprocess.call(parallel) or subprocess.call(serial)

        ARTIFACTS.mkdir(exist_ok=True)
        with open(SERIAL_LOG, "w+b") as log:
            print(
                f"tests.lanes: the serial lane runs beside this one; it writes to {SERIAL_LOG}",
                flush=True,
            )
            beside = subprocess.Popen(serial, stdout=log, stderr=subprocess.STDOUT)
            try:
                parallel_status = subprocess.call(parallel, preexec_fn=entering(procs))
            finally:
                serial_status = beside.wait()
            log.seek(0)
            sys.stdout.flush()
            print("\n=== the serial lane, run beside the parallel one " + "=" * 30, flush=True)
            sys.stdout.buffer.write(log.read())
            sys.stdout.flush()
    return parallel_status or serial_status


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:3]))

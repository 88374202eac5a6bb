"""`make test`'s lanes (tests/lanes.py): the parallel lane's cgroup of low CPU weight holds
the lane's whole process tree, new sessions included, and goes when the lane ends."""

import os
import subprocess
import sys
import time

from tests import lanes
from tests.conftest import require_real_tool


def _cgroup_of(pid: int) -> str:
    """The process's cpu cgroup path (v1's cpu hierarchy, else v2's unified one)."""
    lines = open(f"/proc/{pid}/cgroup").read().splitlines()
    for line in lines:
        _, controllers, path = line.split(":", 2)
        if "cpu" in controllers.split(","):
            return path
    return next(line.split(":", 2)[2] for line in lines if line.startswith("0::"))


def test_the_parallel_lane_and_what_it_starts_stay_in_a_cgroup_of_low_weight_that_then_goes():
    with lanes.low_weight_cgroup() as procs:
        if procs is None:
            require_real_tool("no CPU cgroup can be made here (root and a cpu controller)")
        group = procs.parent
        v1 = group.parent == lanes.V1
        weight = (group / ("cpu.shares" if v1 else "cpu.weight")).read_text()
        assert int(weight) == (lanes.SHARES if v1 else lanes.WEIGHT)

        # A process that starts a new session (as sshd does for each login) stays in it.
        program = (
            "import os, subprocess, sys\n"
            "child = subprocess.Popen(['sleep', '30'], start_new_session=True)\n"
            "print(child.pid, flush=True)\n"
            "sys.stdin.read()\n"
            "child.kill()\n"
        )
        lane = subprocess.Popen(
            [sys.executable, "-c", program],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            preexec_fn=lanes.entering(procs),
        )
        try:
            grandchild = int(lane.stdout.readline())
            assert _cgroup_of(lane.pid).endswith(group.name)
            assert _cgroup_of(grandchild).endswith(group.name)
            assert _cgroup_of(os.getpid()) != _cgroup_of(lane.pid)
        finally:
            lane.communicate("", timeout=30)
        # A process the lane left behind is moved out, and the cgroup removed.
        survivor = subprocess.Popen(["sleep", "30"], preexec_fn=lanes.entering(procs))
    try:
        assert not group.exists()
        assert not _cgroup_of(survivor.pid).endswith(group.name)
    finally:
        survivor.kill()
        survivor.wait()


def test_an_old_empty_cgroup_a_killed_run_left_goes_and_one_in_use_or_just_made_stays():
    with lanes.low_weight_cgroup() as procs:
        if procs is None:
            require_real_tool("no CPU cgroup can be made here (root and a cpu controller)")
        root = procs.parent.parent
    left, in_use, fresh = (
        root / f"{lanes.PREFIX}{n}" for n in ("killed00", "running0", "justmade")
    )
    for group in (left, in_use, fresh):
        group.mkdir()
    # Another run's cgroup holds its processes; a third was just made by a run yet to enter it.
    holder = subprocess.Popen(["sleep", "30"], preexec_fn=lanes.entering(in_use / "cgroup.procs"))
    for group in (left, in_use):
        os.utime(group, (time.time() - 3600,) * 2)  # made an hour ago
    try:
        with lanes.low_weight_cgroup():
            assert not left.exists()
            assert in_use.exists()
            assert fresh.exists()
    finally:
        holder.kill()
        holder.wait()
        for group in (left, in_use, fresh):
            if group.exists():
                group.rmdir()


def test_without_a_cpu_controller_the_lanes_run_in_turn_and_say_why(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(lanes, "V2", tmp_path)
    monkeypatch.setattr(lanes, "V1", tmp_path / "cpu")
    with lanes.low_weight_cgroup() as procs:
        assert procs is None
    assert "no cgroup cpu controller" in capsys.readouterr().out
    assert list(tmp_path.iterdir()) == []


def test_the_lanes_rewrite_the_test_modules_first_only_when_one_is_not_rewritten(tmp_path):
    import pytest

    (tmp_path / "sub").mkdir()
    module, helper = tmp_path / "sub" / "test_one.py", tmp_path / "sub" / "helpers.py"
    module.write_text("def test_one():\n    assert 1\n")
    helper.write_text("")  # not a test module: pytest does not rewrite it
    assert not lanes.rewritten(tmp_path)

    cached = tmp_path / "sub" / "__pycache__"
    cached.mkdir()
    tag = f"{sys.implementation.cache_tag}-pytest-{pytest.__version__}.pyc"
    (cached / f"test_one.{tag}").write_bytes(b"")
    assert lanes.rewritten(tmp_path)

    later = time.time() + 5
    os.utime(module, (later, later))  # edited since
    assert not lanes.rewritten(tmp_path)

"""The profile probe (collectors/probes/profile.sh) run as a host runs it, with a perf that
fails without a word: the error says what is known, never a bare "exit status 6"."""

import os
import subprocess

import pytest

from collectors.profile import SCRIPT, record_problem


@pytest.mark.parametrize(
    "perf, said",
    [
        ("exit 1", "perf record ended with exit status 1 and said nothing"),
        ("exit 2", "perf record ended with exit status 2 and said nothing"),
        ("exit 0", "perf record ended without an error but wrote no data"),
    ],
)
def test_a_perf_that_fails_silently_is_reported_with_what_is_known(tmp_path, perf, said):
    fake = tmp_path / "perf"
    fake.write_text(f"#!/bin/sh\n{perf}\n")
    fake.chmod(0o755)

    ran = subprocess.run(
        ["sh", "-s", "--", "record", "pid", str(os.getpid()), "1", "99", "fp", ""],
        input=SCRIPT,
        capture_output=True,
        env={"PATH": f"{tmp_path}:/usr/bin:/bin", "TMPDIR": str(tmp_path)},
        timeout=60,
    )

    assert ran.returncode == 6, ran
    problem = str(record_problem(ran.stderr.decode(), ran.returncode, "app-a"))
    assert problem == f"perf could not record on app-a: {said}"
    # Its scratch directory is gone with it.
    assert sorted(path.name for path in tmp_path.iterdir()) == ["perf"]

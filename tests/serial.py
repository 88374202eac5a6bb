"""The tests `make test` runs in its serial lane (conftest marks them `serial`): in one
process, beside the parallel lane, which runs in a cgroup of low CPU weight (tests/lanes.py;
after it, alone, with TEST_LANES=in-turn or where no cgroup can be made).

`python -m tests.serial` prints the files that hold them: the serial lane collects only
those (collecting the whole suite costs a process about 10 s of CPU).
"""

# Tests that measure time on this machine (pauses in a capture, a ladder's knee under real
# load, a rate held step by step, a CPU quota's throttling): `make test` runs them in the
# serial lane (marked `serial`), whose CPU the kernel serves before the parallel lane's, so
# that other tests' load cannot move what they measure. A file, or one test of it (its node
# id, parameters aside).
SERIAL_TESTS = (
    "tests/collectors/test_capture_live.py",
    "tests/investigations/test_ladders_end_to_end.py::test_the_weaker_side_reaches_its_knee",
    "tests/investigations/test_ladder_tools.py::test_a_short_ladder_runs_on_both_sides_with",
    "tests/investigations/test_ladder_tools.py::test_a_ladder_of_request_rates_holds_each_rate",
    "tests/investigations/test_ladder_tools.py::test_a_step_above_the_p99_limit",
    "tests/investigations/test_ladder_tools.py::test_the_breaking_reason_states_the_p99_limit",
    "tests/investigations/test_baselines_end_to_end.py::test_the_side_with_a_cpu_quota",
    # A slow reader against a fast one: on a machine busy with other tests the fast reader
    # too falls behind now and then (zero windows on both sides, or on neither); pauses of
    # one length before a client's requests, which a busy machine stretches.
    "tests/scenarios/test_scenarios.py::test_a_cause_on_one_side_of_the_traffic_is_named",
    # The knee held while both services are profiled: on a machine busy with other tests the
    # service under the held load got so little CPU that perf sampled nothing in its 2 s.
    "tests/investigations/test_diagnoses_end_to_end.py::test_the_ladder_then_the_knee_held_with",
    # The same for the one side that has perf, under a knee held 2 s: in the parallel lane,
    # beside the serial lane's loads, A's profile once sampled nothing and failed.
    "tests/investigations/test_diagnoses_end_to_end.py::test_perf_missing_on_one_side_fails_its",
    # How long a kill, a time limit and its grace take, by the clock.
    "tests/collectors/test_loadrun.py::test_kill_command_stops_a_running_tool_within_a_second",
    "tests/collectors/test_loadrun.py::test_timeout_ends_a_tool_that_overruns_its_limit",
    "tests/collectors/test_loadrun.py::test_a_tool_that_ignores_term_is_killed_after_the_grace",
    "tests/collectors/test_loadrun.py::test_a_running_load_tool_is_killed_through_its_pid_file",
    "tests/collectors/test_ssh.py::test_a_command_past_its_timeout_raises_command_timed_out",
)


def files() -> list[str]:
    return sorted({test.split("::")[0] for test in SERIAL_TESTS})


if __name__ == "__main__":
    print(" ".join(files()))

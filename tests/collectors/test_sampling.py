"""The host-sample parsers of collectors/parsers/sampling.py on real vmstat and mpstat output.

Every file in tests/collectors/data/sampling was written by the tool itself (its README
names the machine, the date and the command). The broken inputs are made here from those
files: emptied, without their header, cut in the middle of a line.
"""

from pathlib import Path

import pytest

from collectors.parsers.sampling import (
    MPSTAT_COLUMNS,
    VMSTAT_COLUMNS,
    average,
    average_per_cpu,
    busiest_cpu,
    parse_mpstat,
    parse_vmstat,
)

DATA = Path(__file__).resolve().parent / "data" / "sampling"


def read(name: str) -> str:
    return (DATA / name).read_text()


# --- vmstat ---------------------------------------------------------------------------------


def test_vmstat_gives_one_sample_a_second_without_the_since_boot_line():
    samples = parse_vmstat(read("vmstat-n-1-4.txt"))

    # `vmstat -n 1 4` prints four lines; the first averages since boot (us 22, cs 1260).
    assert samples == [
        {"r": 1, "b": 0, "in": 139, "cs": 229, "us": 0, "sy": 1, "id": 100, "wa": 0, "st": 0},
        {"r": 1, "b": 0, "in": 219, "cs": 375, "us": 3, "sy": 2, "id": 96, "wa": 0, "st": 0},
        {"r": 2, "b": 0, "in": 105, "cs": 218, "us": 0, "sy": 0, "id": 100, "wa": 0, "st": 0},
    ]


def test_vmstat_keeps_only_the_columns_a_step_needs():
    [first, *_] = parse_vmstat(read("vmstat-n-1-4.txt"))

    assert tuple(first) == VMSTAT_COLUMNS
    assert "free" not in first and "swpd" not in first


def test_vmstat_on_a_busy_host_shows_the_run_queue_and_user_time():
    samples = parse_vmstat(read("vmstat-n-1-4-cpu1-busy.txt"))

    assert [s["r"] for s in samples] == [2, 2, 2]
    assert [s["us"] for s in samples] == [50, 58, 57]
    assert [s["cs"] for s in samples] == [313, 6325, 8739]


def test_the_mean_of_a_vmstat_series_is_rounded_per_column():
    means = average(parse_vmstat(read("vmstat-n-1-4.txt")))

    assert means == {
        "r": 1.33,
        "b": 0.0,
        "in": 154.33,
        "cs": 274.0,
        "us": 1.0,
        "sy": 1.0,
        "id": 98.67,
        "wa": 0.0,
        "st": 0.0,
    }


def test_a_vmstat_cut_in_the_middle_of_a_line_keeps_the_whole_lines():
    text = read("vmstat-n-1-4-cpu1-busy.txt")
    cut = text[: text.rindex("57  5") + 3]  # the last line loses its last columns

    samples = parse_vmstat(cut)

    assert [s["us"] for s in samples] == [50, 58]


def test_a_vmstat_stopped_before_its_first_second_has_no_samples():
    text = read("vmstat-n-1-4.txt")
    only_since_boot = "\n".join(text.splitlines()[:3])

    assert parse_vmstat(only_since_boot) == []
    assert average(parse_vmstat(only_since_boot)) == {}


@pytest.mark.parametrize(
    "text",
    [
        "",
        "\n\n",
        # The header lines dropped: numbers alone cannot be named.
        "\n".join(read("vmstat-n-1-4.txt").splitlines()[2:]),
        # Another tool's output.
        read("mpstat-all-1-3.txt"),
        "sh: 1: vmstat: not found\n",
    ],
    ids=["empty", "blank", "no-header", "mpstat", "not-installed"],
)
def test_vmstat_without_its_header_is_refused(text):
    with pytest.raises(ValueError, match="no vmstat header"):
        parse_vmstat(text)


def test_vmstat_skips_lines_that_are_not_numbers():
    text = read("vmstat-n-1-4.txt").replace(" 2  0      0", " x  0      0")

    samples = parse_vmstat(text)

    assert [s["in"] for s in samples] == [139, 219]


# --- mpstat ---------------------------------------------------------------------------------


def test_mpstat_gives_one_entry_a_second_for_the_host_and_each_cpu():
    series = parse_mpstat(read("mpstat-all-1-3.txt"))

    # Three one-second blocks; the closing Average: block is left out.
    assert len(series) == 3
    assert [set(entry) for entry in series] == [{"all", "0", "1"}] * 3
    assert series[0]["all"] == {
        "usr": 0.0,
        "nice": 0.0,
        "sys": 1.52,
        "iowait": 0.0,
        "irq": 0.0,
        "soft": 0.0,
        "steal": 0.0,
        "guest": 0.0,
        "gnice": 0.0,
        "idle": 98.48,
    }
    assert series[0]["1"]["sys"] == 2.0 and series[0]["1"]["idle"] == 98.0
    assert series[2]["0"]["idle"] == 100.0


def test_mpstat_names_its_columns_without_the_percent_sign():
    series = parse_mpstat(read("mpstat-all-1-3.txt"))

    assert tuple(series[0]["0"]) == MPSTAT_COLUMNS


def test_mpstat_stopped_mid_run_keeps_the_seconds_it_printed():
    text = read("mpstat-all-1-5-killed.txt")
    assert "Average:" not in text  # killed by timeout(1): mpstat never closed its run

    series = parse_mpstat(text)

    assert len(series) == 2
    assert series[1]["all"]["sys"] == 0.5
    assert series[1]["1"]["idle"] == 99.0


def test_mpstat_cut_in_the_middle_of_a_block_keeps_the_complete_lines():
    text = read("mpstat-all-1-3.txt")
    # Cut inside the second block's CPU 1 line, as a killed connection leaves it.
    cut = text[: text.index("08:56:36       1") + 30]

    series = parse_mpstat(cut)

    assert len(series) == 2
    assert set(series[0]) == {"all", "0", "1"}
    assert set(series[1]) == {"all", "0"}


def test_mpstat_in_a_12_hour_locale_reads_the_two_word_time_stamp():
    # Derived, not captured: this machine has no 12-hour locale (see the data README), so the
    # 24-hour capture is given the " AM" that such a locale adds after each time stamp.
    text = read("mpstat-all-1-3.txt")
    twelve_hour = "\n".join(
        line.replace(line[:8], line[:8] + " AM", 1) if line[:2] == "08" else line
        for line in text.splitlines()
    )

    assert parse_mpstat(twelve_hour) == parse_mpstat(text)


@pytest.mark.parametrize(
    "text",
    [
        "",
        # The banner alone: mpstat stopped before its first header.
        read("mpstat-all-1-3.txt").splitlines()[0] + "\n",
        # Every header line dropped.
        "\n".join(line for line in read("mpstat-all-1-3.txt").splitlines() if "%usr" not in line),
        read("vmstat-n-1-4.txt"),
        "sh: 1: mpstat: not found\n",
    ],
    ids=["empty", "banner-only", "no-header", "vmstat", "not-installed"],
)
def test_mpstat_without_its_header_is_refused(text):
    with pytest.raises(ValueError, match="no mpstat header"):
        parse_mpstat(text)


def test_mpstat_skips_a_line_whose_numbers_are_not_numbers():
    text = read("mpstat-all-1-3.txt").replace(
        "08:56:35       0    0.00    0.00    1.02", "08:56:35       0    0.00    0.00    n/a", 1
    )

    series = parse_mpstat(text)

    assert set(series[0]) == {"all", "1"}
    assert len(series) == 3


def test_the_mean_per_cpu_of_a_series_is_close_to_mpstats_own_average():
    text = read("mpstat-all-1-3-cpu1-busy.txt")

    means = average_per_cpu(parse_mpstat(text))

    own = {}
    for line in text.splitlines():
        words = line.split()
        if words[:1] == ["Average:"] and words[1] != "CPU":
            own[words[1]] = {"usr": float(words[2]), "idle": float(words[-1])}
    assert set(means) == set(own) == {"all", "0", "1"}
    for cpu in own:
        # mpstat weighs each second by its ticks; a plain mean of the seconds is close.
        assert means[cpu]["usr"] == pytest.approx(own[cpu]["usr"], abs=0.5)
        assert means[cpu]["idle"] == pytest.approx(own[cpu]["idle"], abs=0.5)
    assert means["1"]["usr"] == 99.33
    assert means["1"]["idle"] == 0.0


def test_the_busiest_cpu_is_the_one_the_busy_loop_was_pinned_to():
    per_cpu = average_per_cpu(parse_mpstat(read("mpstat-all-1-3-cpu1-busy.txt")))

    # The host's mean says 72 % busy; CPU 1 alone was saturated.
    assert busiest_cpu(per_cpu) == ("1", 100.0)
    assert 100 - per_cpu["all"]["idle"] < 80


def test_the_busiest_cpu_of_an_idle_host_is_still_named():
    per_cpu = average_per_cpu(parse_mpstat(read("mpstat-all-1-3.txt")))

    assert busiest_cpu(per_cpu) == ("1", 1.0)


def test_equally_busy_cpus_give_the_lowest_numbered_one():
    per_cpu = {
        "all": {"idle": 50.0},
        "10": {"idle": 40.0},
        "2": {"idle": 40.0},
        "0": {"idle": 70.0},
    }

    assert busiest_cpu(per_cpu) == ("2", 60.0)


def test_no_busiest_cpu_without_per_cpu_lines():
    per_cpu = average_per_cpu(parse_mpstat(read("mpstat-all-1-3.txt")))

    assert busiest_cpu({"all": per_cpu["all"]}) is None
    assert busiest_cpu({}) is None
    assert average_per_cpu([]) == {}


def test_the_sampling_parsers_take_bytes_and_text_alike():
    vmstat, mpstat = DATA / "vmstat-n-1-4.txt", DATA / "mpstat-all-1-3.txt"
    assert parse_vmstat(vmstat.read_bytes()) == parse_vmstat(vmstat.read_text())
    assert parse_mpstat(mpstat.read_bytes()) == parse_mpstat(mpstat.read_text())

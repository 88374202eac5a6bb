"""collectors.stacks: folding perf script output as stackcollapse-perf.pl does, the folded
formats of other profilers, and the shares, differential and merging built on them.

Where the inputs come from:
- the `perf script` outputs of FlameGraph's test suite and its published results
  (shared/fixtures/profiles and its expected/), read in place;
- FlameGraph's own stackcollapse-perf.pl (shared/tools/flamegraph), run on the same inputs
  when perl is here, for the options without published results and for tricky lines;
- outputs captured on this machine: `perf record -g` + `perf script` (perf 6.1) and
  `py-spy record --format raw` (py-spy 0.4.3) of a small Python loop, excerpts inline below;
- hand-written only where no real source exists here (async-profiler cannot be installed:
  its lines follow its dumpCollapsed and FrameName), and for hostile input.
"""

import gzip
import io
import os
import random
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from collectors.stacks import (
    EMPTY_STACK,
    OTHER,
    OTHER_EVENT,
    OUTSIDE_SAMPLE,
    UNRECOGNIZED,
    UNTERMINATED,
    FoldedProfile,
    PerfScriptFolder,
    compare_profiles,
    fold_perf_script,
    fold_perf_script_stream,
    function_shares,
    merge_small_frames,
    parse_async_profiler,
    parse_folded,
    parse_py_spy,
    stack_percentages,
)
from tests.budget import within_a_second
from tests.conftest import require_real_tool

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = Path(os.environ.get("PERFCASE_FIXTURES_DIR") or ROOT.parent / "shared" / "fixtures")
PROFILES = FIXTURES / "profiles"
EXPECTED = PROFILES / "expected"
STACKCOLLAPSE = ROOT.parent / "shared" / "tools" / "flamegraph" / "stackcollapse-perf.pl"

# The published results, as FlameGraph's test.sh made them: name suffix -> our options.
VARIANTS = {
    "all": {"kernel": True, "jit": True},
    "kernel": {"kernel": True},
    "pid": {"pid": True},
}
PERF_SCRIPTS = sorted(PROFILES.glob("perf-*.txt"))
PUBLISHED = [
    pytest.param(path, variant, id=f"{path.stem}-{variant}")
    for path in PERF_SCRIPTS
    for variant in VARIANTS
]
# Every fixture, the large one too, for comparing with the script itself.
ALL_FIXTURES = [*PERF_SCRIPTS, PROFILES / "example-perf-stacks.txt.gz"]
# The script's options that have no published results (and --pid, see below).
SCRIPT_OPTIONS = {"default": [], "tid": ["--tid"], "jit": ["--jit"], "pid": ["--pid"]}


def read_fixture(path: Path) -> bytes:
    data = path.read_bytes()
    return gzip.decompress(data) if path.suffix == ".gz" else data


def expected_lines(path: Path, variant: str) -> list[str]:
    # Split on "\n" only, as Perl prints: splitlines would also split at \r, \v, \x1c...
    text = (EXPECTED / f"{path.stem}-collapsed-{variant}.txt").read_bytes().decode()
    return text.removesuffix("\n").split("\n") if text else []


def options_for(arguments: list[str]) -> dict[str, bool]:
    return {argument.lstrip("-"): True for argument in arguments}


def run_stackcollapse(data: bytes, arguments: list[str]) -> bytes:
    """What FlameGraph's stackcollapse-perf.pl prints for `data`."""
    if shutil.which("perl") is None:
        require_real_tool("perl is not installed: stackcollapse-perf.pl cannot run")
    completed = subprocess.run(
        ["perl", str(STACKCOLLAPSE), *arguments],
        input=data,
        capture_output=True,
        check=True,
        timeout=60,
    )
    return completed.stdout


def as_current_script_tidies_java(lines: list[str]) -> list[str]:
    """Published --pid results as today's script prints them: since FlameGraph e54f142 (Oct
    2017) a process named java* (here "java-PID") has its Java names tidied (s/^L// on names
    with a "/"), but the --pid results were last made before, when only "java" was. The
    tidying only drops that "L", so redoing it and folding again gives today's output."""
    weights: dict[str, int] = {}
    for line in lines:
        stack, _, count = line.rpartition(" ")
        process, *frames = stack.split(";")
        if process.startswith("java"):
            frames = [f[1:] if f.startswith("L") and "/" in f else f for f in frames]
        stack = ";".join([process, *frames])
        weights[stack] = weights.get(stack, 0) + int(count)
    ordered = sorted(weights, key=lambda stack: stack.encode())
    return [f"{stack} {weights[stack]}" for stack in ordered]


# --- the published results of FlameGraph's tests ---------------------------------------------


def test_it_finds_the_fixtures_and_their_three_published_results():
    assert len(PERF_SCRIPTS) >= 13, f"no perf script fixtures in {PROFILES}"
    for path in PERF_SCRIPTS:
        for variant in VARIANTS:
            assert (EXPECTED / f"{path.stem}-collapsed-{variant}.txt").is_file()


@pytest.mark.parametrize(("path", "variant"), PUBLISHED)
def test_it_folds_each_fixture_as_the_published_results_say(path, variant):
    # The published --pid results of the four Java fixtures predate e54f142 (see
    # as_current_script_tidies_java): legacy_java reproduces them; for every other result
    # it changes nothing.
    profile = fold_perf_script(read_fixture(path), **VARIANTS[variant], legacy_java=True)

    assert list(profile.lines()) == expected_lines(path, variant)


@pytest.mark.parametrize(("path", "variant"), PUBLISHED)
def test_it_folds_each_fixture_as_todays_script_does(path, variant):
    expected = expected_lines(path, variant)
    if variant == "pid":
        expected = as_current_script_tidies_java(expected)

    profile = fold_perf_script(read_fixture(path), **VARIANTS[variant])

    assert list(profile.lines()) == expected


def test_it_folds_the_java_fixtures_differently_from_the_published_pid_results():
    path = PROFILES / "perf-java-stacks-02.txt"

    today = fold_perf_script(read_fixture(path), pid=True)
    published = fold_perf_script(read_fixture(path), pid=True, legacy_java=True)

    assert "java-?;start_thread;JavaMain" in next(iter(today.weights))
    assert any(";java/io/PrintStream:::print;" in stack for stack in today.weights)
    assert any(";Ljava/io/PrintStream:::print;" in stack for stack in published.weights)


@pytest.mark.parametrize(
    ("path", "option"),
    [
        pytest.param(path, option, id=f"{path.name.split('.')[0]}-{option}")
        for path in ALL_FIXTURES
        for option in SCRIPT_OPTIONS
    ],
)
def test_it_prints_the_same_bytes_as_stackcollapse_perf(path, option):
    data = read_fixture(path)
    arguments = SCRIPT_OPTIONS[option]

    ours = fold_perf_script_stream(io.BytesIO(data), **options_for(arguments))

    assert ours.text().encode() == run_stackcollapse(data, arguments)


def test_its_command_line_prints_what_the_script_prints():
    path = PROFILES / "perf-iperf-stacks-pidtid-01.txt"

    completed = subprocess.run(
        [sys.executable, "-m", "collectors.stacks", "--all", str(path)],
        capture_output=True,
        cwd=ROOT,
        timeout=60,
    )
    refused = subprocess.run(
        [sys.executable, "-m", "collectors.stacks", "--inline", str(path)],
        capture_output=True,
        cwd=ROOT,
        timeout=60,
    )

    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.decode().split("\n")[:-1] == expected_lines(path, "all")
    assert refused.returncode == 2
    assert b"unknown option: --inline" in refused.stderr


# --- headers, periods and frames, line by line ------------------------------------------------

# Real: the head of `perf script` on this machine (perf 6.1, cpu-clock, 499 Hz).
MODERN_PERF = """\
bash 17478  5025.048568:    2004008 cpu-clock:ppp: \n\
\tffffffff816d0e5b path_openat+0x7b ([kernel.kallsyms])
\tffffffff816d2183 do_filp_open+0xc3 ([kernel.kallsyms])
\t           fd001 __open64_nocancel+0x41 (/usr/lib/x86_64-linux-gnu/libc.so.6)
\t           3238c setlocale+0x11c (/usr/lib/x86_64-linux-gnu/libc.so.6)

bash 17478  5025.068530:    2004008 cpu-clock:ppp: \n\
\tffffffff817bc1b2 ext4_file_getattr+0x62 ([kernel.kallsyms])
\t           3238c setlocale+0x11c (/usr/lib/x86_64-linux-gnu/libc.so.6)

bash 17487  5025.070531:    2004008 cpu-clock:ppp: \n\
\tffffffff817bc1b2 ext4_file_getattr+0x62 ([kernel.kallsyms])
\t           3238c setlocale+0x11c (/usr/lib/x86_64-linux-gnu/libc.so.6)

"""


def test_it_weighs_each_sample_by_the_period_perf_printed():
    profile = fold_perf_script(MODERN_PERF)

    assert profile.weights == {
        "bash;setlocale;__open64_nocancel;do_filp_open;path_openat": 2004008,
        "bash;setlocale;ext4_file_getattr": 4008016,
    }
    assert profile.samples == {
        "bash;setlocale;__open64_nocancel;do_filp_open;path_openat": 1,
        "bash;setlocale;ext4_file_getattr": 2,
    }
    assert (profile.total_weight, profile.total_samples) == (6012024, 3)
    assert profile.event == "cpu-clock:ppp"
    assert profile.processes == {"bash": 3}
    assert profile.tids == {"17478": 2, "17487": 1}
    assert profile.pids == {}  # perf printed one number: the thread's


def test_it_counts_samples_apart_from_their_periods_on_a_fixture():
    data = read_fixture(PROFILES / "perf-rust-Yamakaky-dcpu.txt")
    headers = re.findall(rb"^\S.*?: +(\d+) cycles:u: *$", data, re.M)

    profile = fold_perf_script(data)

    assert profile.total_samples == len(headers) == 58
    assert profile.skipped == {}
    assert profile.total_weight == sum(int(period) for period in headers)
    assert profile.total_weight != profile.total_samples
    assert profile.weights != profile.samples


def test_it_weighs_a_sample_without_a_period_or_with_period_0_as_1():
    text = (
        "app 10 [000] 1.0: cycles: \n\tf0 one (/bin/app)\n\n"
        "app 10 [000] 2.0: 0 cycles: \n\tf0 one (/bin/app)\n\n"
        "app 10 [000] 3.0: 7 cycles: \n\tf0 one (/bin/app)\n\n"
    )

    profile = fold_perf_script(text)

    assert profile.weights == {"app;one": 9}
    assert profile.samples == {"app;one": 3}


def test_it_keeps_only_the_first_event_type_seen():
    data = read_fixture(PROFILES / "perf-cycles-instructions-01.txt")

    profile = fold_perf_script(data)
    cycles = fold_perf_script(data, event="cycles")

    assert profile.event == "instructions"
    assert profile.skipped[OTHER_EVENT] > 0
    assert cycles.event == "cycles"
    assert cycles.total_samples + profile.total_samples == (
        profile.skipped[OTHER_EVENT] + cycles.skipped[OTHER_EVENT]
    )


def test_it_names_processes_with_pid_and_tid_as_asked():
    header = "V8 WorkerThread 24636/25607 [000] 94564.109216: 100 cycles: \n"
    text = header + "\t7f0 run (/usr/bin/node)\n\n"

    assert list(fold_perf_script(text).weights) == ["V8_WorkerThread;run"]
    assert list(fold_perf_script(text, pid=True).weights) == ["V8_WorkerThread-24636;run"]
    assert list(fold_perf_script(text, tid=True).weights) == ["V8_WorkerThread-24636/25607;run"]
    assert fold_perf_script(text).pids == {"24636": 1}


def test_it_takes_a_zero_thread_id_as_no_thread_id_like_perl():
    # Perl's `if (not $tid)` is true for "0": swapper's 0/0 becomes PID "?" and TID 0.
    text = "swapper 0/0 [000] 1.0: 1 cycles: \n\tffff native_safe_halt ([kernel.kallsyms])\n\n"

    profile = fold_perf_script(text, tid=True)

    assert list(profile.weights) == ["swapper-?/0;native_safe_halt"]


def test_it_tidies_symbols_as_the_script_does():
    text = "\n".join(
        [
            "java 4711/4712 [001] 1.0: 1 cycles:",
            "\t7f1 Lcom/example/Handler;.handle(Ljava/lang/String;)V (/tmp/perf-4711.map)",
            "\t7f2 net/http.(*Client).Do (/usr/local/bin/server)",
            "\t7f3 std::vector<int>::push_back(int const&)+0x1f (/usr/lib/libfoo.so)",
            "\t7f4 ns::(anonymous namespace)::worker(void*) (/usr/lib/libbar.so)",
            "\t7f5 [unknown] (/usr/lib/x86_64-linux-gnu/libc.so.6)",
            "\t7f6 [unknown] ([unknown])",
            "\t7f7 outer->inner1->inner2 (/usr/bin/app)",
            "\t7f8 say\"hi';there (/usr/bin/app)",
            "\t7f9 (/usr/bin/app)+0x10 (/usr/bin/app)",
            "\tffffffff81 tcp_sendmsg+0x2a ([kernel.kallsyms])",
            "",
            "",
        ]
    )

    profile = fold_perf_script(text, kernel=True, jit=True)

    assert list(profile.weights) == [
        "java;tcp_sendmsg_[k];sayhi:there;outer;inner1_[i];inner2_[i];[unknown];[libc.so.6];"
        "ns::(anonymous namespace)::worker;std::vector<int>::push_back;net/http.(*Client).Do;"
        "com/example/Handler:.handle_[j]"
    ]


def test_it_backtracks_into_the_address_as_perls_regex_does():
    # /^\s*(\w+)\s*(.+) \((.*)\)/ on "abc (x)": the function is "c", the address "ab".
    text = "app 1 1.0: 1 cycles:\n\tabc (lib)\n\tf0  (lib)\n\tf1 main (app) trailing\n\n"

    assert list(fold_perf_script(text).weights) == ["app;main; ;c"]


def test_it_joins_frames_between_two_headers_into_one_stack_as_perl_does():
    text = "ab 1 1.0: 1 cycles:\n\tf0 one (x)\ncd 2 2.0: 5 cycles:\n\tf0 two (x)\n\n"

    profile = fold_perf_script(text)

    assert profile.weights == {"cd;two;one": 5}


def test_it_reads_a_one_character_process_name_as_perl_does():
    # (\S.+?) takes two characters at least: the comm runs on to the next "\s+\d+\s".
    profile = fold_perf_script("X 1 1.0: 7 cycles:\n\tf0 one (x)\n\n")

    assert profile.weights == {"X_1_1.0:;one": 7}


def test_it_sorts_stacks_by_their_bytes_as_perl_sort_does():
    samples = [b"z\xc3\xa9", b"zz", b"z\xff", b"Z", b"z_"]
    data = b"".join(b"app 1 1.0: 1 cycles:\n\tf0 " + s + b" (x)\n\n" for s in samples)

    profile = fold_perf_script(data)

    assert [line.encode("utf-8", "surrogateescape") for line in profile.lines()] == [
        b"app;Z 1",
        b"app;z_ 1",
        b"app;zz 1",
        b"app;z\xc3\xa9 1",
        b"app;z\xff 1",
    ]
    assert "app;z\xe9" in profile.weights  # UTF-8 names come out as text


def test_it_counts_what_it_skipped_and_why():
    text = (
        "\tf0 orphan (x)\n"
        "# a comment\n"
        "app 1 1.0: 1 cycles:\n\tf0 one (x)\nthis is not perf\n\n"
        "app 1 2.0: 1 instructions:\n\tf0 two (x)\n\n"
        "app 1 3.0: 1 cycles:\n\tf0 three (x)\n"
    )

    profile = fold_perf_script(text)

    assert profile.weights == {"app;one": 1}
    assert profile.skipped == {
        OUTSIDE_SAMPLE: 1,
        UNRECOGNIZED: 1,
        OTHER_EVENT: 1,
        UNTERMINATED: 1,
    }
    assert profile.problems == ("line 5: unrecognized line: 'this is not perf'",)


TRICKY = b"""\
# cmdline : /usr/bin/perf record -g -- ./app
a  123 [000] 1.0: 5 cycles:
\tabc (lib)
\tf0  (lib)

0 1 2 3 4.0: 7 cycles:
\tf0 x+0xzz (m)
\tf0 y+0x1f+0x2a (m)

kworker/0:1 9 [000] 5.0: 2 cycles:
\tf0 a->->b-> (m)
\tf0 ->c (vmlinux)
\tf0 [unknown] (/tmp/perf-9.map)

comm 12 [000] 6.0: sched:sched_switch: prev_comm=x
\tf0 sched (m)

X 1 1.0:   3   cycles:  \r
\tf0 crlf (m)\r

java_tool 5/6 [000] 7.0: 1 cycles:
\tf0 Lorg/x/Y;.z()V (m)
\tf0 "quoted";name (m)

java 5/6 [000] 7.0: 1 instructions:
\tf0 filtered (m)

\xe9t\xe9 7 8.0: 1 cycles:
\tf0 caf\xc3\xa9 (\xff)

"""


@pytest.mark.parametrize("arguments", [[], ["--pid"], ["--tid"], ["--all"]], ids=str)
def test_it_folds_tricky_lines_exactly_as_the_script_does(arguments):
    options = options_for(arguments)
    if options.pop("all", False):
        options.update(kernel=True, jit=True)

    ours = fold_perf_script(TRICKY, **options)

    expected = run_stackcollapse(TRICKY, arguments)
    assert ours.text().encode("utf-8", "surrogateescape") == expected


# The parts of a line shaped like perf script's, each with its choices "|"-separated: every
# oddity above mixed in (spaces and digits in comms, odd PIDs and periods, events with and
# without a period, white space Perl does not count as such, offsets, arguments, inlining).
HEADER_PARTS = [
    b"java|javac|x|V8 WorkerThread|kworker/0:1|0 1|\xe9|\xc3\xa9|caf\xc3\xa9|a:b|(sd-pam)",
    b" |  |\t| \x0b",
    b"0|1|00|4711|99999999999999999999999",
    b"|/0|/4712|/|//5",
    b" |\t|x |",
    b"|[000] ",
    b"1.5: |7628263.042515: |1.0:",
    b"|0 |  10101010   |a ",
    b"cycles:|cycles:u:|instructions:|sched:sched_switch: prev=x|cycles::|123:",
    b"| | \r",
]
FRAME_PARTS = [
    b"\t|    |",
    b"ffffffff8104f45a|abc|a|_x1|",
    b" |  |\t||\xa0|\x85",
    b"main|foo(int, char)|net/http.(*Client).Do|[unknown]|a->b->c|->x|a->|Lorg/x/Y;.z()V|"
    b"say\"hi';x|(anon)|| |ns::(anonymous namespace)::f(int)|x_[i]|f (g)|\xff|+0x12",
    b"|+0x1f|+0xZZ|+0x1f+0x2",
    b" |  |",
    b"([kernel.kallsyms])|(/usr/lib/libc.so.6)|(/tmp/perf-123.map)|([unknown])|"
    b"(/boot/vmlinux)|(/x (deleted))|()|(a) tail|",
]
ODD_LINES = [b"# c", b"garbage", b"\r", b" ", b"\0"]


def perf_like(seed: int, lines: int = 2000) -> bytes:
    """Hand-made at random from the parts above."""
    generator = random.Random(seed)

    def line(parts: list[bytes]) -> bytes:
        return b"".join(generator.choice(part.split(b"|")) for part in parts)

    out = []
    for _ in range(lines):
        draw = generator.random()
        if draw < 0.15:
            out.append(line(HEADER_PARTS))
        elif draw < 0.27:
            out.append(b"")
        elif draw < 0.29:
            out.append(generator.choice(ODD_LINES))
        else:
            out.append(line(FRAME_PARTS))
    return b"\n".join(out) + b"\n"


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("arguments", [[], ["--pid"], ["--tid"], ["--all"]], ids=str)
def test_it_folds_random_perf_like_lines_exactly_as_the_script_does(seed, arguments):
    data = perf_like(seed)
    options = options_for(arguments)
    if options.pop("all", False):
        options.update(kernel=True, jit=True)

    from_bytes = fold_perf_script(data, **options)
    from_text = fold_perf_script(data.decode("utf-8", "surrogateescape"), **options)

    expected = run_stackcollapse(data, arguments)
    assert from_bytes.text().encode("utf-8", "surrogateescape") == expected
    assert from_text.text().encode("utf-8", "surrogateescape") == expected
    assert len(from_bytes.weights) > 50


def test_it_folds_lines_given_one_by_one_as_it_folds_the_whole_text():
    data = read_fixture(PROFILES / "perf-java-stacks-01.txt")
    whole = fold_perf_script(data, pid=True)

    by_line = fold_perf_script(io.BytesIO(data), pid=True)  # bytes lines with "\n"
    as_text = fold_perf_script(data.decode().splitlines(keepends=True), pid=True)
    folder = PerfScriptFolder(pid=True, binary=True)
    cut = data.index(b"\n", 1000) + 1  # whole lines to each feed
    for piece in (data[:cut], data[cut:]):
        folder.feed(piece.decode("latin-1").removesuffix("\n").split("\n"))

    assert by_line == whole
    assert as_text == whole
    assert folder.result() == whole


# --- bad and hostile input --------------------------------------------------------------------


def test_it_refuses_a_perf_script_without_a_sample_naming_the_line():
    with pytest.raises(ValueError, match=r"no sample .* line 1: unrecognized line: 'a;b;c 5'"):
        fold_perf_script("a;b;c 5\na;b 3\n")


def test_it_gives_an_empty_profile_for_empty_input():
    profile = fold_perf_script("")

    assert profile.weights == {}
    assert profile.text() == ""


def hostile_inputs() -> list[bytes]:
    generator = random.Random(20240501)
    return [
        bytes(generator.getrandbits(8) for _ in range(200_000)),
        b"\0" * 10_000 + b"\n\0app 1 1.0: 1 cycles:\0\n\t\0f0 x (\0)\n\n",
        b"a" + b" " * 200_000 + b"1 \n",
        b"x 1" + b"1" * 100_000 + b"a\n\tf0 y (z)\n\n",  # (\d+)*: exponential in Python re
        b"app 1 1.0: " + b"1" * 100_000 + b"x cycles:\n",
        b"app 1 1.0: " + b"9" * 5_000 + b" cycles:\n\tf0 f (m)\n\n",
        b"app 1 1.0: 1 cycles:\n\t" + b"f" * 1_000_000 + b" " + b"(" * 100_000 + b")\n\n",
        b"app 1 1.0: 1 cycles:\n\tf0 " + b"+0x" * 100_000 + b" (m)\n\n",
        b"app 1 1.0: 1 cycles:\n\tf0 " + b".(" * 100_000 + b" (m)\n\n",
        b": 1 " * 50_000 + b"\n" + b"\t" * 100_000 + b"\n",
    ]


@pytest.mark.parametrize("data", hostile_inputs(), ids=lambda data: repr(data[:16]))
def test_it_survives_hostile_perf_script_input_quickly(data):
    with within_a_second("folding hostile input", budget=5.0):
        try:
            profile = fold_perf_script(data)
        except ValueError as error:
            assert "line" in str(error)
        else:
            assert isinstance(profile, FoldedProfile)
            profile.text()


@pytest.mark.parametrize("data", hostile_inputs(), ids=lambda data: repr(data[:16]))
def test_it_reads_hostile_folded_input_or_refuses_it_with_a_value_error(data):
    for parse in (parse_folded, parse_async_profiler, parse_py_spy):
        with within_a_second(f"{parse.__name__} on hostile input", budget=5.0):
            try:
                parse(data).text()
            except ValueError as error:
                assert re.match(r"line \d+: ", str(error))


def test_it_folds_a_huge_count_as_perl_does_into_a_double():
    text = "app 1 1.0: " + "9" * 5000 + " cycles:\n\tf0 f (m)\n\n"

    assert fold_perf_script(text).text() == "app;f Inf\n"
    assert fold_perf_script(text.replace("9" * 5000, "1" * 21)).text() == (
        "app;f 1.11111111111111e+20\n"
    )


# --- folded formats ---------------------------------------------------------------------------

# Real: `py-spy record --format raw -r 200` of a small loop (py-spy 0.4.3); " 1" is a sample
# with no Python frame.
PY_SPY_RAW = """\
<module> (spin.py:13);main (spin.py:12);middle (spin.py:8);leaf (spin.py:5) 198
 1
<module> (spin.py:13);main (spin.py:12);middle (spin.py:8);leaf (spin.py:4) 114
"""
# Real: the same with --threads: a thread frame at the root, with spaces and a colon.
PY_SPY_THREADS = """\
thread (17630): MainThread 5
thread (17630);<module> (spin.py:13);main (spin.py:12);middle (spin.py:8);leaf (spin.py:5) 134
thread (17630): MainThread;<module> (spin.py:13);main (spin.py:12);leaf (spin.py:4) 33
"""
# Hand-written after async-profiler's dumpCollapsed and FrameName: --threads frames
# ("[name tid=N]"), --annotate suffixes, `;` of signatures written "|", a trace with no
# frame (the count alone), frames in no order.
ASYNC_PROFILER = """\
[main tid=4711];java/lang/Thread.run_[j];com/example/Server.handle_[j];java/util/HashMap.get_[i] 40
[main tid=4711];java/lang/Thread.run_[j];com/example/Server.parse(Ljava/lang/String|)V_[0] 25
[GC Thread#0 tid=4720];start_thread;GCTaskThread::run;G1ParEvacuateFollowersClosure::do_void 30
[main tid=4711];java/lang/Thread.run_[j];com/example/Server.handle_[j] 5
3
"""


def test_it_reads_py_spy_raw_output_with_spaces_inside_frames():
    profile = parse_py_spy(PY_SPY_RAW)

    assert profile.source == "py-spy"
    assert profile.weights == {
        "<module> (spin.py:13);main (spin.py:12);middle (spin.py:8);leaf (spin.py:4)": 114,
        "<module> (spin.py:13);main (spin.py:12);middle (spin.py:8);leaf (spin.py:5)": 198,
    }
    assert profile.samples == profile.weights
    assert profile.skipped == {EMPTY_STACK: 1}
    assert parse_py_spy(PY_SPY_THREADS).weights["thread (17630): MainThread"] == 5


def test_it_reads_async_profiler_collapsed_output():
    profile = parse_async_profiler(ASYNC_PROFILER)

    assert profile.source == "async-profiler"
    assert profile.total_samples == 100
    assert list(profile.weights)[0].startswith("[GC Thread#0 tid=4720];")
    assert profile.skipped == {EMPTY_STACK: 1}
    shares = {share.name: share for share in function_shares(profile)}
    assert shares["java/lang/Thread.run_[j]"].total_percent == 70.0
    assert shares["java/util/HashMap.get_[i]"].self_percent == 40.0


def test_it_reads_back_what_it_folded():
    folded = fold_perf_script(read_fixture(PROFILES / "perf-vertx-stacks-01.txt"), pid=True)

    again = parse_folded(folded.text())

    assert again.weights == folded.weights
    assert again.text() == folded.text()


def test_it_takes_a_fractional_count_as_a_weight_only():
    profile = parse_folded("a;b 1.5\na;c 2.\na;b 1\n")

    assert profile.weights == {"a;b": 2.5, "a;c": 2.0}
    assert profile.samples == {}
    assert not profile.has_samples
    assert profile.text() == "a;b 2.5\na;c 2\n"
    with pytest.raises(ValueError, match="weights only"):
        function_shares(profile, by="samples")


def test_it_sums_repeated_stacks_and_sorts_them_as_perl_does():
    profile = parse_folded(b"b;x 1\r\na;y 2\r\n\r\nb;x 3\r\n")

    assert profile.weights == {"a;y": 2, "b;x": 4}
    assert profile.has_samples


@pytest.mark.parametrize(
    ("parse", "text", "message"),
    [
        (parse_folded, "a;b 1\na;b;c\n", r"^line 2: no count; expected 'frame;frame;"),
        (parse_folded, "a;b 1\n\na;b x\n", r"^line 3: the count should be a number such"),
        (parse_folded, "a;b -1\n", r"^line 1: the count should be a number"),
        (parse_folded, "a;b 1e3\n", r"^line 1: the count should be a number"),
        (parse_folded, "a;b 1\na\0b 2\n", r"^line 2: a NUL byte"),
        (parse_folded, "a " + "1" * 50, r"^line 1: the count should be a number"),
        (parse_folded, "a ٣\n", r"^line 1: the count should be a number"),
        (parse_async_profiler, "a;b 1.5\n", r"^line 1: the count should be a whole number"),
        (parse_py_spy, "main (x.py:1) 2\n7\n", r"^line 2: no count"),
        (parse_py_spy, ["a 1", b"b 2"], r"^line 2: expected text, got bytes"),
    ],
)
def test_it_names_the_line_and_what_it_expected_on_bad_folded_input(parse, text, message):
    with pytest.raises(ValueError, match=message):
        parse(text)


# --- shares, the differential, small frames -------------------------------------------------


def folded(text: str) -> FoldedProfile:
    return parse_folded(text)


def test_it_computes_self_and_total_shares_counting_recursion_once():
    profile = folded("main;f;f;f 6\nmain;g 2\nmain 2\n")

    shares = {share.name: share for share in function_shares(profile)}

    assert [share.name for share in function_shares(profile)] == ["main", "f", "g"]
    assert (shares["f"].self_percent, shares["f"].total_percent) == (60.0, 60.0)
    assert (shares["main"].self_count, shares["main"].total_count) == (2, 10)
    assert shares["g"].total_percent == 20.0
    assert sum(share.self_percent for share in shares.values()) == 100.0


def test_it_gives_stack_percentages_by_weight_or_by_samples():
    profile = fold_perf_script(MODERN_PERF)

    by_weight = stack_percentages(profile)
    by_samples = stack_percentages(profile, by="samples")

    assert by_weight["bash;setlocale;ext4_file_getattr"] == pytest.approx(200 / 3)
    assert by_samples["bash;setlocale;ext4_file_getattr"] == pytest.approx(200 / 3)
    assert stack_percentages(folded("")) == {}


def test_it_compares_two_profiles_normalised_to_percentages():
    a = folded("main;parse 10\nmain;handshake;ecdh 10\nmain 80\n")  # total 100
    b = folded("main;parse 10\nmain;handshake;ecdh 490\nmain 500\n")  # total 1000

    deltas = compare_profiles(a, b)

    assert [d.name for d in deltas] == ["ecdh", "main", "parse", "handshake"]
    ecdh = deltas[0]
    assert (ecdh.self_a, ecdh.self_b) == (10.0, 49.0)
    assert (ecdh.total_a, ecdh.total_b) == (10.0, 49.0)
    assert ecdh.self_delta == pytest.approx(39.0)
    assert deltas[1].self_delta == pytest.approx(-30.0)
    assert deltas[2].self_delta == pytest.approx(-9.0)
    assert deltas[3].self_delta == 0 and deltas[3].total_delta == pytest.approx(39.0)


def test_it_compares_functions_found_on_one_side_only():
    deltas = compare_profiles(folded("main;old 1\n"), folded("main;new 3\n"))

    by_name = {d.name: d for d in deltas}
    assert (by_name["old"].self_a, by_name["old"].self_b) == (100.0, 0.0)
    assert (by_name["new"].self_a, by_name["new"].self_b) == (0.0, 100.0)
    assert by_name["main"].total_delta == 0


def test_it_compares_jit_frames_without_their_addresses_when_asked():
    a = folded("java;Interpreter_0x7f00aa 1\n")
    b = folded("java;Interpreter_0x7f00bb 1\n")

    assert len(compare_profiles(a, b)) == 3
    assert [d.name for d in compare_profiles(a, b, strip_hex=True)] == [
        "Interpreter_0x...",
        "java",
    ]


def test_it_merges_frames_below_the_threshold_into_other_keeping_every_width():
    profile = folded("main;big;leaf 90\nmain;tiny1 3\nmain;tiny2 2\nmain;big;small 4\nmain 1\n")

    merged = merge_small_frames(profile, percent=5)

    assert merged.weights == {
        "main": 1,
        f"main;big;{OTHER}": 4,
        "main;big;leaf": 90,
        f"main;{OTHER}": 5,
    }
    assert merged.total_weight == profile.total_weight
    assert merged.samples == merged.weights
    assert merge_small_frames(profile, percent=0).weights == profile.weights


def test_it_merges_a_profile_of_twenty_thousand_stacks_into_a_few():
    generator = random.Random(7)
    lines = []
    for number in range(20_000):
        depth = generator.randint(3, 30)
        frames = ["main", f"worker{number % 4}"] + [
            f"f{generator.randint(0, 50)}" for _ in range(depth)
        ]
        lines.append(f"{';'.join(frames)} {generator.randint(1, 50)}")
    profile = folded("\n".join(lines))
    assert len(profile.weights) > 19_000

    with within_a_second("merging 19,000 stacks' small frames", budget=10.0):
        merged = merge_small_frames(profile, percent=0.5)

    assert len(merged.weights) < 2_000
    assert merged.total_weight == profile.total_weight
    shares = {s.name: s.total_count for s in function_shares(merged)}
    assert shares["worker0"] == sum(w for s, w in profile.weights.items() if ";worker0" in s)


def test_it_refuses_a_negative_threshold_or_an_unknown_measure():
    with pytest.raises(ValueError, match="percent should be 0 or more"):
        merge_small_frames(folded("a 1\n"), percent=-1)
    with pytest.raises(ValueError, match="by should be 'weight' or 'samples'"):
        function_shares(folded("a 1\n"), by="cycles")

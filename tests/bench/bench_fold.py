"""Folding perf script output: collectors.stacks against FlameGraph's stackcollapse-perf.pl.

    python -m tests.bench.bench_fold [--runs 5] [--scale 10]

Decompresses shared/fixtures/profiles/example-perf-stacks.txt.gz (perf script of a whole
machine, 37,000 lines) into a temporary file, then in the same run, alternately, `--runs`
times each:

- Perfcase: `python -m collectors.stacks FILE`, a new interpreter reading the file, as a
  worker would fold a profile it has just fetched (start-up and imports included);
- the yardstick: `perl shared/tools/flamegraph/stackcollapse-perf.pl FILE`, run where it
  lies (never copied).

Each run's wall time is from the spawn to the exit, its peak memory the command's maximum
resident set as GNU time reports it ("n/a" without GNU time). Both print to a file; every
run's output must be byte-identical to the script's. Then the same on the file repeated
`--scale` times (for reading the figures only: there start-up counts for little), unless
--scale is 1.

The medians are compared against the target "at least as fast as stackcollapse-perf.pl" on
the fixture itself. Exits 1 when an output differs or a run fails, 2 when perl is not here;
never for missing the target.
"""

import argparse
import gzip
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SHARED = ROOT.parent / "shared"
FIXTURES = Path(os.environ.get("PERFCASE_FIXTURES_DIR") or SHARED / "fixtures")
EXAMPLE = FIXTURES / "profiles" / "example-perf-stacks.txt.gz"
STACKCOLLAPSE = SHARED / "tools" / "flamegraph" / "stackcollapse-perf.pl"


class BenchError(Exception):
    pass


def gnu_time() -> str | None:
    """GNU time, which reports the peak memory of the command alone (see run_once)."""
    for candidate in ("/usr/bin/time", shutil.which("time")):
        if candidate and os.access(candidate, os.X_OK):
            probe = subprocess.run(
                [candidate, "-f", "%M", "true"], capture_output=True, text=True, timeout=10
            )
            if probe.returncode == 0 and probe.stderr.strip().isdigit():
                return candidate
    return None


def run_once(argv: list[str], output: Path, timer: str | None) -> tuple[float, int | None]:
    """(wall seconds, peak RSS in KB or None) of one run of argv, its stdout into `output`.

    The peak comes from GNU time, which forks the command from its own small process: a
    child of this Python process would report at least this process's own 20 MB, since
    Linux carries the memory of the process a program was forked from into its ru_maxrss."""
    path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    errors = output.with_suffix(".err")
    peak = output.with_suffix(".rss")
    if timer:
        argv = [timer, "-f", "%M", "-o", str(peak), *argv]
    with output.open("wb") as sink, errors.open("wb") as error_sink:
        started = time.perf_counter()
        completed = subprocess.run(
            argv,
            stdout=sink,
            stderr=error_sink,
            cwd=ROOT,
            env={**os.environ, "PYTHONPATH": path},
        )  # no timeout: waiting with one polls in sleeps of up to 50 ms, which would be timed
        wall = time.perf_counter() - started
    if completed.returncode != 0:
        message = errors.read_text(errors="replace").strip()[-500:]
        raise BenchError(f"{' '.join(argv)} exited {completed.returncode}: {message}")
    rss = int(peak.read_text().split()[-1]) if timer else None
    return wall, rss


def compare(name: str, path: Path, runs: int, directory: Path, timer: str | None) -> dict:
    """Time both on one input, alternately; check every output against the script's."""
    size = path.stat().st_size
    with path.open("rb") as stream:
        lines = sum(chunk.count(b"\n") for chunk in iter(lambda: stream.read(1 << 20), b""))
    commands = {
        "perfcase": [sys.executable, "-m", "collectors.stacks", str(path)],
        "perl": ["perl", str(STACKCOLLAPSE), str(path)],
    }
    results: dict[str, dict[str, list]] = {side: {"wall": [], "rss": []} for side in commands}
    reference = directory / f"{name}-perl-0.txt"
    mismatches = []
    for number in range(runs):
        for side, argv in commands.items():
            output = directory / f"{name}-{side}-{number}.txt"
            wall, rss = run_once(argv, output, timer)
            results[side]["wall"].append(wall)
            results[side]["rss"].append(rss)
            print(
                f"  {name:<8} {side:<8} run {number + 1}: {wall * 1000:6.1f} ms, {megabytes(rss)}"
            )
    expected = reference.read_bytes()
    for number in range(runs):
        for side in commands:
            if (directory / f"{name}-{side}-{number}.txt").read_bytes() != expected:
                mismatches.append(f"{name}: {side} run {number + 1} differs from the script's")
    summary = {"name": name, "bytes": size, "lines": lines, "mismatches": mismatches}
    for side, figures in results.items():
        wall = statistics.median(figures["wall"])
        summary[side] = {
            "wall": wall,
            "rss": None if None in figures["rss"] else max(figures["rss"]),
            "mb_per_s": size / 1e6 / wall,
            "lines_per_s": lines / wall,
        }
    summary["stacks"] = reference.read_bytes().count(b"\n")
    return summary


def megabytes(kilobytes: int | None) -> str:
    return "n/a" if kilobytes is None else f"{kilobytes / 1024:.1f} MB"


def report(summary: dict) -> None:
    print(
        f"{summary['name']}: {summary['bytes'] / 1e6:.1f} MB, {summary['lines']:,} lines, "
        f"{summary['stacks']:,} folded stacks"
    )
    for side in ("perfcase", "perl"):
        figures = summary[side]
        print(
            f"  {side:<8} median {figures['wall'] * 1000:7.1f} ms, "
            f"{figures['mb_per_s']:6.1f} MB/s, {figures['lines_per_s'] / 1e6:5.2f} M lines/s, "
            f"peak memory {megabytes(figures['rss'])}"
        )
    ratio = summary["perl"]["wall"] / summary["perfcase"]["wall"]
    print(f"  ratio perl / perfcase: {ratio:.2f}x; outputs identical: {not summary['mismatches']}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5, help="runs of each (default 5)")
    parser.add_argument(
        "--scale",
        type=int,
        default=10,
        help="also fold the fixture repeated this many times, for information (default 10; "
        "1 to skip)",
    )
    args = parser.parse_args(argv)
    if args.runs < 1 or args.scale < 1:
        parser.error("--runs and --scale must be at least 1")
    if shutil.which("perl") is None:
        print("ERROR: perl is not installed: stackcollapse-perf.pl cannot run", file=sys.stderr)
        return 2
    print(
        f"Fold bench: {EXAMPLE.name}, {args.runs} runs each, alternately; {os.cpu_count()} "
        f"CPUs, load average {os.getloadavg()[0]:.2f}; {sys.executable} against "
        f"perl {STACKCOLLAPSE}"
    )
    timer = gnu_time()
    if timer is None:
        print("GNU time is not installed: peak memory will read n/a")
    started = time.monotonic()
    try:
        with tempfile.TemporaryDirectory(prefix="perfcase-bench-fold-") as tmp:
            directory = Path(tmp)
            fixture = directory / "example-perf-stacks.txt"
            data = gzip.decompress(EXAMPLE.read_bytes())
            fixture.write_bytes(data)
            main_run = compare("fixture", fixture, args.runs, directory, timer)
            scaled_run = None
            if args.scale > 1:
                scaled = directory / f"example-perf-stacks-x{args.scale}.txt"
                with scaled.open("wb") as sink:
                    for _ in range(args.scale):
                        sink.write(data)
                runs = max(1, min(args.runs, 3))
                scaled_run = compare(f"x{args.scale}", scaled, runs, directory, timer)
    except (BenchError, OSError, subprocess.SubprocessError) as error:
        print(f"ERROR: {error}", file=sys.stderr)
        return 1

    print()
    report(main_run)
    if scaled_run:
        report(scaled_run)
        print("  (the fixture repeated, for reading the figures only: not the target)")
    ours, theirs = main_run["perfcase"]["wall"], main_run["perl"]["wall"]
    verdict = "PASS" if ours <= theirs else "FAIL"
    print(
        f"{verdict}: target 'at least as fast as stackcollapse-perf.pl' on the fixture: "
        f"{ours * 1000:.1f} ms against {theirs * 1000:.1f} ms (medians), "
        f"{theirs / ours:.2f} times as fast; peak memory "
        f"{megabytes(main_run['perfcase']['rss'])} against {megabytes(main_run['perl']['rss'])}"
    )
    print(f"bench took {time.monotonic() - started:.1f} s")
    mismatches = main_run["mismatches"] + (scaled_run["mismatches"] if scaled_run else [])
    if mismatches:
        print(f"\n{len(mismatches)} mismatch(es):", file=sys.stderr)
        for mismatch in mismatches:
            print(f"  {mismatch}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The baseline pack: the same benchmarks on every chosen host of both sides, step by step
together, repeated; the medians compared in one table (analysis/baseline.py).

On each host: a check (which CPUs, which tools, can the scratch directory take a file with
direct I/O) before the start gate; then every benchmark of the suite, each repetition a
step all targets begin together (runs/gate.py's StepGate), so that A and B never measure
different moments. A missing tool is a "not installed" row and the rest runs. The network
benchmarks run from each side's load generator to its service: the service host starts
iperf3 and qperf servers on ports they pick and offers them to its side's load generator
at the step; the servers are stopped after the last network step.

Whatever ends a run (done, a failure, a cancel, the time limit), everything it started is
stopped and its scratch file removed: each command runs under timeout(1) with its PID in a
file (the probe script's "run"), started through the run's remote tools (runs/remote.py, as
every kind's), which end them all and remove the files when the run ends.
"""

import tempfile
from dataclasses import dataclass, field

from django import forms
from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils.translation import gettext_lazy as _
from django.utils.translation import gettext_noop

from collectors.baseline import (
    GROUP_LABELS,
    GROUPS,
    SCRIPT,
    Benchmark,
    BenchmarkOutputError,
    HostCheck,
    benchmark_argv,
    benchmarks_of,
    parse_benchmark,
    parse_check,
    probe_argv,
    validate_scratch_dir,
)
from collectors.baseline.suite import (
    DEFAULT_FILE_MB,
    DEFAULT_REPEAT,
    DEFAULT_SECONDS,
    MAX_FILE_MB,
    MAX_REPEAT,
    MAX_SCRATCH_DIR,
    MAX_SECONDS,
    SERVER_TOOLS,
    TOOLS,
)
from collectors.errors import CollectorError
from collectors.phrase import Phrase
from collectors.tools import missing_tool_message
from investigations.choices import BaselineStatus, CollectionKind
from investigations.phrases import message_of
from investigations.runs.base import Plan, TargetRun
from investigations.runs.capture import Captured, HashingFile
from investigations.runs.remote import run_output
from investigations.selectors.baselines import baseline_network_pairs
from investigations.services.baselines import baseline_refresh, baseline_store

CHECK_TIMEOUT = 30.0
OUT_OF_TIME = Phrase(gettext_noop("Gave up: the baseline pack went past its time limit."))


class BaselineParameters(forms.Form):
    """What a baseline collection may be given: the schema of the page's form and the API."""

    # What clean_scratch_dir holds, stated in the API's schema (kinds/schema.py). The group
    # repeats, but each turn must begin with "/", which its own characters exclude: a text
    # splits into turns one way only, so no engine backtracks over it.
    json_schema = {
        "scratch_dir": {
            "pattern": "^(/[A-Za-z0-9_+-][A-Za-z0-9_.+-]*)*/?$",
            "not": {"pattern": "^/(dev|proc|sys)(/|$)"},
        }
    }

    suite = forms.MultipleChoiceField(
        required=False,
        choices=[(group, _(label)) for group, label in GROUP_LABELS.items()],
        widget=forms.CheckboxSelectMultiple,
        label=_("Suite"),
        help_text=_("Default: all four groups, each benchmark whose tool the host has"),
    )
    repeat = forms.IntegerField(
        required=False,
        min_value=1,
        max_value=MAX_REPEAT,
        label=_("Repetitions"),
        help_text=_("Each benchmark this many times, the median kept (default 3)"),
    )
    seconds = forms.IntegerField(
        required=False,
        min_value=1,
        max_value=MAX_SECONDS,
        label=_("Seconds a benchmark"),
        help_text=_("How long each timed benchmark runs (default 5)"),
    )
    scratch_dir = forms.CharField(
        required=False,
        strip=False,
        max_length=MAX_SCRATCH_DIR,
        label=_("Scratch directory"),
        help_text=_("Where fio writes its scratch file, removed afterwards (default /var/tmp)"),
    )
    file_mb = forms.IntegerField(
        required=False,
        min_value=16,
        max_value=MAX_FILE_MB,
        label=_("Scratch file (MB)"),
        help_text=_("The size of fio's scratch file (default 256)"),
    )

    def clean_scratch_dir(self) -> str:
        try:
            return validate_scratch_dir(self.cleaned_data.get("scratch_dir") or "")
        except ValueError as error:
            raise ValidationError(message_of(error)) from None

    def clean(self):
        data = super().clean()
        data["suite"] = [group for group in GROUPS if group in (data.get("suite") or GROUPS)]
        data["repeat"] = data.get("repeat") or DEFAULT_REPEAT
        data["seconds"] = data.get("seconds") or DEFAULT_SECONDS
        data["file_mb"] = data.get("file_mb") or DEFAULT_FILE_MB
        return data


@dataclass
class Measurement:
    benchmark: str
    metric: str
    status: str
    values: list = field(default_factory=list)
    note: Phrase | None = None


@dataclass
class PackResult:
    """What the baseline plan brings back from one target."""

    check: HostCheck
    measurements: list[Measurement]
    captured: Captured  # every repetition's output, as it came
    network_host: int | None = None  # the network rows measured to this side's service


def _steps(parameters: dict) -> list[tuple[str, Benchmark | None, int]]:
    """Every step of the run, in order, the same on every target: (name, benchmark, repetition)."""
    steps = []
    benchmarks = benchmarks_of(parameters["suite"])
    for benchmark in benchmarks:
        if not benchmark.network:
            steps += [(f"{benchmark.key}:{r}", benchmark, r) for r in range(parameters["repeat"])]
    network = [benchmark for benchmark in benchmarks if benchmark.network]
    if network:
        steps.append(("network:serve", None, 0))
        for benchmark in network:
            steps += [(f"{benchmark.key}:{r}", benchmark, r) for r in range(parameters["repeat"])]
        steps.append(("network:done", None, 0))
    return steps


class _Record:
    """Every output of one target's run, as it came, in a hashed temporary file."""

    def __init__(self):
        self.raw = tempfile.TemporaryFile()
        self.sink = HashingFile(self.raw)
        self.count = 0  # the repetitions run so far: each names its own PID file

    def write(self, name: str, output: str, stderr: str, status) -> None:
        self.sink.write(f"### {name} (exit {status})\n".encode())
        self.sink.write(output.encode() + b"\n")
        if stderr.strip():
            self.sink.write(b"### stderr\n" + stderr.encode()[-4000:] + b"\n")

    def captured(self, run: TargetRun) -> Captured:
        return Captured(
            name=f"baseline-{run.host_name}-{run.side}.txt",
            file=self.raw,
            size=self.sink.size,
            sha256=self.sink.sha256.hexdigest(),
            truncated=False,
            exit_status=0,
        )


def _call(run: TargetRun, step: str, *words, timeout: float = 30.0):
    """A step of the probe script (check, serve, run): its output, stderr and exit status."""
    output, status, stderr = run_output(
        run.connection,
        probe_argv(step, *words),
        max(1.0, min(timeout, run.remaining())),
        SCRIPT,
    )
    return output, stderr, status


def _measure_once(run: TargetRun, record: _Record, name: str, argv, limit: int, scratch="-"):
    """One repetition under the probe's "run" wrapper, started through the run's remote
    tools: stopped (its scratch file removed) on a cancel or the time limit."""
    record.count += 1
    pid = run.pidfile("baseline", record.count)
    running = run.tools.start(
        run.connection,
        _call,
        run,
        "run",
        pid,
        limit,
        scratch,
        *argv,
        timeout=limit + 15,
        files=[pid, "" if scratch == "-" else scratch],
    )
    output, stderr, status = run.watch(running, late=OUT_OF_TIME)
    record.write(name, output, stderr, status)
    return output, stderr, status


class BaselinePlan(Plan):
    kind = CollectionKind.BASELINE
    parameters_form = BaselineParameters

    @property
    def target_seconds(self) -> int:
        return self.seconds_for(
            {"suite": list(GROUPS), "repeat": MAX_REPEAT, "seconds": MAX_SECONDS}
        )

    def seconds_for(self, parameters: dict) -> int:
        running = self.expected_seconds(parameters)
        return int(2 * settings.SSH_CONNECT_TIMEOUT + CHECK_TIMEOUT + running + 60)

    def expected_seconds(self, parameters: dict) -> int:
        steps = _steps(parameters)
        return sum(
            benchmark.seconds(parameters["seconds"]) for _, benchmark, _ in steps if benchmark
        )

    def schedule(self, *, investigation, user, parameters: dict):
        parameters["network"] = baseline_network_pairs(investigation=investigation)
        return parameters, None

    def run(self, run: TargetRun):
        # What the run started on the host the runner stops at its end (run.close_tools).
        outputs = _Record()
        try:
            return self._run(run, run.parameters, outputs)
        except BaseException:
            outputs.raw.close()
            raise

    def _run(self, run: TargetRun, parameters: dict, outputs: _Record) -> PackResult:
        output, stderr, status = _call(
            run, "check", parameters["scratch_dir"], *TOOLS, timeout=CHECK_TIMEOUT
        )
        if status != 0:
            raise CollectorError(
                Phrase(
                    gettext_noop("the baseline check on %(host)s failed: %(error)s"),
                    host=run.host_name,
                    error=stderr.strip()[-300:] or f"exit status {status}",
                )
            )
        check = parse_check(output)
        network = parameters.get("network", {}).get(run.side) or {}
        client = network.get("client") == run.host_id
        server = network.get("server") == run.host_id
        steps = _steps(parameters)
        longest = max(
            (benchmark.seconds(parameters["seconds"]) for _, benchmark, _ in steps if benchmark),
            default=30,
        )
        measured: dict[tuple[str, str], Measurement] = {}
        ports: dict[str, int] = {}
        run.progress(10, Phrase(gettext_noop("ready to run the benchmarks")))
        run.begin()
        for index, (step, benchmark, repetition) in enumerate(steps):
            run.check_stop()
            if step == "network:serve":
                offer = self._serve(run, check) if server else None
                offers = run.together(step, max_wait=longest + 30, offer=offer)
                ports = next(
                    (o["ports"] for o in offers.values() if o["host"] == network.get("server")),
                    {},
                )
                continue
            if step == "network:done":
                run.together(step, max_wait=longest + 30)
                run.tools.stop_all()  # the servers
                continue
            run.together(step, max_wait=longest + 30)
            run.progress(
                10 + int(85 * index / len(steps)),
                Phrase(
                    gettext_noop("%(benchmark)s, %(repetition)s of %(repeat)s"),
                    benchmark=Phrase(benchmark.label),
                    repetition=repetition + 1,
                    repeat=parameters["repeat"],
                ),
            )
            if benchmark.network and not client:
                continue
            self._measure(run, outputs, check, benchmark, parameters, network, ports, measured)
        return PackResult(
            check=check,
            measurements=list(measured.values()),
            captured=outputs.captured(run),
            network_host=network.get("server") if client else None,
        )

    def _serve(self, run: TargetRun, check: HostCheck) -> dict:
        """Start this side's servers, left running (the run's tools, stopped after the last
        network step); what to offer its load generator."""
        ports = {}
        for tool in SERVER_TOOLS:
            if tool not in check.tools:
                continue
            pid = run.pidfile("baseline", "serve", tool)
            run.tools.hold(run.connection, pid)
            limit = int(run.remaining()) + 5
            output, _stderr, status = _call(run, "serve", tool, pid, limit, timeout=30)
            if status == 0 and output.startswith("port="):
                ports[tool] = int(output.split("=", 1)[1].strip())
        return {"host": run.host_id, "ports": ports}

    def _measure(self, run, outputs, check, benchmark, parameters, network, ports, measured):
        def record(status: str, values=(), note: Phrase | None = None):
            for metric in benchmark.metrics:
                found = measured.setdefault(
                    (benchmark.key, metric.key), Measurement(benchmark.key, metric.key, status)
                )
                if status == BaselineStatus.MEASURED and found.status == BaselineStatus.MEASURED:
                    if metric.key in values:
                        found.values.append(values[metric.key])
                elif found.status == BaselineStatus.MEASURED and found.values:
                    continue  # a failed repetition among measured ones: the others count
                else:
                    found.status, found.note = status, note

        if benchmark.tool not in check.tools:
            missing = missing_tool_message(benchmark.tool, run.host_name)
            return record(BaselineStatus.NOT_INSTALLED, note=missing)
        scratch = "-"
        kwargs = {"seconds": parameters["seconds"], "cpus": check.cpus}
        note = None
        if benchmark.network:
            if benchmark.tool in SERVER_TOOLS and benchmark.tool not in ports:
                return record(
                    BaselineStatus.NOT_MEASURED,
                    note=Phrase(
                        gettext_noop("no %(tool)s server on this side's service host"),
                        tool=benchmark.tool,
                    ),
                )
            same_host = network.get("server") == network.get("client")
            kwargs.update(
                server="127.0.0.1" if same_host else network.get("address", ""),
                port=ports.get(benchmark.tool, 0),
            )
        if benchmark.key == "fio":
            if not check.scratch_writable:
                return record(
                    BaselineStatus.FAILED,
                    note=Phrase(
                        gettext_noop("%(dir)s cannot be written on %(host)s"),
                        dir=parameters["scratch_dir"],
                        host=run.host_name,
                    ),
                )
            if check.free_mb is not None and check.free_mb < parameters["file_mb"] + 64:
                return record(
                    BaselineStatus.FAILED,
                    note=Phrase(
                        gettext_noop("%(dir)s has %(free)s MB free, fio needs %(need)s"),
                        dir=parameters["scratch_dir"],
                        free=check.free_mb,
                        need=parameters["file_mb"] + 64,
                    ),
                )
            scratch = (
                f"{parameters['scratch_dir'].rstrip('/')}/"
                f"perfcase-baseline-{run.target_id}-{run.attempt}.fio"
            )
            kwargs.update(
                scratch_file=scratch, file_mb=parameters["file_mb"], direct=check.direct_io
            )
            if not check.direct_io:
                note = Phrase(gettext_noop("buffered I/O: the filesystem refused direct I/O"))
        argv = benchmark_argv(benchmark, **kwargs)
        output, stderr, status = _measure_once(
            run, outputs, benchmark.key, argv, benchmark.seconds(parameters["seconds"]), scratch
        )
        if status == 127:
            missing = missing_tool_message(benchmark.tool, run.host_name)
            return record(BaselineStatus.NOT_INSTALLED, note=missing)
        try:
            values = parse_benchmark(benchmark.key, output if output.strip() else stderr)
        except BenchmarkOutputError as error:
            detail = stderr.strip()[-200:] or f"exit status {status}"
            return record(
                BaselineStatus.FAILED,
                note=Phrase(
                    gettext_noop("%(tool)s failed: %(error)s (%(detail)s)"),
                    tool=benchmark.tool,
                    error=error.phrase,
                    detail=detail,
                ),
            )
        record(BaselineStatus.MEASURED, values, note)
        if note is not None:
            for metric in benchmark.metrics:
                measured[(benchmark.key, metric.key)].note = note

    def store(self, *, target, result: PackResult) -> None:
        try:
            with transaction.atomic():
                baseline_store(target=target, result=result, attempt=target.attempts)
        finally:
            result.captured.close()

    def refresh(self, *, investigation) -> None:
        baseline_refresh(investigation=investigation)

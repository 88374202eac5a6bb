"""Packet captures: tcpdump on the service hosts of both sides at one planned moment, each
pcap streamed into a file of its own and analysed where it landed, the sides compared by
the rules.

On each host: a check (tcpdump there? the interface? allowed to capture?) before the start
gate, so that a host that cannot capture says why at once and holds nobody; then the
capture at the collection's planned start (which may be a step of a ladder, as for
profiles), its packets counted as they arrive for the progress a person watches. The
analysis runs in the target's own thread, streaming the file (constant memory), before the
result goes back to be stored.
"""

import dataclasses
import hashlib
import io
import time

from django import forms
from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils.translation import gettext_lazy as _
from django.utils.translation import gettext_noop

from collectors.capture import CaptureError, analyse_capture, require_core
from collectors.capture.remote import (
    CHECK_TIMEOUT,
    DEFAULT_MAX_MB,
    DEFAULT_SECONDS,
    DEFAULT_SNAPLEN,
    MAX_FILTER,
    MAX_MAX_MB,
    MAX_SECONDS,
    MAX_SNAPLEN,
    SCRIPT,
    CaptureRequest,
    PcapCounter,
    capture_argv,
    capture_problem,
    check_problem,
    tcpdump_counts,
    validate_filter,
    validate_interface,
)
from collectors.errors import CollectorError
from collectors.listeners import ARGV, capture_filter, sampling_argv
from collectors.listeners import TIMEOUT as SOCKETS_TIMEOUT
from collectors.phrase import Phrase
from investigations.analysis.capture_marks import slowest_connection_marks
from investigations.choices import CollectionKind, HostRole
from investigations.phrases import message_of
from investigations.runs.base import Plan, TargetRun
from investigations.runs.ladder_step import LadderStepForm, on_ladder_step
from investigations.runs.service_process import read_service_process
from investigations.services.captures import CaptureResult, capture_refresh, capture_store

# The time a capture may take beyond its seconds: tcpdump's end and the stream's last bytes.
DRAIN_SECONDS = 30
# What analysing a capture may take: this long a megabyte of its cap, and this much more.
ANALYSIS_SECONDS_PER_MB, ANALYSIS_SECONDS = 0.1, 60
# A service's connections are read this many times, this far apart (about half a second),
# as its capture begins: a connection opened for each request is open in some readings only.
SOCKET_READINGS, READING_INTERVAL = 20, 0.02


def _validated(validate):
    def clean(value: str) -> str:
        try:
            return validate(value)
        except ValueError as error:
            raise ValidationError(message_of(error)) from None

    return clean


# A filter's characters (collectors/capture/remote.py), never beginning with a -.
FILTER_PATTERN = "^([A-Za-z0-9._:/\\[\\]()!&|<>=*+%^~][A-Za-z0-9 ._:/\\[\\]()!&|<>=*+%^~-]*)?$"
# A filter as typed, before its runs of spaces are collapsed to MAX_FILTER characters or fewer.
FILTER_TYPED = 4 * MAX_FILTER


class CaptureParameters(LadderStepForm):
    """What a capture collection may be given: the schema of the page's form and the API."""

    field_order = [
        "seconds",
        "interface",
        "filter",
        "filter_a",
        "filter_b",
        "service_port",
        "snaplen",
        "max_mb",
        "ladder",
        "step",
    ]
    # What the clean_* methods hold, stated in the API's schema (kinds/schema.py); tcpdump
    # itself compiles a filter, which no schema can say.
    json_schema = {
        **LadderStepForm.json_schema,
        "interface": {"pattern": "^([A-Za-z0-9_.:@][A-Za-z0-9_.:@-]{0,14})?$"},
        **{
            name: {"pattern": FILTER_PATTERN, "maxLength": MAX_FILTER}
            for name in ("filter", "filter_a", "filter_b")
        },
    }

    seconds = forms.IntegerField(
        required=False,
        min_value=1,
        max_value=MAX_SECONDS,
        label=_("Seconds"),
        help_text=_("How long to capture (default 10, at most 300)"),
    )
    interface = forms.CharField(
        required=False,
        strip=False,
        max_length=64,
        label=_("Interface"),
        help_text=_("Default any: every interface of the host"),
    )
    filter = forms.CharField(
        required=False,
        strip=False,
        max_length=FILTER_TYPED,
        label=_("Capture filter"),
        help_text=_("pcap filter syntax, for both sides (e.g. tcp port 443)"),
    )
    filter_a = forms.CharField(
        required=False,
        strip=False,
        max_length=FILTER_TYPED,
        label=_("Filter on side A"),
        help_text=_("Instead of the filter above, on side A only"),
    )
    filter_b = forms.CharField(
        required=False,
        strip=False,
        max_length=FILTER_TYPED,
        label=_("Filter on side B"),
        help_text=_("Instead of the filter above, on side B only"),
    )
    service_port = forms.IntegerField(
        required=False,
        min_value=1,
        max_value=65535,
        label=_("Service port"),
        help_text=_(
            "Capture the traffic of the process that listens on this port on each host: "
            "every port it listens on and every connection it has as the capture starts "
            "(and the filter above, when given, narrows it)"
        ),
    )
    snaplen = forms.IntegerField(
        required=False,
        min_value=64,
        max_value=MAX_SNAPLEN,
        label=_("Snap length"),
        help_text=_("Bytes kept of each packet (default 2048: headers and TLS handshakes)"),
    )
    max_mb = forms.IntegerField(
        required=False,
        min_value=1,
        max_value=MAX_MAX_MB,
        label=_("Size cap (MB)"),
        help_text=_("Per host; the capture stops there and says so (default 200)"),
    )

    def clean_interface(self) -> str:
        value = (self.cleaned_data.get("interface") or "").strip()
        return _validated(validate_interface)(value) if value else "any"

    def _filter(self, name: str) -> str:
        return _validated(validate_filter)(self.cleaned_data.get(name) or "")

    def clean_filter(self) -> str:
        return self._filter("filter")

    def clean_filter_a(self) -> str:
        return self._filter("filter_a")

    def clean_filter_b(self) -> str:
        return self._filter("filter_b")

    def clean(self):
        data = super().clean()
        data["seconds"] = data.get("seconds") or DEFAULT_SECONDS
        data["snaplen"] = data.get("snaplen") or DEFAULT_SNAPLEN
        data["max_mb"] = data.get("max_mb") or DEFAULT_MAX_MB
        return data


def _request(parameters: dict, side: str) -> CaptureRequest:
    return CaptureRequest(
        interface=parameters.get("interface") or "any",
        seconds=parameters["seconds"],
        snaplen=parameters["snaplen"],
        filter=parameters.get(f"filter_{side}") or parameters.get("filter") or "",
    )


def _cut_at(captured, length: int) -> None:
    """Cut a capture stopped at its size cap after its last whole packet, and hash it anew."""
    file = captured.file
    file.truncate(length)
    file.seek(0)
    digest = hashlib.sha256()
    while chunk := file.read(1 << 20):
        digest.update(chunk)
    captured.size, captured.sha256 = length, digest.hexdigest()


class CapturePlan(Plan):
    kind = CollectionKind.CAPTURE
    parameters_form = CaptureParameters
    default_roles = (HostRole.SERVICE,)

    @property
    def target_seconds(self) -> int:
        return self.seconds_for({"seconds": MAX_SECONDS, "max_mb": MAX_MAX_MB, "service_port": 1})

    def seconds_for(self, parameters: dict) -> int:
        # Connecting (twice through a jump host), finding the service (twice), the check, the
        # capture, its analysis.
        analysis = ANALYSIS_SECONDS + ANALYSIS_SECONDS_PER_MB * parameters["max_mb"]
        return int(
            2 * settings.SSH_CONNECT_TIMEOUT
            + (2 * SOCKETS_TIMEOUT if parameters.get("service_port") else 0)
            + CHECK_TIMEOUT
            + parameters["seconds"]
            + DRAIN_SECONDS
            + analysis
        )

    def expected_seconds(self, parameters: dict) -> int:
        return parameters["seconds"]

    def schedule(self, *, investigation, user, parameters: dict):
        return on_ladder_step(investigation=investigation, user=user, parameters=parameters)

    def run(self, run: TargetRun):
        require_core()
        request = given = _request(run.parameters, run.side)
        service_port = run.parameters.get("service_port")
        if service_port:  # found now (or said not to be there), and again once begun
            run.progress(
                5, Phrase(gettext_noop("finding the service on port %(port)s"), port=service_port)
            )
            request = self._service_request(run, service_port, given, ARGV)
        result = run.connection.run(
            capture_argv("check", request),
            sink=io.BytesIO(),
            stdin=SCRIPT,
            timeout=min(CHECK_TIMEOUT, run.remaining()),
        )
        refused = check_problem(result.stderr, result.exit_status, request, run.host_name)
        if refused is not None:
            raise refused
        run.progress(20, Phrase(gettext_noop("ready to capture")))
        run.begin()
        run.check_stop()
        if service_port:  # under the load of the moment, if a ladder's step is under way
            request = self._service_request(
                run, service_port, given, sampling_argv(SOCKET_READINGS, READING_INTERVAL)
            )

        counter = PcapCounter()
        listening_since = None  # when tcpdump's pcap header came: from then on it captures

        def feed(data: bytes) -> None:
            nonlocal listening_since
            counter.feed(data)
            if listening_since is None and counter.listening:
                listening_since = time.monotonic()

        def report(elapsed: float):
            if listening_since is None:
                return 20, Phrase(gettext_noop("starting tcpdump"))
            done = min(int(time.monotonic() - listening_since), request.seconds)
            return 20 + int(60 * done / request.seconds), Phrase(
                gettext_noop("capturing: %(packets)s packets so far, %(done)s of %(seconds)s s"),
                packets=counter.packets,
                done=done,
                seconds=request.seconds,
            )

        pid = run.pidfile("capture")
        captured = run.capture_reporting(
            capture_argv("capture", request, pid),
            report=report,
            pidfile=pid,
            name=f"capture-{run.host_name}-{run.side}.pcap",
            stdin=SCRIPT,
            timeout=request.seconds + DRAIN_SECONDS,
            max_bytes=run.parameters["max_mb"] * 1024 * 1024,
            on_data=feed,
        )
        try:
            return self._analysed(run, request, captured, counter)
        except BaseException:
            captured.close()
            raise

    def _service_request(self, run: TargetRun, port: int, given, argv) -> CaptureRequest:
        """`given` with the traffic of the process listening on `port` as its filter, read
        on the host by `argv`: its ports and every dependency it has a connection to, never
        the SSH session; narrowed by the filter given, if any."""
        ssh_port = run.connection.endpoint.port
        found = read_service_process(
            run.connection, host_name=run.host_name, port=port, ssh_port=ssh_port, argv=argv
        )
        service = capture_filter(found, ssh_port=ssh_port)
        if given.filter:
            service = f"({service}) and ({given.filter})"
        try:
            return dataclasses.replace(given, filter=validate_filter(service))
        except ValueError as error:
            raise CollectorError(
                Phrase(
                    gettext_noop("the capture filter of the service on %(host)s: %(error)s"),
                    host=run.host_name,
                    error=message_of(error),
                )
            ) from None

    def _analysed(self, run: TargetRun, request, captured, counter) -> CaptureResult:
        problem = capture_problem(captured.stderr, captured.exit_status, run.host_name)
        if problem is not None:
            raise CollectorError(problem)
        if captured.truncated:
            _cut_at(captured, counter.whole)
        run.progress(
            80,
            Phrase(
                gettext_noop("analysing %(packets)s packets"),
                packets=counter.packets,
            ),
        )
        last = [0.0]

        def progress(done: int, total: int | None) -> None:
            run.check_stop()  # a cancel stops the analysis too
            if total and time.monotonic() - last[0] >= 1:
                last[0] = time.monotonic()
                run.progress(
                    80 + 15 * done // total,
                    Phrase(
                        gettext_noop("analysing %(packets)s packets"),
                        packets=counter.packets,
                    ),
                )

        captured.file.seek(0)
        try:
            analysis = analyse_capture(captured.file, progress=progress).as_dict()
            captured.file.seek(0)
            marks = slowest_connection_marks(captured.file, analysis)
        except CaptureError as error:
            raise CollectorError(
                Phrase(
                    gettext_noop("the capture of %(host)s cannot be analysed: %(error)s"),
                    host=run.host_name,
                    error=message_of(error),
                )
            ) from None
        return CaptureResult(
            request=request,
            captured=captured,
            analysis=analysis,
            marks=marks,
            tcpdump=tcpdump_counts(captured.stderr) | {"stopped_at_cap": captured.truncated},
        )

    def store(self, *, target, result: CaptureResult) -> None:
        try:
            with transaction.atomic():
                capture_store(target=target, result=result, attempt=target.attempts)
        finally:
            result.captured.close()

    def refresh(self, *, investigation) -> None:
        capture_refresh(investigation=investigation)

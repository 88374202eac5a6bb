"""CPU profiles: perf on the service hosts of both sides at one planned moment, its
`perf script` kept and folded, the sides compared by the rules.

On each host: a check (perf there? the process? allowed?) before the start gate, so that a
host that cannot be profiled says why at once and holds nobody; then the recording, at the
collection's planned start, which may be a step of a ladder (the profile is then taken
under the load where the sides diverge, and the ladder knows which profile belongs to
which of its steps).
"""

import io

from django import forms
from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils.translation import gettext_lazy as _
from django.utils.translation import gettext_noop

from collectors.errors import CollectorError
from collectors.phrase import Phrase
from collectors.profile import (
    CALL_GRAPHS,
    CHECK_TIMEOUT,
    DEFAULT_FREQUENCY,
    DEFAULT_SECONDS,
    MAX_FREQUENCY,
    MAX_OUTPUT_BYTES,
    MAX_SECONDS,
    SCRIPT,
    ProfileRequest,
    fold_profile,
    parse_check,
    profile_argv,
    record_problem,
    validate_pid,
    validate_process,
)
from investigations.choices import CollectionKind, HostRole
from investigations.phrases import message_of
from investigations.runs.base import Plan, TargetRun
from investigations.runs.ladder_step import LadderStepForm, on_ladder_step
from investigations.services.profiles import ProfileResult, profile_refresh, profile_store


class ProfileParameters(LadderStepForm):
    """What a profile collection may be given: the schema of the page's form and the API."""

    field_order = ["seconds", "frequency", "process", "pid", "call_graph", "ladder", "step"]
    # What clean_process and clean_pid hold, stated in the API's schema (kinds/schema.py).
    json_schema = {
        **LadderStepForm.json_schema,
        "process": {"pattern": "^([A-Za-z0-9_][A-Za-z0-9_.:@+-]{0,14})?$"},
        "pid": {"pattern": "^([1-9][0-9]{0,5})?$"},
    }
    json_schema_rules = {
        **LadderStepForm.json_schema_rules,
        # A process name or a PID, not both.
        "not": {"required": ["process", "pid"]},
    }

    seconds = forms.IntegerField(
        required=False,
        min_value=1,
        max_value=MAX_SECONDS,
        label=_("Seconds"),
        help_text=_("How long to record (default 10, at most 120)"),
    )
    frequency = forms.IntegerField(
        required=False,
        min_value=1,
        max_value=MAX_FREQUENCY,
        label=_("Samples a second"),
        help_text=_("perf's sampling frequency per CPU (default 99 Hz)"),
    )
    process = forms.CharField(
        required=False,
        strip=False,
        max_length=64,
        label=_("Process"),
        help_text=_("A command name as pgrep -x matches it; empty: every CPU of the host"),
    )
    pid = forms.CharField(required=False, strip=False, max_length=32, label=_("or PID"))
    call_graph = forms.ChoiceField(
        required=False,
        choices=[("fp", _("frame pointers (-g)")), ("dwarf", _("DWARF (--call-graph dwarf)"))],
        label=_("Call graphs"),
    )

    def clean_process(self) -> str:
        value = (self.cleaned_data.get("process") or "").strip()
        if value:
            try:
                return validate_process(value)
            except ValueError as error:
                raise ValidationError(message_of(error)) from None
        return ""

    def clean_pid(self):
        value = (self.cleaned_data.get("pid") or "").strip()
        if value:
            try:
                return validate_pid(value)
            except ValueError as error:
                raise ValidationError(message_of(error)) from None
        return None

    def clean(self):
        data = super().clean()
        if data.get("process") and data.get("pid"):
            self.add_error("pid", _("Give a process name or a PID, not both."))
        data["seconds"] = data.get("seconds") or DEFAULT_SECONDS
        data["frequency"] = data.get("frequency") or DEFAULT_FREQUENCY
        data["call_graph"] = data.get("call_graph") or CALL_GRAPHS[0]
        return data


def _request(parameters: dict) -> ProfileRequest:
    if parameters.get("process"):
        mode, target = "process", parameters["process"]
    elif parameters.get("pid"):
        mode, target = "pid", str(parameters["pid"])
    else:
        mode, target = "host", ""
    return ProfileRequest(
        mode=mode,
        target=target,
        seconds=parameters["seconds"],
        frequency=parameters["frequency"],
        call_graph=parameters["call_graph"],
    )


class ProfilePlan(Plan):
    kind = CollectionKind.PROFILE
    parameters_form = ProfileParameters
    default_roles = (HostRole.SERVICE,)

    @property
    def target_seconds(self) -> int:
        return self.seconds_for({"seconds": MAX_SECONDS})

    def seconds_for(self, parameters: dict) -> int:
        # Connecting (twice through a jump host), the check, the recording, perf script.
        return 2 * settings.SSH_CONNECT_TIMEOUT + int(CHECK_TIMEOUT) + parameters["seconds"] + 120

    def expected_seconds(self, parameters: dict) -> int:
        return parameters["seconds"]

    def schedule(self, *, investigation, user, parameters: dict):
        return on_ladder_step(investigation=investigation, user=user, parameters=parameters)

    def run(self, run: TargetRun):
        request = _request(run.parameters)
        sink = io.BytesIO()
        result = run.connection.run(
            profile_argv("check", request),
            sink=sink,
            stdin=SCRIPT,
            timeout=min(CHECK_TIMEOUT, run.remaining()),
        )
        check = parse_check(
            sink.getvalue().decode("utf-8", "replace"),
            result.stderr,
            result.exit_status,
            request,
            run.host_name,
        )
        run.progress(30, Phrase(gettext_noop("ready to record")))
        run.begin()
        run.check_stop()

        def report(elapsed: float):
            if elapsed >= request.seconds:
                return 85, Phrase(gettext_noop("reading the recording"))
            return 30 + int(50 * elapsed / request.seconds), Phrase(
                gettext_noop("recording: %(done)s of %(seconds)s s"),
                done=int(elapsed),
                seconds=request.seconds,
            )

        pid = run.pidfile("profile")
        captured = run.capture_reporting(
            profile_argv("record", request, pid),
            report=report,
            pidfile=pid,
            name=f"perf-script-{run.host_name}-{run.side}.txt",
            stdin=SCRIPT,
            timeout=request.seconds + 120,
            max_bytes=MAX_OUTPUT_BYTES,
        )
        problem = record_problem(captured.stderr, captured.exit_status, run.host_name)
        if problem is not None or run.stop.is_set():
            captured.close()
            run.check_stop()
            raise CollectorError(problem)
        captured.file.seek(0)
        folded = fold_profile(captured.file)
        if not folded.weights:
            captured.close()
            raise CollectorError(
                Phrase(
                    gettext_noop(
                        "perf recorded no samples on %(host)s in %(seconds)s s: was the process "
                        "idle?"
                    ),
                    host=run.host_name,
                    seconds=request.seconds,
                )
            )
        return ProfileResult(request=request, check=check, captured=captured, folded=folded)

    def store(self, *, target, result: ProfileResult) -> None:
        try:
            with transaction.atomic():
                profile_store(target=target, result=result, attempt=target.attempts)
        finally:
            result.captured.close()

    def refresh(self, *, investigation) -> None:
        profile_refresh(investigation=investigation)

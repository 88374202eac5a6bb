"""Host facts, the worked example of an evidence kind: one probe script per host, run as
one remote command, its raw output kept, its facts parsed and stored, the rules re-run."""

import secrets

from django import forms
from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import ProhibitNullCharactersValidator
from django.db import transaction
from django.utils.translation import gettext_lazy as _

from collectors.facts import (
    MAX_OUTPUT_BYTES,
    SCRIPT,
    FactsRequest,
    facts_argv,
    parse_facts,
    validate_path,
    validate_service,
)
from collectors.loadrun import wrapped_command
from investigations.choices import CollectionKind
from investigations.phrases import message_of
from investigations.runs.base import Plan, TargetRun
from investigations.services.facts import facts_refresh, facts_store
from investigations.services.targets import artifact_store

MAX_PATHS = 8


class PathsField(forms.Field):
    """Paths as a list (the API) or separated by spaces (the page's text box)."""

    def to_python(self, value) -> list[str]:
        if value in (None, ""):
            return []
        if isinstance(value, str):
            value = value.split()
        if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
            raise ValidationError(_("Give paths as a list of strings."))
        for path in value:
            ProhibitNullCharactersValidator()(path)
        return [path.strip() for path in value]

    def validate(self, value: list[str]) -> None:
        if len(value) > MAX_PATHS:
            raise ValidationError(_("At most %(count)d paths.") % {"count": MAX_PATHS})
        for path in value:
            try:
                validate_path(path)
            except ValueError as error:
                raise ValidationError(f"{path[:80]}: {message_of(error)}") from None


class FactsParameters(forms.Form):
    """What a facts collection may be given: the schema of the page's form and the API."""

    # The grammars of collectors/facts.py, which clean_service and PathsField hold with a
    # 400 naming the field, stated in the API's schema (kinds/schema.py).
    json_schema = {
        "service": {"pattern": "^([A-Za-z0-9_][A-Za-z0-9_.:@+-]{0,63})?$"},
        "paths": {
            "type": "array",
            "items": {
                "type": "string",
                "pattern": "^/[A-Za-z0-9._@+/-]{0,254}$",
                "not": {"pattern": "/[.][.](/|$)"},
            },
            "maxItems": MAX_PATHS,
        },
    }

    service = forms.CharField(
        required=False,
        strip=False,
        max_length=64,
        # The grammar's own words, which name the limit too, for an overlong value as well.
        error_messages={
            "max_length": _(
                "A process name (letters, digits and _ . : @ + -, at most 64) or a PID."
            )
        },
        label=_("Service process"),
        help_text=_("Optional: a process name (as in /proc/PID/comm, e.g. java) or a PID"),
    )
    paths = PathsField(
        required=False,
        label=_("Mounts of"),
        help_text=_("Optional: paths whose mount options to record, separated by spaces"),
    )

    def clean_service(self) -> str:
        try:
            return validate_service(self.cleaned_data["service"] or "")
        except ValueError as error:
            raise ValidationError(message_of(error)) from None


class FactsPlan(Plan):
    kind = CollectionKind.FACTS
    parameters_form = FactsParameters

    @property
    def target_seconds(self) -> int:
        # Connecting (twice through a jump host), the probe script, parsing.
        return 2 * settings.SSH_CONNECT_TIMEOUT + settings.FACTS_TIMEOUT + 30

    def run(self, run: TargetRun):
        request = FactsRequest(
            run.parameters.get("service", ""), tuple(run.parameters.get("paths", ()))
        )
        run.begin()
        run.progress(40, "running the probes")
        # Under the PID-file wrapper, so that a cancel ends the probe script at once (each
        # program it runs ends by its own probe's limit, a few seconds).
        pid = run.pidfile("facts")
        captured = run.capture_reporting(
            wrapped_command(
                pid, settings.FACTS_TIMEOUT + 5, facts_argv(secrets.token_hex(8), request)
            ),
            pidfile=pid,
            name=f"facts-{run.host_name}-{run.side}.txt",
            stdin=SCRIPT,
            timeout=settings.FACTS_TIMEOUT,
            max_bytes=MAX_OUTPUT_BYTES,
        )
        with run.parsing():
            snapshot = parse_facts(captured.read(), request)
        return captured, snapshot

    def store(self, *, target, result) -> None:
        captured, snapshot = result
        try:
            with transaction.atomic():
                stored = facts_store(
                    target=target, snapshot=snapshot, attempt=target.attempts, refresh=False
                )
                if stored is not None:
                    artifact_store(target=target, captured=captured)
        finally:
            captured.close()

    def discard(self, result) -> None:
        result[0].close()

    def refresh(self, *, investigation) -> None:
        facts_refresh(investigation=investigation)

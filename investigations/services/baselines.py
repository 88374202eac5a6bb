"""The baseline pack: a target's results kept (or results made elsewhere imported), then
the table's verdicts raised as findings where one side is clearly worse."""

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils.translation import gettext_lazy as _

from collectors.baseline import BY_KEY, BenchmarkOutputError
from collectors.baseline.parsers import read_import
from collectors.filekind import FileRefused, ReadReport, formats_of, read_as
from collectors.phrase import Phrase, ngettext_noop
from collectors.signatures import BASELINES
from investigations.analysis.baseline import evaluate_baseline, summarise
from investigations.choices import BaselineStatus, EventKind, HostRole
from investigations.models import BaselineResult, CollectionTarget, Investigation
from investigations.phrases import message_of, with_phrases
from investigations.selectors.baselines import baseline_table, host_roles
from investigations.services.findings import PairVerdicts, findings_recheck
from investigations.services.targets import artifact_store, target_succeed
from investigations.services.timeline import timeline_event_log
from investigations.uploads import too_large, uploads_read

MAX_IMPORT_BYTES = 20 * 1024 * 1024
MAX_IMPORT_FILES = 20
# The import format of each tool's output.
TOOL_FORMAT = {"fio": "fio-json", "iperf3": "iperf3-json", "sysbench": "sysbench-text"}


def baseline_uploads_read(uploads) -> list[tuple[str, bytes]]:
    """Uploaded result files as (name, content), refused by count and size before reading."""
    return uploads_read(uploads, max_bytes=MAX_IMPORT_BYTES, max_files=MAX_IMPORT_FILES)


def _row(measurement, **fields) -> BaselineResult:
    median, spread = summarise(measurement.values)
    changes = with_phrases({"note": measurement.note} if measurement.note else {})
    return BaselineResult(
        benchmark=measurement.benchmark,
        metric=measurement.metric,
        status=measurement.status,
        values=[round(value, 6) for value in measurement.values],
        median=median,
        spread=spread,
        **changes,
        **fields,
    )


@transaction.atomic
def baseline_store(*, target: CollectionTarget, result, attempt: int) -> list[BaselineResult]:
    """Keep a target's results and every repetition's output, and finish the target; nothing
    if the target is no longer under this claim."""
    if not target_succeed(target=target, attempt=attempt):
        return []
    investigation = target.collection.investigation
    role = host_roles(investigation=investigation).get((target.host_id, target.side_id), "")
    rows = BaselineResult.objects.bulk_create(
        _row(
            measurement,
            investigation=investigation,
            side=target.side,
            # The network rows are the side's path, load generator to service.
            role="" if BY_KEY[measurement.benchmark].network else role,
            host=target.host,
            target=target,
            created_by=target.collection.requested_by,
        )
        for measurement in result.measurements
    )
    artifact_store(target=target, captured=result.captured)
    return rows


@transaction.atomic
def baseline_import(
    *,
    investigation: Investigation,
    user,
    side_key: str,
    files: list[tuple[str, bytes]],
    role: str = "",
    expected: str = "",
    reports: list[ReadReport] | None = None,
) -> list[BaselineResult]:
    """Results made elsewhere (fio JSON, iperf3 JSON, sysbench cpu or memory text) onto a
    side, one benchmark a file (fio: its pack's jobs and a randrw job), all or nothing; a
    file that does not parse is refused with its name and what was expected, a file of
    another kind with what it is. What each file held is added to `reports`."""
    errors = {}
    if side_key not in ("a", "b"):
        errors["side"] = _("Choose side a or b.")
    if role and role not in HostRole.values:
        errors["role"] = _("Choose one of: %(choices)s.") % {"choices": ", ".join(HostRole.values)}
    if not files:
        errors["file"] = _("Choose a result file.")
    elif len(files) > MAX_IMPORT_FILES:
        errors["file"] = _("At most %(count)s files at a time.") % {"count": MAX_IMPORT_FILES}
    if errors:
        raise ValidationError(errors)
    side = investigation.sides.get(key=side_key)
    rows = []
    for name, content in files:
        if len(content) > MAX_IMPORT_BYTES:
            raise too_large(name, MAX_IMPORT_BYTES)
        formats = (expected,) if expected else formats_of(BASELINES)
        try:
            content, _kind = read_as(name, content, formats=formats, max_bytes=MAX_IMPORT_BYTES)
            found = read_import(content)
        except (FileRefused, BenchmarkOutputError) as error:
            message = message_of(error)
            raise ValidationError(
                {"file": message if isinstance(error, FileRefused) else f"{name}: {message}"}
            ) from None
        for benchmark, values in found.results.items():
            tool_format = TOOL_FORMAT.get(BY_KEY[benchmark].tool)
            if expected and tool_format != expected:
                raise ValidationError(
                    {
                        "file": _("%(file)s is %(found)s output, not %(expected)s.")
                        % {"file": name, "found": tool_format, "expected": expected}
                    }
                )
            network = BY_KEY[benchmark].network
            rows += [
                BaselineResult(
                    investigation=investigation,
                    side=side,
                    role="" if network else role,
                    benchmark=benchmark,
                    metric=metric,
                    status=BaselineStatus.MEASURED,
                    values=[round(value, 6)],
                    median=value,
                    source=name[:200],
                    created_by=user,
                )
                for metric, value in values.items()
            ]
        if reports is not None:
            reports.append(
                ReadReport(
                    file=name,
                    format=TOOL_FORMAT[BY_KEY[benchmark].tool],
                    unit="results",
                    read=sum(len(values) for values in found.results.values()),
                    skipped=found.skipped,
                    examples=tuple(found.examples),
                )
            )
    rows = BaselineResult.objects.bulk_create(rows)
    timeline_event_log(
        investigation=investigation,
        kind=EventKind.COLLECTION,
        summary=Phrase(
            ngettext_noop(
                "Imported %(count)s baseline result onto side %(side)s: %(files)s",
                "Imported %(count)s baseline results onto side %(side)s: %(files)s",
            ),
            count=len(rows),
            side=side_key.upper(),
            files=", ".join(name for name, _content in files),
        ),
        author=user,
        details={"baseline_results": [row.pk for row in rows]},
    )
    baseline_refresh(investigation=investigation)
    return rows


def baseline_refresh(*, investigation: Investigation) -> None:
    """What reads the baseline: a finding for each row where one side is clearly worse,
    per role (the network rows as the role "")."""

    def read_pairs() -> list[PairVerdicts]:
        by_role: dict[str, list] = {}
        for row in baseline_table(investigation=investigation):
            by_role.setdefault(row.role, []).append(row)
        return [
            PairVerdicts(f"baseline:{role}", None, None, evaluate_baseline(role_rows))
            for role, role_rows in by_role.items()
        ]

    findings_recheck(investigation=investigation, read_pairs=read_pairs)

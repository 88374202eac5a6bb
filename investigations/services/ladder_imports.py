"""Ladder results made elsewhere, imported onto a side: all of a file or nothing."""

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from collectors.filekind import FileRefused, ReadReport, read_as, unpack
from collectors.loadresults import LoadResultError
from collectors.loadresults import parse as parse_results
from collectors.loadrun import LOAD_OPTION
from collectors.phrase import Phrase, ngettext_noop
from investigations.choices import ImportFormat, LadderStatus
from investigations.models import Investigation, Ladder, LadderSide, LadderStep
from investigations.phrases import message_of
from investigations.services.checklist import checklist_refresh
from investigations.services.ladder_results import (
    ladder_analysis,
    ladder_log,
    ladder_side_add,
    ladder_step_store,
)
from investigations.services.ladders import load_unit
from investigations.services.timeline import label_phrase
from investigations.uploads import too_large, uploads_read

MAX_IMPORT_BYTES = 20 * 1024 * 1024  # a file
MAX_IMPORT_FILES = 50
# The load a format's output may not state, given beside the file: hey's -c, wrk2's -R, and
# the concurrency of a k6 JSON summary of a run too short for k6 to sample its vus.
IMPORT_LOAD_OPTION = {**LOAD_OPTION, "k6-json": "concurrency"}


def _import_results(format: str, files: list[tuple[str, bytes]], load: float | None) -> list:
    """Every file's steps, or a ValidationError naming the file, the line and what was
    expected (or, for a file of another kind, what it is)."""
    if load is not None and format not in IMPORT_LOAD_OPTION:
        raise ValidationError(
            {"load": _("%(format)s states its own load.") % {"format": ImportFormat(format).label}}
        )
    if load is not None and len(files) > 1:
        raise ValidationError({"load": _("Give the load with one file at a time.")})
    options = {IMPORT_LOAD_OPTION[format]: load} if load is not None else {}
    results, sources, reports = [], [], []  # sources: the file each result came from
    for name, content in files:
        where = f"{name}: "
        if len(content) > MAX_IMPORT_BYTES:
            raise too_large(name, MAX_IMPORT_BYTES)
        try:
            content = unpack(name, content, max_bytes=MAX_IMPORT_BYTES)
            content.decode("utf-8")
            content, _kind = read_as(name, content, formats=(format,), max_bytes=MAX_IMPORT_BYTES)
        except FileRefused as error:
            raise ValidationError({"file": message_of(error)}) from None
        except UnicodeDecodeError as error:
            raise ValidationError(
                {
                    "file": _("%(file)s: not UTF-8 text (byte %(byte)s).")
                    % {"file": name, "byte": error.start}
                }
            ) from None
        # A byte-order mark (a CSV saved by a spreadsheet) is no part of the text.
        text = content.decode("utf-8").removeprefix("\ufeff")
        try:
            found = parse_results(format, text, **options)
        except LoadResultError as error:
            raise ValidationError({"file": f"{where}{message_of(error)}"}) from None
        if not found:
            raise ValidationError({"file": _("%(file)s: no results in the file.") % {"file": name}})
        results.extend(found)
        sources.extend([name] * len(found))
        reports.append(
            ReadReport(
                file=name,
                format=format,
                unit="requests",
                read=sum(result.requests for result in found),
                skipped={why: n for result in found for why, n in result.skipped.items()},
            )
        )
    if len({result.load_kind for result in results}) > 1:
        raise ValidationError(
            {"file": _("Some files step connections and others requests/s: import them apart.")}
        )
    loads = [result.load for result in results]
    repeated = sorted({load for load in loads if loads.count(load) > 1})
    if repeated:
        names = sorted({name for name, x in zip(sources, loads, strict=True) if x in repeated})
        raise ValidationError(
            {
                "file": _("More than one result at load %(loads)s (%(files)s).")
                % {"loads": ", ".join(f"{x:g}" for x in repeated), "files": ", ".join(names)}
            }
        )
    return sorted(results, key=lambda result: result.load), reports


def _load_number(load: float) -> int | float:
    return int(load) if float(load).is_integer() else load


@transaction.atomic
def ladder_import(
    *,
    investigation: Investigation,
    user,
    side_key: str,
    format: str,
    files: list[tuple[str, bytes]],
    ladder: Ladder | None = None,
    load: float | None = None,
) -> Ladder:
    """Results made elsewhere, onto one side: a new ladder, the other side of a ladder, or
    more steps (loads it lacks) for a side imported before. Files are (name, content).

    All or nothing: a file that does not parse leaves no trace.
    """
    errors = {}
    if side_key not in ("a", "b"):
        errors["side"] = _("Choose side a or b.")
    if format not in ImportFormat.values:
        errors["format"] = _("Choose one of: %(choices)s.") % {
            "choices": ", ".join(ImportFormat.values)
        }
    if not files:
        errors["file"] = _("Choose a result file.")
    elif len(files) > MAX_IMPORT_FILES:
        errors["file"] = _("At most %(count)s files at a time.") % {"count": MAX_IMPORT_FILES}
    if load is not None and not (isinstance(load, int | float) and 0 < load <= 10_000_000):
        errors["load"] = _("The load is a positive number.")
    if ladder is not None and ladder.investigation_id != investigation.pk:
        errors["ladder"] = _("Choose a ladder of this investigation.")
    if errors:
        raise ValidationError(errors)
    results, reports = _import_results(format, files, load)
    side = investigation.sides.get(key=side_key)
    if ladder is None:
        ladder = Ladder.objects.create(
            investigation=investigation,
            tool="",
            steps=[],
            load_kind=results[0].load_kind,
            step_seconds=int(results[0].duration_s or 0),
            warmup_seconds=0,
            status=LadderStatus.IMPORTED,
            requested_by=user,
            finished_at=timezone.now(),
        )
    ladder = Ladder.objects.select_for_update().get(pk=ladder.pk)
    if ladder.load_kind != results[0].load_kind:
        raise ValidationError(
            {
                "file": _("Ladder #%(ladder)s steps %(unit)s; these results step %(other)s.")
                % {
                    "ladder": ladder.pk,
                    "unit": _(load_unit(load_kind=ladder.load_kind)),
                    "other": _(load_unit(load_kind=results[0].load_kind)),
                }
            }
        )
    ladder_side = ladder.sides.filter(side=side).first()
    if ladder_side is None:
        ladder_side = ladder_side_add(
            ladder=ladder, side=side, status=LadderStatus.IMPORTED, source=format
        )
    elif ladder_side.status != LadderStatus.IMPORTED:
        raise ValidationError(
            {
                "side": _("Side %(side)s of ladder #%(ladder)s was run here, not imported.")
                % {"side": side_key.upper(), "ladder": ladder.pk}
            }
        )
    else:
        have = set(ladder_side.steps.values_list("load", flat=True))
        clash = sorted(have & {result.load for result in results})
        if clash:
            raise ValidationError(
                {
                    "file": _(
                        "Side %(side)s of ladder #%(ladder)s already has a step at load %(loads)s."
                    )
                    % {
                        "side": side_key.upper(),
                        "ladder": ladder.pk,
                        "loads": ", ".join(f"{x:g}" for x in clash),
                    }
                }
            )
    _import_steps(ladder_side, results)
    ladder.steps = sorted(
        {
            _load_number(x)
            for x in LadderStep.objects.filter(ladder_side__ladder=ladder).values_list(
                "load", flat=True
            )
        }
    )
    ladder.analysis = ladder_analysis(ladder=ladder)
    ladder.save(update_fields=["steps", "analysis"])
    ladder_log(
        ladder=ladder,
        summary=Phrase(
            ngettext_noop(
                "Imported %(format)s onto side %(side)s: %(count)s step (%(loads)s)",
                "Imported %(format)s onto side %(side)s: %(count)s steps (%(loads)s)",
            ),
            format=label_phrase(ImportFormat(format).label),
            side=side_key.upper(),
            count=len(results),
            loads=", ".join(f"{r.load:g}" for r in results),
        ),
        user=user,
        side=side_key,
        format=format,
    )
    checklist_refresh(investigation=investigation)
    ladder.read_report = reports
    return ladder


def _import_steps(ladder_side: LadderSide, results: list) -> None:
    """Store the new steps among the side's old ones, all numbered in order of load."""
    old = list(ladder_side.steps.all())
    for step in old:
        step.index += 1_000_000  # out of the way first: an index is unique per side
    LadderStep.objects.bulk_update(old, ["index"])
    merged = sorted([*old, *results], key=lambda item: item.load)
    for index, item in enumerate(merged):
        if isinstance(item, LadderStep):
            item.index = index
        else:
            ladder_step_store(ladder_side=ladder_side, index=index, result=item)
    LadderStep.objects.bulk_update(old, ["index"])


def ladder_uploads_read(uploads) -> list[tuple[str, bytes]]:
    """Uploaded result files as (name, content), refused by count and size before reading."""
    return uploads_read(uploads, max_bytes=MAX_IMPORT_BYTES, max_files=MAX_IMPORT_FILES)

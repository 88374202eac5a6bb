"""CPU profiles: a target's folded profile kept (or a file made elsewhere imported), then the
rules re-run over every pair's newest profiles and the checklist's profiling step told."""

import gzip
import json
import statistics
from dataclasses import dataclass, replace

from django.core.exceptions import ValidationError
from django.core.files.base import ContentFile
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from collectors.filekind import FileRefused, ReadReport, unpack
from collectors.phrase import Phrase, ngettext_noop
from collectors.profile import ProfileCheck, ProfileRequest
from collectors.stacks import (
    FoldedProfile,
    fold_perf_script,
    parse_async_profiler,
    parse_folded,
    parse_py_spy,
)
from collectors.stacks.profile import kernel_frames_seen
from collectors.stacks.recognise import EXPECTED, Recognised, recognise
from investigations.analysis.profile_rules import evaluate_profiles
from investigations.choices import EventKind, ProfileFormat
from investigations.models import CollectionTarget, Host, Investigation, Profile
from investigations.phrases import message_of, translate
from investigations.selectors.profiles import profile_pairs
from investigations.services.checklist import checklist_refresh
from investigations.services.findings import PairVerdicts, findings_recheck
from investigations.services.targets import artifact_store, target_succeed
from investigations.services.timeline import label_phrase, timeline_event_log
from investigations.uploads import too_large, uploads_read

MAX_IMPORT_BYTES = 200 * 1024 * 1024
MAX_IMPORT_FILES = 10
PARSERS = {
    ProfileFormat.PERF_SCRIPT: lambda data: fold_perf_script(data, kernel=True, jit=True),
    ProfileFormat.FOLDED: parse_folded,
    ProfileFormat.ASYNC_PROFILER: parse_async_profiler,
    ProfileFormat.PY_SPY: parse_py_spy,
}
# The format "recognise it from the file" (the import form's default): each file's own.
AUTO = "auto"
# A folded line's count does not say what it counts. stackcollapse-perf.pl adds each
# sample's period (about 10 million a sample for cpu-clock at 99 Hz, as much for cycles);
# profilers that count samples reach a few hundred on a typical stack. A typical (median)
# stack weighing more than this is events weighted by period, not samples.
PERIOD_WEIGHTS_FROM = 10_000


@dataclass
class ProfileResult:
    """What the profile plan brings back from one target."""

    request: ProfileRequest
    check: ProfileCheck
    captured: object  # runs.capture.Captured: the raw `perf script` output
    folded: FoldedProfile


def _stacks_file(folded: FoldedProfile) -> ContentFile:
    data = {"weights": folded.weights, "samples": folded.samples}
    return ContentFile(gzip.compress(json.dumps(data).encode(), compresslevel=6))


def counts_are_periods(folded: FoldedProfile) -> bool:
    """Whether a folded file's whole counts are events weighted by period (as
    stackcollapse-perf.pl writes them) rather than samples: see PERIOD_WEIGHTS_FROM."""
    if not folded.weights or not folded.has_samples:
        return False
    return statistics.median(folded.weights.values()) >= PERIOD_WEIGHTS_FROM


def _profile(folded: FoldedProfile, **fields) -> Profile:
    profile = Profile(
        samples=folded.total_samples,
        weight=folded.total_weight,
        stack_count=len(folded.weights),
        event=folded.event or "",
        collected_at=timezone.now(),
        **fields,
    )
    profile.stacks.save(f"profile-{fields['name']}.json.gz"[:100], _stacks_file(folded), save=False)
    profile.save()
    return profile


@transaction.atomic
def profile_store(
    *, target: CollectionTarget, result: ProfileResult, attempt: int
) -> Profile | None:
    """Keep a target's profile and its raw `perf script`, and finish the target; None if
    the target is no longer under this claim."""
    if not target_succeed(target=target, attempt=attempt):
        return None
    request, check = result.request, result.check
    process = {"process": request.target, "pid": f"PID {request.target}"}.get(request.mode, "")
    profile = _profile(
        result.folded,
        investigation_id=target.collection.investigation_id,
        side=target.side,
        host=target.host,
        target=target,
        format=ProfileFormat.PERF_SCRIPT,
        name=f"{target.host.name} {process}".strip(),
        process=process,
        pids=list(check.pids),
        seconds=request.seconds,
        frequency=request.frequency,
        call_graph=request.call_graph,
        kernel_stacks=check.kernel_stacks or kernel_frames_seen(result.folded.weights),
    )
    artifact_store(target=target, captured=result.captured)
    return profile


@transaction.atomic
def profile_import(
    *,
    investigation: Investigation,
    user,
    side_key: str,
    format: str,
    files: list[tuple[str, bytes]],
    host: Host | None = None,
) -> list[Profile]:
    """Profiles made elsewhere, onto a side: one profile a file, all or nothing. With the
    format AUTO each file's format is recognised from what it holds. A file that does not
    parse is refused with its name and, when it is another format (or no profile at all),
    which one it is; else with the line and what was expected."""
    errors = {}
    if side_key not in ("a", "b"):
        errors["side"] = _("Choose side a or b.")
    if format not in PARSERS and format != AUTO:
        errors["format"] = _("Choose one of: %(choices)s.") % {"choices": ", ".join(PARSERS)}
    if not files:
        errors["file"] = _("Choose a profile file.")
    elif len(files) > MAX_IMPORT_FILES:
        errors["file"] = _("At most %(count)s files at a time.") % {"count": MAX_IMPORT_FILES}
    if host is not None and host.team_id != investigation.team_id:
        errors["host"] = _("Choose a host of the investigation's team.")
    if errors:
        raise ValidationError(errors)
    side = investigation.sides.get(key=side_key)
    parsed, reports = [], []
    for name, content in files:
        if len(content) > MAX_IMPORT_BYTES:
            raise too_large(name, MAX_IMPORT_BYTES)
        try:
            content = unpack(name, content, max_bytes=MAX_IMPORT_BYTES)
        except FileRefused as error:
            raise ValidationError({"file": message_of(error)}) from None
        recognised = recognise(content)
        chosen = recognised.format if format == AUTO else format
        # A file is read as what it is, never as what was asked for: only the folded
        # formats, one format with different details, may be read as one another.
        if chosen is None or not _readable_as(recognised.format, chosen):
            raise ValidationError({"file": _not_this_format(name, chosen, recognised)})
        try:
            folded = PARSERS[chosen](content)
        except ValueError as error:
            raise ValidationError(
                {
                    "file": _not_this_format(name, chosen, recognised)
                    or f"{name}: {message_of(error)}"
                }
            ) from None
        if not folded.weights:
            raise ValidationError(
                {
                    "file": _not_this_format(name, chosen, recognised)
                    or _("%(file)s: no stacks in the file.") % {"file": name}
                }
            )
        if chosen == ProfileFormat.FOLDED and counts_are_periods(folded):
            folded = replace(folded, samples={})
        parsed.append((name, chosen, folded))
        reports.append(_report(name, chosen, folded))
    profiles = [
        _profile(
            folded,
            investigation=investigation,
            side=side,
            host=host,
            format=chosen,
            name=name[:200],
            created_by=user,
            # Only a profile's frames tell: None (not known) unless kernel frames are there.
            kernel_stacks=True if kernel_frames_seen(folded.weights) else None,
        )
        for name, chosen, folded in parsed
    ]
    for profile, report in zip(profiles, reports, strict=True):
        profile.read_report = report
    formats = list(dict.fromkeys(chosen for _name, chosen, _folded in parsed))
    timeline_event_log(
        investigation=investigation,
        kind=EventKind.COLLECTION,
        summary=Phrase(
            ngettext_noop(
                "Imported %(count)s %(format)s profile onto side %(side)s: %(files)s",
                "Imported %(count)s %(format)s profiles onto side %(side)s: %(files)s",
            ),
            count=len(profiles),
            format=", ".join(label_phrase(ProfileFormat(chosen).label) for chosen in formats),
            side=side_key.upper(),
            files=", ".join(name for name, _chosen, _folded in parsed),
        ),
        author=user,
        details={"profiles": [profile.pk for profile in profiles]},
    )
    profile_refresh(investigation=investigation)
    return profiles


_FOLDED_FAMILY = (ProfileFormat.FOLDED, ProfileFormat.ASYNC_PROFILER, ProfileFormat.PY_SPY)


def _readable_as(found: str | None, chosen: str) -> bool:
    return found == chosen or (found in _FOLDED_FAMILY and chosen in _FOLDED_FAMILY)


def _report(name: str, format: str, folded: FoldedProfile) -> ReadReport:
    """What a profile file held: its samples (its stacks when its counts are weights), and
    what was left out."""
    if folded.samples:
        unit, read = "samples", folded.total_samples
    else:  # fractional counts: weights, no samples
        unit, read = "stacks", len(folded.weights)
    return ReadReport(
        file=name,
        format=format,
        unit=unit,
        read=read,
        skipped=dict(folded.skipped),
        examples=tuple(folded.problems),
    )


def _not_this_format(name: str, chosen: str, recognised: Recognised) -> str | None:
    """Why a file cannot be read as `chosen`, when what it holds says: it is another
    profile format, or no profile at all. None when it looks like `chosen` (then the
    parser's own message, with its line, says more)."""
    if recognised.format is None:
        return _(
            "%(file)s: this is not a profile in any format read here; it looks like "
            "%(looks_like)s. %(expected)s"
        ) % {
            "file": name,
            "looks_like": translate(recognised.looks_like),
            "expected": translate(Phrase(EXPECTED)),
        }
    if _readable_as(recognised.format, chosen):
        return None
    return _("%(file)s: this is %(found)s, not %(chosen)s: import it as “%(found)s”.") % {
        "file": name,
        "found": ProfileFormat(recognised.format).label,
        "chosen": ProfileFormat(chosen).label,
    }


def profile_refresh(*, investigation: Investigation) -> None:
    """What reads the profiles: the findings of every pair's newest profiles, then the
    checklist's profiling step."""
    findings_recheck(
        investigation=investigation,
        read_pairs=lambda: [
            PairVerdicts(pair.key, pair.host_a, pair.host_b, evaluate_profiles(*_folded(pair)))
            for pair in profile_pairs(investigation=investigation)
        ],
    )
    checklist_refresh(investigation=investigation, keys=["profile_at_knee"])


def _folded(pair) -> tuple[FoldedProfile, FoldedProfile]:
    return tuple(
        FoldedProfile(weights=data["weights"], samples=data["samples"])
        for data in (pair.a.read_stacks(), pair.b.read_stacks())
    )


def profiled_evidence(investigation: Investigation) -> Phrase | None:
    """Both sides of a pair have a CPU profile."""
    pairs = profile_pairs(investigation=investigation)
    if not pairs:
        return None
    return Phrase(
        ngettext_noop(
            "CPU profiles of both sides of %(count)s pair",
            "CPU profiles of both sides of %(count)s pairs",
        ),
        count=len(pairs),
    )


def profile_uploads_read(uploads) -> list[tuple[str, bytes]]:
    """Uploaded profiles as (name, content), refused by count and size before reading."""
    return uploads_read(uploads, max_bytes=MAX_IMPORT_BYTES, max_files=MAX_IMPORT_FILES)

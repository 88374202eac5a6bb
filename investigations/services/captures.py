"""Packet captures: a target's pcap and its analysis kept (or a file made elsewhere imported
and analysed in a worker), then the rules re-run over every pair's newest captures and the
checklist's capture step told."""

import hashlib
import time
from dataclasses import dataclass
from datetime import timedelta

from django.core.exceptions import ValidationError
from django.core.files import File
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext_lazy as _
from django.utils.translation import gettext_noop, ngettext

from collectors.capture import (
    CaptureError,
    analyse_capture,
    capture_format,
    capture_header_bytes,
)
from collectors.capture.reader import PCAPNG_SECTION_MIN_BYTES
from collectors.capture.remote import CaptureRequest
from collectors.filekind import peek
from collectors.phrase import Phrase, ngettext_noop
from collectors.signatures import HEAD_BYTES, said
from investigations import jobs
from investigations.analysis.capture_marks import slowest_connection_marks
from investigations.analysis.capture_rules import evaluate_captures
from investigations.choices import CaptureStatus, EventKind
from investigations.jobs import enqueue
from investigations.models import Capture, CollectionTarget, Investigation, Job
from investigations.phrases import message_of, translate
from investigations.selectors.captures import CAPTURE_JOB, OVERDUE, capture_pairs
from investigations.services.checklist import checklist_refresh
from investigations.services.findings import PairVerdicts, findings_recheck
from investigations.services.targets import target_succeed
from investigations.services.timeline import timeline_event_log

# An imported capture file is kept and analysed up to this size, this many at a time.
MAX_IMPORT_BYTES = 2 * 1024**3
MAX_IMPORT_FILES = 10
# How often an analysis in a worker writes its progress.
PROGRESS_SECONDS = 0.5
# Until a worker claims it: an analysis no worker began (none runs, or its worker was
# killed before it did) is failed by the sweep after the task's time limit
# (tasks.CAPTURE_ANALYSE_LIMITS) and a minute in the queue.
UNCLAIMED_ANALYSIS_SECONDS = 1860 + 60


@dataclass
class CaptureResult:
    """What the capture plan brings back from one target."""

    request: CaptureRequest
    captured: object  # runs.capture.Captured: the pcap itself
    analysis: dict
    marks: list
    tcpdump: dict  # what tcpdump said at its end


def _figures(analysis: dict) -> dict:
    return {"packets": analysis.get("packets") or 0, "bytes": analysis.get("bytes") or 0}


@transaction.atomic
def capture_store(
    *, target: CollectionTarget, result: CaptureResult, attempt: int
) -> Capture | None:
    """Keep a target's pcap and analysis, and finish the target; None if the target is no
    longer under this claim."""
    if not target_succeed(target=target, attempt=attempt):
        return None
    request, captured = result.request, result.captured
    job = jobs.create(
        CAPTURE_JOB.name,
        status=CaptureStatus.READY,
        progress=100,
        began_at=timezone.now(),
        finished_at=timezone.now(),
    )
    capture = Capture(
        job=job,
        investigation_id=target.collection.investigation_id,
        side=target.side,
        host=target.host,
        target=target,
        name=target.host.name,
        interface=request.interface,
        filter=request.filter,
        seconds=request.seconds,
        snaplen=request.snaplen,
        truncated=captured.truncated,
        tcpdump=result.tcpdump,
        size=captured.size,
        sha256=captured.sha256,
        analysis=result.analysis,
        marks=result.marks,
        collected_at=timezone.now(),
        **_figures(result.analysis),
    )
    captured.file.seek(0)
    capture.pcap.save(captured.name, File(captured.file), save=False)
    capture.save()
    _job_for(capture)
    return capture


def _job_for(capture: Capture) -> None:
    """The capture's job names the capture (once the capture has its id)."""
    Job.objects.filter(pk=capture.job_id).update(object_id=capture.pk)


def _import_problem(upload) -> str | None:
    """Why an upload cannot be a capture we keep, or None (read: its first bytes only)."""
    if upload.size > MAX_IMPORT_BYTES:
        return _("%(file)s: larger than %(size)s GB.") % {
            "file": upload.name,
            "size": MAX_IMPORT_BYTES // 1024**3,
        }
    upload.seek(0)
    # Enough to tell what a file is that is no capture (collectors.signatures).
    head = upload.read(max(PCAPNG_SECTION_MIN_BYTES, HEAD_BYTES))
    upload.seek(0)
    if not head:
        return _("%(file)s is empty.") % {"file": upload.name}
    found = capture_format(head)
    header = capture_header_bytes(head)
    if found is not None and upload.size < (header or PCAPNG_SECTION_MIN_BYTES):
        # Its first bytes are a capture's, but not even the file header is whole.
        return ngettext(
            "%(file)s is %(size)d byte: too short to be a capture, whose file header alone "
            "is %(header)d bytes.",
            "%(file)s is %(size)d bytes: too short to be a capture, whose file header alone "
            "is %(header)d bytes.",
            upload.size,
        ) % {"file": upload.name, "size": upload.size, "header": header or PCAPNG_SECTION_MIN_BYTES}
    if found is None:
        return _(
            "%(file)s is not a pcap or pcapng file (tcpdump -w and Wireshark write those; "
            "convert others with editcap): it is %(looks_like)s."
        ) % {"file": upload.name, "looks_like": translate(said(peek(head)))}
    if header is None:
        return _(
            "%(file)s is not a pcap or pcapng file (tcpdump -w and Wireshark write those; "
            "convert others with editcap)."
        ) % {"file": upload.name}
    return None


@transaction.atomic
def capture_import(
    *, investigation: Investigation, user, side_key: str, uploads: list
) -> list[Capture]:
    """pcap or pcapng files made elsewhere, onto a side, all or nothing: kept as they came
    (streamed to storage, never read whole) and analysed by a worker, the page showing its
    progress. A file that is too large or no capture is refused with its name."""
    errors = {}
    if side_key not in ("a", "b"):
        errors["side"] = _("Choose side a or b.")
    if not uploads:
        errors["file"] = _("Choose a pcap or pcapng file.")
    elif len(uploads) > MAX_IMPORT_FILES:
        errors["file"] = _("At most %(count)s files at a time.") % {"count": MAX_IMPORT_FILES}
    else:
        problems = [problem for problem in map(_import_problem, uploads) if problem]
        if problems:
            errors["file"] = " ".join(problems)
    if errors:
        raise ValidationError(errors)
    side = investigation.sides.get(key=side_key)
    captures = []
    for upload in uploads:
        job = jobs.create(
            CAPTURE_JOB.name,
            status=CaptureStatus.ANALYSING,
            user=user,
            deadline_at=timezone.now() + timedelta(seconds=UNCLAIMED_ANALYSIS_SECONDS),
        )
        capture = Capture(
            investigation=investigation,
            side=side,
            name=upload.name[:200],
            size=upload.size,
            job=job,
            created_by=user,
            collected_at=timezone.now(),
        )
        capture.pcap.save(upload.name[-100:], upload, save=False)
        capture.save()
        _job_for(capture)
        captures.append(capture)
        timeline_event_log(
            investigation=investigation,
            kind=EventKind.COLLECTION,
            summary=Phrase(
                gettext_noop("Imported the capture %(file)s onto side %(side)s"),
                file=upload.name,
                side=side_key.upper(),
            ),
            author=user,
            details={"capture": capture.pk},
        )
    for capture in captures:
        enqueue("perfcase.capture_analyse", capture.pk)
    return captures


class _HashingReader:
    """A stored file read once for its analysis, its sha256 counted on the way."""

    def __init__(self, file):
        self.file, self.sha256 = file, hashlib.sha256()

    def read(self, size: int = -1) -> bytes:
        data = self.file.read(size)
        self.sha256.update(data)
        return data

    def fileno(self) -> int:  # its size, for the progress
        return self.file.fileno()

    def tell(self) -> int:
        return self.file.tell()


def capture_analyse_stored(*, capture_id: int, seconds: int) -> None:
    """Analyse an imported capture where it is stored, with constant memory, writing its
    progress as it goes; `seconds` is the task's time limit (past it the sweep fails the
    capture). Safe to run twice: a capture no longer analysing is left as it is, one still
    analysing (its worker was killed) is claimed again and analysed from the start."""
    capture = Capture.objects.select_related("investigation").filter(pk=capture_id).first()
    if capture is None:
        return
    job_id = capture.job_id
    attempt = jobs.claim(
        job_id,
        status=CaptureStatus.ANALYSING,
        claimable=CAPTURE_JOB.overdue,
        seconds=seconds,
        progress=0,
    )
    if attempt is None:
        return
    last = [0.0]

    def progress(done: int, total: int | None) -> None:
        if total and time.monotonic() - last[0] >= PROGRESS_SECONDS:
            last[0] = time.monotonic()
            jobs.progress(
                job_id,
                attempt=attempt,
                active=CAPTURE_JOB.overdue,
                percent=min(99, 100 * done // total),
            )

    try:
        with capture.pcap.open("rb") as file:
            hashing = _HashingReader(file)
            analysis = analyse_capture(hashing, progress=progress).as_dict()
            while hashing.read(1 << 20):  # past damage the analysis stopped reading
                pass
            file.seek(0)
            marks = slowest_connection_marks(file, analysis)
    except (CaptureError, OSError) as error:
        capture_analysis_fail(
            capture_id=capture_id,
            error=Phrase(
                gettext_noop("%(file)s cannot be analysed: %(error)s"),
                file=capture.name,
                error=message_of(error),
            ),
        )
        return
    with transaction.atomic():
        finished = jobs.finish(
            job_id,
            status=CaptureStatus.READY,
            attempt=attempt,
            active=CAPTURE_JOB.overdue,
            progress=100,
            deadline_at=None,
        )
        if not finished:
            return  # failed meanwhile (past its deadline), or claimed again
        Capture.objects.filter(pk=capture_id).update(
            sha256=hashing.sha256.hexdigest(),
            analysis=analysis,
            marks=marks,
            **_figures(analysis),
        )
        capture_refresh(investigation=capture.investigation)


def capture_analysis_fail(*, capture_id: int, error: Phrase | str = OVERDUE) -> None:
    """An imported capture's analysis failed: say why on it (its file stays downloadable)."""
    job_id = Capture.objects.filter(pk=capture_id).values_list("job_id", flat=True).first()
    if job_id is not None:
        jobs.finish(
            job_id,
            status=CaptureStatus.FAILED,
            active=CAPTURE_JOB.overdue,
            error=error if isinstance(error, Phrase) else Phrase(error),
            deadline_at=None,
        )


def capture_refresh(*, investigation: Investigation) -> None:
    """What reads the captures: the findings of every pair's newest captures, then the
    checklist's capture step."""
    findings_recheck(
        investigation=investigation,
        read_pairs=lambda: [
            PairVerdicts(
                pair.key,
                pair.host_a,
                pair.host_b,
                evaluate_captures(pair.a.analysis, pair.b.analysis),
            )
            for pair in capture_pairs(investigation=investigation)
        ],
    )
    checklist_refresh(investigation=investigation, keys=["packets_at_knee"])


def captured_evidence(investigation: Investigation) -> Phrase | None:
    """Both sides of a pair have a packet capture."""
    pairs = capture_pairs(investigation=investigation)
    if not pairs:
        return None
    return Phrase(
        ngettext_noop(
            "packet captures of both sides of %(count)s pair",
            "packet captures of both sides of %(count)s pairs",
        ),
        count=len(pairs),
    )

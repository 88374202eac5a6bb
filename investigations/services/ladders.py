"""Ladder load tests: request, cancel, a step's window and the knee held again (each side's
run, results and analysis: services/ladder_results.py; imports: services/ladder_imports.py).

A ladder runs as one task (tasks.ladder_run, then runs/ladder.py: a thread per side). Both
sides follow one schedule: step i starts at start_at + i * slot_seconds on both, so the two
measure the same moment; each step records when it really started.
"""

import math
from datetime import timedelta

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone
from django.utils.text import get_text_list
from django.utils.translation import gettext_lazy as _
from django.utils.translation import gettext_noop

from collectors.loadrun import validate_url
from collectors.phrase import Phrase
from investigations.choices import (
    ENDED_LADDER_STATUSES,
    RATE_TOOLS,
    LadderStatus,
    LoadKind,
    LoadTool,
)
from investigations.jobs import enqueue
from investigations.models import Investigation, Job, Ladder
from investigations.phrases import message_of, with_phrases
from investigations.selectors import ladder_load_generator
from investigations.services.ladder_results import (
    ladder_analysis,
    ladder_finish_if_done,
    ladder_log,
    ladder_side_add,
)

MAX_STEPS = 20
MAX_LOAD = 10_000
MAX_TOTAL_SECONDS = 90 * 60
# Per step, beyond warm-up and measurement: starting the samplers, storing the results.
SLOT_MARGIN_SECONDS = 4
START_DELAY_SECONDS = 3


def hold_start_seconds() -> int:
    """How long after it is asked for a ladder that holds a knee's load for a profile or a
    capture starts: late enough for their hosts to connect and check first."""
    return settings.STEP_LEAD_SECONDS + 5


def _check_numbers(steps, step_seconds, warmup_seconds, stop_error_rate, stop_p99_ms, margin):
    errors = {}
    if not isinstance(steps, list) or not steps:
        errors["steps"] = _("Give the loads of the steps, e.g. 10, 20, 50, 100.")
    elif len(steps) > MAX_STEPS:
        errors["steps"] = _("At most %(count)s steps.") % {"count": MAX_STEPS}
    elif not all(
        isinstance(s, int) and not isinstance(s, bool) and 1 <= s <= MAX_LOAD for s in steps
    ):
        errors["steps"] = _("Each step is a whole number from 1 to %(max)s.") % {
            "max": f"{MAX_LOAD:,}"
        }
    elif any(later <= earlier for earlier, later in zip(steps, steps[1:], strict=False)):
        errors["steps"] = _("A ladder steps up: give each load higher than the one before it.")
    if not 1 <= step_seconds <= 600:
        errors["step_seconds"] = _("A step lasts 1 to 600 seconds.")
    if not 0 <= warmup_seconds <= 300:
        errors["warmup_seconds"] = _("The warm-up lasts 0 to 300 seconds.")
    if not 0 < stop_error_rate <= 1:
        errors["stop_error_rate"] = _(
            "The error limit is a share above 0 and at most 1 (0.05 = 5 %)."
        )
    if stop_p99_ms is not None and not 0 < stop_p99_ms < math.inf:
        errors["stop_p99_ms"] = _("The p99 limit is a positive number of milliseconds.")
    if not 0 < margin < 1:
        errors["margin"] = _("The margin is a share between 0 and 1 (0.2 = 20 %).")
    return errors


def load_unit(*, load_kind: str) -> str:
    # English (the timeline's words); marked so that a message can translate it with _().
    return gettext_noop("requests/s") if load_kind == LoadKind.RATE else gettext_noop("connections")


def ladder_settings_check(
    *,
    side_a_url: str,
    side_b_url: str,
    steps: list[int],
    step_seconds: int = 30,
    warmup_seconds: int = 5,
    tool: str = LoadTool.WRK,
    load_kind: str = LoadKind.CONCURRENCY,
    stop_error_rate: float = 0.05,
    stop_p99_ms: float | None = None,
    margin: float = 0.2,
) -> tuple[dict, dict]:
    """(each side's URL as validated, {field: error}) of a ladder's settings, what the case
    holds aside (its load generators); a diagnosis checks its load with it too."""
    errors = _check_numbers(
        steps, step_seconds, warmup_seconds, stop_error_rate, stop_p99_ms, margin
    )
    urls = {}
    for side, url in (("a", side_a_url), ("b", side_b_url)):
        try:
            urls[side] = validate_url(url)
        except ValueError as error:
            errors[f"side_{side}_url"] = message_of(error)
    if tool not in LoadTool.values:
        errors["tool"] = _("Choose one of: %(choices)s.") % {"choices": ", ".join(LoadTool.values)}
    if load_kind not in LoadKind.values:
        errors["load_kind"] = _("Choose one of: %(choices)s.") % {
            "choices": ", ".join(LoadKind.values)
        }
    elif load_kind == LoadKind.RATE and tool not in RATE_TOOLS:
        errors["load_kind"] = _(
            "%(tool)s cannot hold a request rate: step requests/s with %(tools)s, or step "
            "connections."
        ) % {"tool": tool, "tools": get_text_list(RATE_TOOLS, _("or"))}
    return urls, errors


@transaction.atomic
def ladder_request(
    *,
    investigation: Investigation,
    user,
    side_a_url: str,
    side_b_url: str,
    steps: list[int],
    step_seconds: int = 30,
    warmup_seconds: int = 5,
    tool: str = LoadTool.WRK,
    load_kind: str = LoadKind.CONCURRENCY,
    stop_error_rate: float = 0.05,
    stop_p99_ms: float | None = None,
    margin: float = 0.2,
    start_in: float = START_DELAY_SECONDS,
    rerun_of: Ladder | None = None,
    generators: dict | None = None,
) -> Ladder:
    """Create the ladder and one run per side, log it, and enqueue the two runs; the first
    step starts `start_in` seconds from now (after its warm-up). `generators`: each side's
    load generator (its EnvironmentMember, by side key), else the side's first one;
    `rerun_of`: the ladder this one runs again (services/ladder_reruns.py)."""
    urls, errors = ladder_settings_check(
        side_a_url=side_a_url,
        side_b_url=side_b_url,
        steps=steps,
        step_seconds=step_seconds,
        warmup_seconds=warmup_seconds,
        tool=tool,
        load_kind=load_kind,
        stop_error_rate=stop_error_rate,
        stop_p99_ms=stop_p99_ms,
        margin=margin,
    )
    generators = generators or {
        side: ladder_load_generator(investigation=investigation, side_key=side)
        for side in ("a", "b")
    }
    missing = [side.upper() for side, member in generators.items() if member is None]
    if missing:
        errors["load_generator"] = _(
            "Place a host with the role 'load generator' on side %(sides)s first."
        ) % {"sides": get_text_list(missing, _("and"))}
    slot = warmup_seconds + step_seconds + SLOT_MARGIN_SECONDS
    if not errors and len(steps) * slot > MAX_TOTAL_SECONDS:
        errors["steps"] = _("The ladder would run longer than %(minutes)s minutes.") % {
            "minutes": MAX_TOTAL_SECONDS // 60
        }
    if errors:
        raise ValidationError(errors)
    ladder = Ladder.objects.create(
        investigation=investigation,
        tool=tool,
        steps=steps,
        load_kind=load_kind,
        step_seconds=step_seconds,
        warmup_seconds=warmup_seconds,
        stop_error_rate=stop_error_rate,
        stop_p99_ms=stop_p99_ms,
        margin=margin,
        start_at=timezone.now() + timedelta(seconds=start_in),
        slot_seconds=slot,
        requested_by=user,
        rerun_of=rerun_of,
    )
    for key in ("a", "b"):
        ladder_side_add(
            ladder=ladder,
            side=generators[key].side,
            load_generator=generators[key].host,
            url=urls[key],
            # Until a worker claims it: a ladder no worker ran (its worker was killed before
            # it began) is failed by the sweep after the time its run would have had.
            deadline_at=ladder.start_at
            + timedelta(seconds=len(steps) * slot + settings.LADDER_GRACE_SECONDS + 30),
        )
    summary = Phrase(
        gettext_noop(
            "Ladder started: %(steps)s %(unit)s, %(seconds)s s a step with %(tool)s; A: "
            "%(url_a)s from %(host_a)s, B: %(url_b)s from %(host_b)s"
        ),
        steps=", ".join(map(str, steps)),
        unit=Phrase(load_unit(load_kind=load_kind)),
        seconds=step_seconds,
        tool=tool,
        url_a=urls["a"],
        host_a=generators["a"].host.name,
        url_b=urls["b"],
        host_b=generators["b"].host.name,
    )
    if rerun_of is None:
        ladder_log(ladder=ladder, summary=summary, user=user)
    else:
        ladder_log(
            ladder=ladder,
            summary=Phrase(
                gettext_noop("Ladder #%(before)s run again to verify the fix: %(started)s"),
                before=rerun_of.pk,
                started=summary,
            ),
            user=user,
            rerun_of=rerun_of.pk,
        )
    limit = int(start_in + len(steps) * slot + settings.LADDER_GRACE_SECONDS)
    enqueue("perfcase.ladder_run", ladder.pk, soft_time_limit=limit, time_limit=limit + 30)
    return ladder


@transaction.atomic
def ladder_cancel(*, ladder: Ladder, user) -> Ladder:
    """Ask the running sides to stop; they kill their load tools and samplers."""
    ladder = Ladder.objects.select_for_update().get(pk=ladder.pk)
    if ladder.status == LadderStatus.IMPORTED:
        raise ValidationError(_("Imported results do not run: there is nothing to cancel."))
    if ladder.status in ENDED_LADDER_STATUSES:
        raise ValidationError(
            _("The ladder has already %(status)s.")
            % {"status": ladder.get_status_display().lower()}
        )
    if ladder.cancel_requested_at is None:
        ladder.cancel_requested_at = timezone.now()
        ladder.save(update_fields=["cancel_requested_at"])
        ladder_log(ladder=ladder, summary=Phrase(gettext_noop("Ladder cancelled")), user=user)
    # Sides not started yet end here; running ones end when their task sees the request.
    queued = Job.objects.filter(
        pk__in=ladder.sides.values("job_id"), status=LadderStatus.QUEUED
    ).update(
        status=LadderStatus.CANCELLED,
        finished_at=timezone.now(),
        **with_phrases({"error": Phrase(gettext_noop("Cancelled."))}),
    )
    if queued:
        ladder_finish_if_done(ladder_id=ladder.pk)
        ladder.refresh_from_db()
    return ladder


def ladder_step_window(*, ladder: Ladder, index: int, lead: timedelta) -> tuple:
    """When the measurement of the ladder's step `index` (from 0) begins and how long it
    lasts, for something that must start with it (a profile, a capture); a ValidationError
    when that step cannot be caught: no such step, the ladder ended, or the step begins
    within `lead`."""
    if ladder.status == LadderStatus.IMPORTED:
        raise ValidationError(
            {"ladder": _("Imported results ran elsewhere: there is no load here to profile.")}
        )
    if not 0 <= index < len(ladder.steps):
        raise ValidationError(
            {
                "step": _("Ladder #%(ladder)s has %(count)s steps.")
                % {"ladder": ladder.pk, "count": len(ladder.steps)}
            }
        )
    if ladder.status not in (LadderStatus.QUEUED, LadderStatus.RUNNING) or ladder.start_at is None:
        raise ValidationError(
            {
                "ladder": _(
                    "Ladder #%(ladder)s has ended: choose its knee to hold that load again."
                )
                % {"ladder": ladder.pk}
            }
        )
    begins = ladder.start_at + timedelta(
        seconds=index * ladder.slot_seconds + ladder.warmup_seconds
    )
    if begins < timezone.now() + lead:
        raise ValidationError(
            {
                "step": _(
                    "Step %(step)s of ladder #%(ladder)s begins in less than %(seconds)s s or "
                    "has begun: choose a later step."
                )
                % {"step": index + 1, "ladder": ladder.pk, "seconds": int(lead.total_seconds())}
            }
        )
    return begins, ladder.step_seconds


def ladder_knee_load(*, ladder: Ladder) -> float | None:
    """The load where the ladder's first knee (of either side) came, else where the sides
    diverged, else None."""
    analysis = ladder.analysis or ladder_analysis(ladder=ladder)
    knees = [knee for knee in analysis.get("knees", {}).values() if knee.get("index") is not None]
    if knees:
        return min(knees, key=lambda knee: knee["index"])["load"]
    return analysis.get("divergence", {}).get("load")


@transaction.atomic
def ladder_hold_at_knee(*, ladder: Ladder, user, seconds: int) -> tuple[Ladder, int]:
    """The load of the ladder's knee held once more on both sides, long enough to profile
    (or capture) it: a one-step ladder like this one, at that load, starting late enough for
    the hosts to be connected. Returns it and the index of its step (0)."""
    load = ladder_knee_load(ladder=ladder)
    sides = {side.side.key: side for side in ladder.sides.select_related("side", "job")}
    if ladder.status == LadderStatus.IMPORTED or not all(
        sides.get(key) and sides[key].url for key in ("a", "b")
    ):
        raise ValidationError(
            {"ladder": _("Imported results ran elsewhere: there is no load here to hold again.")}
        )
    if load is None:
        raise ValidationError(
            {
                "step": _(
                    "Ladder #%(ladder)s found no knee and no divergence: choose a step by its "
                    "number."
                )
                % {"ladder": ladder.pk}
            }
        )
    hold = ladder_request(
        investigation=ladder.investigation,
        user=user,
        side_a_url=sides["a"].url,
        side_b_url=sides["b"].url,
        steps=[load if isinstance(load, float) and not load.is_integer() else int(load)],
        step_seconds=seconds + 2,
        warmup_seconds=ladder.warmup_seconds,
        tool=ladder.tool,
        load_kind=ladder.load_kind,
        stop_error_rate=ladder.stop_error_rate,
        stop_p99_ms=ladder.stop_p99_ms,
        margin=ladder.margin,
        start_in=hold_start_seconds(),
    )
    return hold, 0

"""A ladder run again with the same settings on the same hosts, to verify a fix: the request
(compared with the run before it by selectors/ladder_compare.py; its verdict logged when it
ends, services/ladder_results.py; the checklist's step, services/knowledge.py)."""

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils.translation import gettext_lazy as _

from investigations.choices import HostRole, LadderStatus
from investigations.models import EnvironmentMember, Ladder
from investigations.services.ladders import ladder_request


class LadderStillRunning(ValidationError):
    """The ladder has not ended: it cannot be run again yet (the API answers 409)."""


@transaction.atomic
def ladder_rerun(*, ladder: Ladder, user) -> Ladder:
    """A new ladder with `ladder`'s settings (URLs, tool, steps, step length, warm-up, stop
    rule, margin) from the same load generators, its `rerun_of` set to `ladder`. Refused
    while `ladder` runs (LadderStillRunning) and for results imported from elsewhere, which
    have no run settings; a load generator no longer placed on its side is named."""
    ladder = Ladder.objects.select_related("investigation").get(pk=ladder.pk)
    sides = {
        side.side.key: side for side in ladder.sides.select_related("side", "load_generator", "job")
    }
    if ladder.status == LadderStatus.IMPORTED or not all(
        key in sides and sides[key].url and not sides[key].source and sides[key].load_generator
        for key in ("a", "b")
    ):
        raise ValidationError(
            {
                "ladder": _(
                    "Ladder #%(ladder)s holds results imported from elsewhere: it has no run "
                    "settings to run again. Start a new ladder instead."
                )
                % {"ladder": ladder.pk}
            }
        )
    if ladder.status in (LadderStatus.QUEUED, LadderStatus.RUNNING):
        raise LadderStillRunning(
            {
                "ladder": _("Ladder #%(ladder)s is still running: run it again once it has ended.")
                % {"ladder": ladder.pk}
            }
        )
    generators, errors = {}, {}
    for key, side in sides.items():
        generators[key] = (
            EnvironmentMember.objects.filter(
                investigation=ladder.investigation,
                side=side.side,
                host=side.load_generator,
                role=HostRole.LOAD_GENERATOR,
            )
            .select_related("host", "side")
            .first()
        )
        if generators[key] is None:
            errors["load_generator"] = _(
                "%(host)s is no longer a load generator on side %(side)s: place it there again "
                "to run the same ladder."
            ) % {"host": side.load_generator.name, "side": key.upper()}
    if errors:
        raise ValidationError(errors)
    return ladder_request(
        investigation=ladder.investigation,
        user=user,
        side_a_url=sides["a"].url,
        side_b_url=sides["b"].url,
        steps=list(ladder.steps),
        step_seconds=ladder.step_seconds,
        warmup_seconds=ladder.warmup_seconds,
        tool=ladder.tool,
        load_kind=ladder.load_kind,
        stop_error_rate=ladder.stop_error_rate,
        stop_p99_ms=ladder.stop_p99_ms,
        margin=ladder.margin,
        rerun_of=ladder,
        generators=generators,
    )

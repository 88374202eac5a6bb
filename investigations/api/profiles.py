"""CPU profiles: list, read, export as folded stacks, and compare two."""

from datetime import datetime

from django.core.exceptions import ValidationError
from django.http import HttpResponse
from django.utils.translation import gettext as _
from ninja import Field, Router, Schema

from collectors.stacks import FoldedProfile, compare_profiles, function_shares
from investigations.access import investigation_for_user, profile_for_user
from investigations.api.imports import ImportReadOut, importer, read_out
from investigations.api.limits import EXPENSIVE
from investigations.api.schemas import ErrorOut, Id
from investigations.choices import ProfileFormat
from investigations.models import Profile
from investigations.selectors.profiles import profile_counts, profile_get, profiles_for
from investigations.services.profiles import AUTO, profile_import, profile_uploads_read

router = Router(tags=["profiles"])
ERRORS = {400: ErrorOut, 401: ErrorOut, 403: ErrorOut, 404: ErrorOut, 422: ErrorOut}
TOP_FUNCTIONS = 50
DIFF_FUNCTIONS = 500


class ProfileOut(Schema):
    id: int
    investigation: int = Field(alias="investigation_id")
    host: int | None = Field(alias="host_id")
    host_name: str | None = None
    side: str = Field(alias="side.key")
    name: str
    format: str
    process: str = Field(description="the command name, 'PID n', or empty for every CPU")
    pids: list
    seconds: int | None
    frequency: int | None
    call_graph: str
    kernel_stacks: bool | None
    event: str
    samples: int = Field(description="plain sample count")
    weight: float = Field(description="the samples weighted by perf's period, as folded")
    counts: str = Field(
        description="what samples and weight count: 'samples' (samples is the sample count; "
        "weight the samples weighted by period, or a folded file's counts), 'period' (a "
        "folded file whose counts are events weighted by period: samples is 0), 'weights' "
        "(a folded file of fractional counts: samples is 0)"
    )
    stacks: int = Field(alias="stack_count", description="distinct stacks")
    collection: int | None = None
    collected_at: datetime

    @staticmethod
    def resolve_host_name(obj) -> str | None:
        return obj.host.name if obj.host else None

    @staticmethod
    def resolve_counts(obj) -> str:
        return profile_counts(obj)

    @staticmethod
    def resolve_collection(obj) -> int | None:
        return obj.target.collection_id if obj.target_id else None


class ProfileListOut(Schema):
    items: list[ProfileOut]


class FunctionOut(Schema):
    function: str
    self: float = Field(description="percent of the profile in the function itself")
    total: float = Field(description="percent of the profile in it and what it calls")


class ProfileDetailOut(ProfileOut):
    functions: list[FunctionOut] = Field(description=f"the top {TOP_FUNCTIONS} by total share")


class DeltaOut(Schema):
    function: str
    self_a: float
    self_b: float
    total_a: float
    total_b: float
    delta: float = Field(description="self_b - self_a, percentage points")


class DiffOut(Schema):
    a: int
    b: int
    functions: list[DeltaOut] = Field(description="largest self difference first")


def folded_of(profile: Profile) -> FoldedProfile:
    data = profile.read_stacks()
    return FoldedProfile(weights=data["weights"], samples=data["samples"])


@router.get("/investigations/{investigation_id}/profiles", response={200: ProfileListOut, **ERRORS})
def profiles_list(request, investigation_id: Id):
    """The investigation's CPU profiles, newest first."""
    investigation = investigation_for_user(request.user, investigation_id)
    return {"items": list(profiles_for(investigation=investigation).select_related("target"))}


@router.get(
    "/investigations/{investigation_id}/profiles/diff",
    response={200: DiffOut, **ERRORS},
    throttle=EXPENSIVE,
)
def profiles_diff(request, investigation_id: Id, a: Id, b: Id):
    """Side A's profile against side B's, both as percentages of their own total: every
    function's self and total share on each, largest self difference first."""
    investigation = investigation_for_user(request.user, investigation_id)
    found = {
        name: profile_get(investigation=investigation, profile_id=pk)
        for name, pk in (("a", a), ("b", b))
    }
    missing = [name for name, profile in found.items() if profile is None]
    if missing:
        raise ValidationError(
            {name: _("No such profile in this investigation.") for name in missing}
        )
    deltas = compare_profiles(folded_of(found["a"]), folded_of(found["b"]))
    return {
        "a": a,
        "b": b,
        "functions": [
            {
                "function": d.name,
                "self_a": round(d.self_a, 4),
                "self_b": round(d.self_b, 4),
                "total_a": round(d.total_a, 4),
                "total_b": round(d.total_b, 4),
                "delta": round(d.self_delta, 4),
            }
            for d in deltas[:DIFF_FUNCTIONS]
        ],
    }


@router.get("/profiles/{profile_id}", response={200: ProfileDetailOut, **ERRORS})
def profiles_get(request, profile_id: Id):
    """A profile and its hottest functions."""
    profile = profile_for_user(request.user, profile_id)
    shares = function_shares(folded_of(profile))[:TOP_FUNCTIONS]
    profile.functions = [
        {"function": s.name, "self": round(s.self_percent, 4), "total": round(s.total_percent, 4)}
        for s in shares
    ]
    return profile


@router.get("/profiles/{profile_id}/folded", response={200: None, **ERRORS})
def profiles_folded(request, profile_id: Id):
    """The folded stacks, one `stack count` a line (counts weighted by period, as
    stackcollapse-perf.pl prints them): what flamegraph.pl and speedscope read."""
    profile = profile_for_user(request.user, profile_id)
    response = HttpResponse(folded_of(profile).text(), content_type="text/plain; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="profile-{profile.pk}.folded.txt"'
    return response


class ImportedProfilesOut(Schema):
    profiles: list[ProfileOut]
    read: list[ImportReadOut] = Field(
        [], description="each file's samples read and what was skipped, and why"
    )


@importer(
    AUTO,
    *ProfileFormat.values,
    out=ImportedProfilesOut,
    summary='CPU profiles, one a file; `{"profiles": [...]}` comes back. With `auto` each '
    "file's format is recognised from what it holds (perf script, folded stacks, "
    "async-profiler or py-spy), and a file in none of them is refused saying what it looks "
    "like.",
)
def profiles_import(*, request, investigation, side, format, files, options) -> dict:
    imported = profile_import(
        investigation=investigation,
        user=request.user,
        side_key=side,
        format=format,
        files=profile_uploads_read(files),
    )
    return {
        "profiles": imported,
        "read": read_out(getattr(profile, "read_report", None) for profile in imported),
    }

"""CPU profiles: the panel that starts and lists them, a profile's flame graph, and the
differential view of two."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext_lazy as _
from django.views.decorators.http import require_POST, require_safe

from collectors.stacks import FoldedProfile, compare_profiles, function_shares
from investigations.access import investigation_for_user
from investigations.analysis.flame import diff_tree, flame_tree
from investigations.choices import Role
from investigations.forms.collections import start_ids
from investigations.forms.profiles import ProfileImportForm
from investigations.import_reports import read_summary
from investigations.runs.profile import ProfileParameters
from investigations.selectors.profiles import (
    profile_counts,
    profile_get,
    profile_kernel_stacks,
    profile_pairs,
    profiles_for,
)
from investigations.services.profiles import profile_import, profile_uploads_read
from investigations.views.evidence_items import item_or_404, requested_pair
from investigations.views.forms import on_case, submit
from investigations.views.pages import form_or
from investigations.views.panels import panel

DEFAULT_THRESHOLD = 0.1  # percent: narrower frames are merged into "[other]"
TOP_FUNCTIONS = 50
DIFF_FUNCTIONS = 200


@panel(
    name="profiles",
    title=_("CPU profiles"),
    template="investigations/_panel_profiles.html",
    order=55,
)
def profiles_context(request: HttpRequest, investigation) -> dict:
    profiles = list(profiles_for(investigation=investigation)[:50])
    return {
        "profiles": profiles,
        "profile_pairs": profile_pairs(investigation=investigation),
        "profile_form": form_or(
            request, "profile_form", lambda: ProfileParameters(auto_id=start_ids("profile"))
        ),
        "profile_import_form": form_or(request, "profile_import", ProfileImportForm),
        "ladders": list(investigation.ladders.all()[:20]),
    }


def _get(investigation, profile_id: int):
    return profile_get(investigation=investigation, profile_id=profile_id)


def _profile_or_404(investigation, profile_id) -> object:
    return item_or_404(_get, investigation, profile_id, _("No such profile in this investigation."))


def _folded(profile) -> FoldedProfile:
    data = profile.read_stacks()
    return FoldedProfile(weights=data["weights"], samples=data["samples"])


def _threshold(request: HttpRequest) -> float:
    try:
        return min(max(float(request.GET.get("threshold", DEFAULT_THRESHOLD)), 0.0), 10.0)
    except ValueError:
        return DEFAULT_THRESHOLD


@require_safe
@login_required
def profile_detail(request: HttpRequest, pk: int, profile_id: int) -> HttpResponse:
    investigation = investigation_for_user(request.user, pk)
    profile = _profile_or_404(investigation, profile_id)
    artifact = profile.target.artifacts.first() if profile.target_id else None
    folded = _folded(profile)
    return render(
        request,
        "investigations/profile_detail.html",
        {
            "investigation": investigation,
            "profile": profile,
            "flame_url": reverse("profile_flame", args=[pk, profile.pk]),
            "folded_url": reverse("profile_folded", args=[pk, profile.pk]),
            "raw_url": reverse("artifact_download", args=[artifact.pk]) if artifact else None,
            "diff_choices": [p for p in profiles_for(investigation=investigation) if p != profile],
            "diff_url": reverse("profile_diff", args=[pk]),
            "functions": function_shares(folded)[:TOP_FUNCTIONS],
            "counts": profile_counts(profile),
            "kernel_stacks": profile_kernel_stacks(profile, folded.weights),
        },
    )


@require_safe
@login_required
def profile_flame(request: HttpRequest, pk: int, profile_id: int) -> JsonResponse:
    investigation = investigation_for_user(request.user, pk)
    data = _profile_or_404(investigation, profile_id).read_stacks()
    return JsonResponse(flame_tree(data["weights"], data["samples"], threshold=_threshold(request)))


@require_safe
@login_required
def profile_folded(request: HttpRequest, pk: int, profile_id: int) -> HttpResponse:
    """The folded stacks as flamegraph.pl and speedscope read them."""
    investigation = investigation_for_user(request.user, pk)
    profile = _profile_or_404(investigation, profile_id)
    response = HttpResponse(_folded(profile).text(), content_type="text/plain; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="profile-{profile.pk}.folded.txt"'
    return response


def _pair(request: HttpRequest, investigation):
    """The two profiles the query names (?a=&b=), or the newest pair's."""
    return requested_pair(
        request,
        investigation,
        get=_get,
        pairs=lambda: profile_pairs(investigation=investigation),
        missing=_("No such profile in this investigation."),
        none_yet=_("No pair of profiles to compare yet."),
    )


def _view_options(request: HttpRequest) -> dict:
    shape = request.GET.get("shape", "both")
    measure = request.GET.get("measure", "total")
    return {
        "threshold": _threshold(request),
        "shape": shape if shape in ("a", "b", "both") else "both",
        "measure": measure if measure in ("total", "self") else "total",
    }


@require_safe
@login_required
def profile_diff(request: HttpRequest, pk: int) -> HttpResponse:
    investigation = investigation_for_user(request.user, pk)
    a, b = _pair(request, investigation)
    options = _view_options(request)
    query = f"?a={a.pk}&b={b.pk}"
    return render(
        request,
        "investigations/profile_diff.html",
        {
            "investigation": investigation,
            "a": a,
            "b": b,
            "diff_flame_url": reverse("profile_diff_flame", args=[pk]) + query,
            "functions": compare_profiles(_folded(a), _folded(b))[:DIFF_FUNCTIONS],
            "choices": list(profiles_for(investigation=investigation)),
            **options,
        },
    )


@require_safe
@login_required
def profile_diff_flame(request: HttpRequest, pk: int) -> JsonResponse:
    investigation = investigation_for_user(request.user, pk)
    a, b = _pair(request, investigation)
    return JsonResponse(
        diff_tree(a.read_stacks()["weights"], b.read_stacks()["weights"], **_view_options(request))
    )


@require_POST
@login_required
def profile_import_view(request: HttpRequest, pk: int) -> HttpResponse:
    investigation = investigation_for_user(request.user, pk, Role.RESPONDER)
    form = ProfileImportForm(request.POST, request.FILES)

    def imported(profiles) -> HttpResponse:
        found = read_summary(getattr(profile, "read_report", None) for profile in profiles)
        done = _("Profiles imported.")
        messages.success(request, f"{done} {found}".strip())
        return redirect(reverse("investigation_detail", args=[pk]) + "#profiles")

    return submit(
        form,
        lambda data: profile_import(
            investigation=investigation,
            user=request.user,
            side_key=data["side"],
            format=data["format"],
            files=profile_uploads_read(data["file"]),
        ),
        done=imported,
        failed=on_case(request, investigation, panel="profiles", name="profile_import"),
    )

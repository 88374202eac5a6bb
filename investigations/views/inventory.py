from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext_lazy as _
from django.views.decorators.http import require_POST, require_safe
from django_htmx.http import HttpResponseStopPolling

from collectors.errors import CollectorError
from investigations.access import credential_for_user, host_for_user
from investigations.choices import Role, ScanStatus
from investigations.forms import (
    CredentialForm,
    HostCreateForm,
    HostForm,
    HostKeyTrustForm,
)
from investigations.phrases import translate
from investigations.selectors import (
    credentials_for_user,
    credentials_in_teams,
    host_placements,
    hosts_for_user,
    jump_hosts_in_teams,
    teams_for_user,
    teams_with_role,
)
from investigations.selectors.inventory import host_key_scan_state
from investigations.services.hostkeys import host_key_scan_request, host_key_trust
from investigations.services.inventory import (
    credential_create,
    credential_delete,
    host_create,
    host_delete,
    host_update,
)
from investigations.views.forms import submit
from investigations.views.pages import paginate, query_id

WRITERS = [Role.RESPONDER, Role.LEAD]


def _writable_teams(request: HttpRequest):
    """Teams the user may add hosts and credentials to; a POST with none is refused."""
    teams = teams_with_role(user=request.user, roles=WRITERS)
    if request.method == "POST" and not teams.exists():
        raise PermissionDenied(_("Only responders and leads of a team may do this."))
    return teams


def _host_choices(writable, team=None, host=None):
    """The credentials and jump hosts a host form offers: of the writable teams, or of one
    (never the host itself as its own jump host)."""
    return {
        "credentials": credentials_in_teams(teams=writable, team=team),
        "jump_hosts": jump_hosts_in_teams(teams=writable, team=team, excluding=host),
    }


@login_required
def host_list(request: HttpRequest) -> HttpResponse:
    teams = teams_for_user(user=request.user)
    writable = _writable_teams(request)
    team_id = query_id(request, "team")
    hosts = hosts_for_user(user=request.user, team_id=team_id)
    form = HostCreateForm(request.POST or None, teams=writable, **_host_choices(writable))

    def page(form) -> HttpResponse:
        return render(
            request,
            "investigations/host_list.html",
            {
                "page": paginate(request, hosts),
                "teams": teams,
                "team_id": str(team_id or ""),
                "form": form if writable.exists() else None,
            },
        )

    def added(host) -> HttpResponse:
        messages.success(request, _("Host %(name)s added.") % {"name": host.name})
        return redirect("host_list")

    if request.method != "POST":
        return page(form)
    return submit(form, lambda data: host_create(**data), done=added, failed=page)


@login_required
def host_detail(request: HttpRequest, pk: int) -> HttpResponse:
    host = host_for_user(request.user, pk)
    can_write = Role.rank(host.user_role) >= Role.rank(Role.RESPONDER)
    initial = {
        "name": host.name,
        "address": host.address,
        "port": host.port,
        "username": host.username,
        "credential": host.credential,
        "jump_host": host.jump_host,
        "transport": host.transport,
    }
    choices = _host_choices(_writable_teams(request), host.team, host)
    form = HostForm(request.POST or None, initial=initial, **choices)

    def page(form) -> HttpResponse:
        return render(
            request,
            "investigations/host_detail.html",
            {
                "host": host,
                "form": form,
                "can_write": can_write,
                "placements": host_placements(host=host),
                **_host_key_context(host),
            },
        )

    def saved(result) -> HttpResponse:
        messages.success(request, _("Host saved."))
        return redirect("host_detail", pk=host.pk)

    if request.method != "POST":
        return page(form)
    host = host_for_user(request.user, pk, Role.RESPONDER)
    return submit(form, lambda data: host_update(host=host, **data), done=saved, failed=page)


@require_POST
@login_required
def host_remove(request: HttpRequest, pk: int) -> HttpResponse:
    host = host_for_user(request.user, pk, Role.RESPONDER)
    try:
        host_delete(host=host)
    except ValidationError as error:
        messages.error(request, " ".join(error.messages))
        return redirect("host_detail", pk=host.pk)
    messages.success(request, _("Host %(name)s deleted.") % {"name": host.name})
    return redirect("host_list")


@login_required
def credential_list(request: HttpRequest) -> HttpResponse:
    writable = _writable_teams(request)
    form = CredentialForm(request.POST or None, teams=writable)

    def page(form) -> HttpResponse:
        if form.is_bound:
            # Never send a secret back to the browser, even into a form with errors.
            form.data = form.data.copy()
            form.data["private_key"] = ""
            form.data["passphrase"] = ""
        return render(
            request,
            "investigations/credential_list.html",
            {
                "page": paginate(request, credentials_for_user(user=request.user)),
                "form": form if writable.exists() else None,
            },
        )

    def saved(credential) -> HttpResponse:
        messages.success(
            request,
            _("Credential %(name)s saved (%(fingerprint)s).")
            % {"name": credential.name, "fingerprint": credential.fingerprint},
        )
        return redirect("credential_list")

    if request.method != "POST":
        return page(form)
    return submit(
        form,
        lambda data: credential_create(user=request.user, **data),
        done=saved,
        failed=page,
    )


@require_POST
@login_required
def credential_remove(request: HttpRequest, pk: int) -> HttpResponse:
    credential = credential_for_user(request.user, pk, Role.RESPONDER)
    try:
        credential_delete(credential=credential)
    except ValidationError as error:
        messages.error(request, " ".join(error.messages))
    else:
        messages.success(request, _("Credential %(name)s deleted.") % {"name": credential.name})
    return redirect("credential_list")


@require_POST
@login_required
def host_key_scan_view(request: HttpRequest, pk: int) -> HttpResponse:
    host = host_for_user(request.user, pk, Role.RESPONDER)
    try:
        host_key_scan_request(host=host, user=request.user)
    except CollectorError as error:
        messages.error(request, translate(error.phrase))
    except ValidationError as error:
        messages.error(request, " ".join(error.messages))
    return redirect(reverse("host_detail", args=[pk]) + "#host-key")


@require_safe
@login_required
def host_key_card(request: HttpRequest, pk: int) -> HttpResponse:
    """The host key card, polled by htmx while a scan runs; the last answer stops it."""
    host = host_for_user(request.user, pk)
    response = render(request, "investigations/_host_key.html", _host_key_context(host))
    if host_key_scan_state(host=host)["status"] != ScanStatus.SCANNING:
        response.status_code = HttpResponseStopPolling.status_code
    return response


def _host_key_context(host) -> dict:
    return {
        "host": host,
        "scan": host_key_scan_state(host=host),
        "can_write": Role.rank(host.user_role) >= Role.rank(Role.RESPONDER),
    }


@require_POST
@login_required
def host_key_trust_view(request: HttpRequest, pk: int) -> HttpResponse:
    host = host_for_user(request.user, pk, Role.RESPONDER)
    form = HostKeyTrustForm(request.POST)
    try:
        if not form.is_valid():
            raise ValidationError(_("Give the fingerprint you compared."))
        host_key_trust(host=host, user=request.user, fingerprint=form.cleaned_data["fingerprint"])
    except ValidationError as error:
        messages.error(request, " ".join(error.messages))
    else:
        messages.success(
            request, _("The host key of %(host)s is now trusted.") % {"host": host.name}
        )
    return redirect(reverse("host_detail", args=[pk]) + "#host-key")

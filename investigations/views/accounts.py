from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from investigations.forms import ApiTokenForm, attach_errors
from investigations.selectors import api_token_get, api_tokens_for
from investigations.services.tokens import api_token_create, api_token_revoke


@login_required
def profile(request: HttpRequest) -> HttpResponse:
    form = ApiTokenForm(request.POST or None)
    new_token = None
    if request.method == "POST" and form.is_valid():
        try:
            _, new_token = api_token_create(user=request.user, name=form.cleaned_data["name"])
        except ValidationError as error:
            attach_errors(form, error)
        else:
            form = ApiTokenForm()
    response = render(
        request,
        "investigations/profile.html",
        {"form": form, "tokens": api_tokens_for(user=request.user), "new_token": new_token},
    )
    # The page may hold a token shown once: no cache may keep it.
    response["Cache-Control"] = "no-store"
    return response


@require_POST
@login_required
def token_revoke(request: HttpRequest, pk: int) -> HttpResponse:
    token = api_token_get(user=request.user, token_id=pk)
    if token is None:
        raise Http404
    api_token_revoke(token=token)
    messages.success(request, f"Token {token.name} revoked.")
    return redirect("profile")

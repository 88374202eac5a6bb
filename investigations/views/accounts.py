from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import check_for_language
from django.utils.translation import gettext_lazy as _
from django.views.decorators.http import require_POST

from investigations.forms import ApiTokenForm
from investigations.selectors import api_token_get, api_tokens_for
from investigations.services.accounts import user_language_set
from investigations.services.tokens import api_token_create, api_token_revoke
from investigations.views.forms import submit


@login_required
def profile(request: HttpRequest) -> HttpResponse:
    def page(form, new_token=None) -> HttpResponse:
        response = render(
            request,
            "investigations/profile.html",
            {
                "form": form,
                "tokens": api_tokens_for(user=request.user),
                "new_token": new_token,
                "now": timezone.now(),
                "token_days": settings.API_TOKEN_DAYS,
            },
        )
        # The page may hold a token shown once: no cache may keep it.
        response["Cache-Control"] = "no-store"
        return response

    if request.method != "POST":
        return page(ApiTokenForm())
    return submit(
        ApiTokenForm(request.POST),
        lambda data: api_token_create(user=request.user, name=data["name"]),
        done=lambda created: page(ApiTokenForm(), new_token=created[1]),
        failed=page,
    )


@require_POST
@login_required
def token_revoke(request: HttpRequest, pk: int) -> HttpResponse:
    token = api_token_get(user=request.user, token_id=pk)
    if token is None:
        raise Http404
    api_token_revoke(token=token)
    messages.success(request, _("Token %(name)s revoked.") % {"name": token.name})
    return redirect("profile")


@require_POST
def language_set(request: HttpRequest) -> HttpResponse:
    """The menu's language switch: remembered in a cookie, and for a signed-in person in
    their profile too, so it follows them to other browsers. "" follows the browser again."""
    language = request.POST.get("language", "")
    if language and not check_for_language(language):
        language = ""
    target = request.POST.get("next") or request.headers.get("referer") or "/"
    if not url_has_allowed_host_and_scheme(
        target, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        target = "/"
    response = redirect(target)
    if request.user.is_authenticated:
        user_language_set(user=request.user, language=language)
    if language:
        response.set_cookie(
            settings.LANGUAGE_COOKIE_NAME,
            language,
            max_age=settings.LANGUAGE_COOKIE_AGE,
            samesite="Lax",
            secure=request.is_secure(),
        )
    else:
        response.delete_cookie(settings.LANGUAGE_COOKIE_NAME)
    return response

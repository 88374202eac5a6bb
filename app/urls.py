from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path, re_path
from django.views.generic import RedirectView

from investigations.api import api
from investigations.api.root import api_not_found

urlpatterns = [
    path("", RedirectView.as_view(pattern_name="investigation_list"), name="home"),
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("admin/", admin.site.urls),
    path("api/", api.urls),
    # Any other path under /api/ is a JSON 404, as the API's own 404s are.
    re_path(r"^api/", api_not_found),
    path("", include("investigations.urls")),
]

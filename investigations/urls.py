from django.urls import path

from investigations.views import accounts, health, inventory, investigations, teams, timeline

urlpatterns = [
    path("healthz", health.healthz, name="healthz"),
    path("investigations/", investigations.investigation_list, name="investigation_list"),
    path("investigations/new/", investigations.investigation_new, name="investigation_new"),
    path(
        "investigations/<int:pk>/", investigations.investigation_detail, name="investigation_detail"
    ),
    path(
        "investigations/<int:pk>/edit/",
        investigations.investigation_edit,
        name="investigation_edit",
    ),
    path(
        "investigations/<int:pk>/status/",
        investigations.investigation_status,
        name="investigation_status",
    ),
    path("investigations/<int:pk>/sides/<str:key>/", investigations.side_edit, name="side_edit"),
    path("investigations/<int:pk>/members/", investigations.member_new, name="member_new"),
    path(
        "investigations/<int:pk>/members/<int:member_pk>/delete/",
        investigations.member_delete,
        name="member_delete",
    ),
    path("investigations/<int:pk>/timeline/", timeline.timeline, name="timeline"),
    path("teams/", teams.team_list, name="team_list"),
    path("teams/<int:pk>/", teams.team_detail, name="team_detail"),
    path("teams/<int:pk>/webhook/", teams.team_webhook, name="team_webhook"),
    path("memberships/<int:pk>/", teams.membership_edit, name="membership_edit"),
    path("hosts/", inventory.host_list, name="host_list"),
    path("hosts/<int:pk>/", inventory.host_detail, name="host_detail"),
    path("hosts/<int:pk>/delete/", inventory.host_remove, name="host_remove"),
    path("credentials/", inventory.credential_list, name="credential_list"),
    path("credentials/<int:pk>/delete/", inventory.credential_remove, name="credential_remove"),
    path("profile/", accounts.profile, name="profile"),
    path("profile/tokens/<int:pk>/revoke/", accounts.token_revoke, name="token_revoke"),
]

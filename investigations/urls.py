from django.urls import path

from investigations.views import (
    accounts,
    checklist,
    collections,
    health,
    inventory,
    investigations,
    ladders,
    panels,
    teams,
    timeline,
)
from investigations.views import path as path_views

urlpatterns = [
    path("healthz", health.healthz, name="healthz"),
    path("investigations/", investigations.investigation_list, name="investigation_list"),
    path("investigations/new/", investigations.investigation_new, name="investigation_new"),
    path(
        "investigations/<int:pk>/", investigations.investigation_detail, name="investigation_detail"
    ),
    path(
        "investigations/<int:pk>/panels/<slug:name>/",
        panels.investigation_panel,
        name="investigation_panel",
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
    path("timeline/<int:pk>/edit/", timeline.timeline_entry_edit_view, name="timeline_entry_edit"),
    path(
        "timeline/<int:pk>/delete/",
        timeline.timeline_entry_delete_view,
        name="timeline_entry_delete",
    ),
    path(
        "investigations/<int:pk>/collections/",
        collections.collection_new,
        name="collection_new",
    ),
    path("investigations/<int:pk>/facts/diff/", collections.facts_diff, name="facts_diff"),
    path("collections/<int:pk>/", collections.collection_status, name="collection_status"),
    path("findings/<int:pk>/status/", collections.finding_status, name="finding_status"),
    path("artifacts/<int:pk>/", collections.artifact_download, name="artifact_download"),
    path("investigations/<int:pk>/path/", path_views.path_panel, name="path_panel"),
    path("investigations/<int:pk>/path/text/", path_views.path_text, name="path_text"),
    path("investigations/<int:pk>/path/nodes/", path_views.path_node_new, name="path_node_new"),
    path(
        "investigations/<int:pk>/path/nodes/<int:node_pk>/", path_views.path_node, name="path_node"
    ),
    path(
        "investigations/<int:pk>/path/nodes/<int:node_pk>/state/",
        path_views.path_node_state,
        name="path_node_state",
    ),
    path(
        "investigations/<int:pk>/path/nodes/<int:node_pk>/file/",
        path_views.path_node_file,
        name="path_node_file",
    ),
    path(
        "investigations/<int:pk>/path/nodes/<int:node_pk>/delete/",
        path_views.path_node_remove,
        name="path_node_remove",
    ),
    path("investigations/<int:pk>/path/edges/", path_views.path_edge_new, name="path_edge_new"),
    path(
        "investigations/<int:pk>/path/edges/<int:edge_pk>/delete/",
        path_views.path_edge_remove,
        name="path_edge_remove",
    ),
    path("investigations/<int:pk>/checklist/", checklist.checklist, name="checklist"),
    path("checklist/<int:pk>/", checklist.checklist_item, name="checklist_item"),
    path("checklist/mine/", checklist.my_items, name="my_items"),
    path("investigations/<int:pk>/ladders/", ladders.ladder_new, name="ladder_new"),
    path("investigations/<int:pk>/imports/", ladders.ladder_import_view, name="ladder_import"),
    path("ladders/<int:pk>/", ladders.ladder_detail, name="ladder_detail"),
    path("ladders/<int:pk>/cancel/", ladders.ladder_cancel_view, name="ladder_cancel"),
    path("teams/", teams.team_list, name="team_list"),
    path("teams/<int:pk>/", teams.team_detail, name="team_detail"),
    path("teams/<int:pk>/webhook/", teams.team_webhook, name="team_webhook"),
    path("memberships/<int:pk>/", teams.membership_edit, name="membership_edit"),
    path("hosts/", inventory.host_list, name="host_list"),
    path("hosts/<int:pk>/", inventory.host_detail, name="host_detail"),
    path("hosts/<int:pk>/delete/", inventory.host_remove, name="host_remove"),
    path("hosts/<int:pk>/host-key/scan/", inventory.host_key_scan_view, name="host_key_scan"),
    path("hosts/<int:pk>/host-key/trust/", inventory.host_key_trust_view, name="host_key_trust"),
    path("credentials/", inventory.credential_list, name="credential_list"),
    path("credentials/<int:pk>/delete/", inventory.credential_remove, name="credential_remove"),
    path("profile/", accounts.profile, name="profile"),
    path("language/", accounts.language_set, name="language_set"),
    path("profile/tokens/<int:pk>/revoke/", accounts.token_revoke, name="token_revoke"),
]

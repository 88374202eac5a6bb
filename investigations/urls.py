from django.urls import path

from investigations.kinds import kinds
from investigations.views import (
    accounts,
    checklist,
    collections,
    diagnoses,
    health,
    inventory,
    investigations,
    knowledge,
    panels,
    postmortem,
    root_causes,
    teams,
    timeline,
)
from investigations.views import path as path_views

urlpatterns = [
    path("investigations/<int:pk>/diagnoses/", diagnoses.diagnosis_new, name="diagnosis_new"),
    path("diagnoses/<int:pk>/", diagnoses.diagnosis_live, name="diagnosis_live"),
    path("diagnoses/<int:pk>/cancel/", diagnoses.diagnosis_cancel_view, name="diagnosis_cancel"),
    path("healthz", health.healthz, name="healthz"),
    path("csp-report/", health.csp_report, name="csp_report"),
    path("investigations/", investigations.investigation_list, name="investigation_list"),
    path("investigations/new/", investigations.investigation_new, name="investigation_new"),
    path(
        "investigations/<int:pk>/", investigations.investigation_detail, name="investigation_detail"
    ),
    path(
        "investigations/<int:pk>/head/",
        investigations.investigation_head,
        name="investigation_head",
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
    path("collections/<int:pk>/", collections.collection_status, name="collection_status"),
    path(
        "collections/<int:pk>/cancel/",
        collections.collection_cancel_view,
        name="collection_cancel",
    ),
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
    path("teams/", teams.team_list, name="team_list"),
    path("teams/<int:pk>/", teams.team_detail, name="team_detail"),
    path("teams/<int:pk>/webhook/", teams.team_webhook, name="team_webhook"),
    path("memberships/<int:pk>/", teams.membership_edit, name="membership_edit"),
    path(
        "teams/<int:pk>/invitations/<int:invitation_pk>/withdraw/",
        teams.invitation_withdraw_view,
        name="invitation_withdraw",
    ),
    path("invitations/<int:pk>/", teams.invitation_answer, name="invitation_answer"),
    path("hosts/", inventory.host_list, name="host_list"),
    path("hosts/<int:pk>/", inventory.host_detail, name="host_detail"),
    path("hosts/<int:pk>/delete/", inventory.host_remove, name="host_remove"),
    path("hosts/<int:pk>/host-key/scan/", inventory.host_key_scan_view, name="host_key_scan"),
    path("hosts/<int:pk>/host-key/", inventory.host_key_card, name="host_key_card"),
    path("hosts/<int:pk>/host-key/trust/", inventory.host_key_trust_view, name="host_key_trust"),
    path("credentials/", inventory.credential_list, name="credential_list"),
    path("credentials/<int:pk>/delete/", inventory.credential_remove, name="credential_remove"),
    path("profile/", accounts.profile, name="profile"),
    path("language/", accounts.language_set, name="language_set"),
    path("profile/tokens/<int:pk>/revoke/", accounts.token_revoke, name="token_revoke"),
    path("knowledge/", knowledge.root_cause_list, name="root_cause_list"),
    path("knowledge/new/", knowledge.root_cause_new, name="root_cause_new"),
    path("knowledge/<int:pk>/", knowledge.root_cause_detail, name="root_cause_detail"),
    path("knowledge/<int:pk>/edit/", knowledge.root_cause_edit, name="root_cause_edit"),
    path("search/", knowledge.search, name="search"),
    path(
        "investigations/<int:pk>/root-causes/",
        root_causes.case_root_cause_new,
        name="case_root_cause_new",
    ),
    path(
        "investigations/<int:pk>/root-causes/<int:root_cause_id>/propose/",
        root_causes.case_root_cause_propose,
        name="case_root_cause_propose",
    ),
    path(
        "investigations/<int:pk>/root-causes/<int:root_cause_id>/withdraw/",
        root_causes.case_root_cause_withdraw,
        name="case_root_cause_withdraw",
    ),
    path("investigations/<int:pk>/postmortem/", postmortem.postmortem, name="postmortem"),
    path(
        "investigations/<int:pk>/postmortem/print/",
        postmortem.postmortem_print,
        name="postmortem_print",
    ),
    path(
        "investigations/<int:pk>/postmortem.md",
        postmortem.postmortem_markdown,
        name="postmortem_markdown",
    ),
    path(
        "investigations/<int:pk>/postmortem/actions/",
        postmortem.postmortem_action_new,
        name="postmortem_action_new",
    ),
    path(
        "investigations/<int:pk>/postmortem/actions/<int:action_id>/",
        postmortem.postmortem_action,
        name="postmortem_action",
    ),
    path(
        "investigations/<int:pk>/postmortem/actions/<int:action_id>/delete/",
        postmortem.postmortem_action_delete,
        name="postmortem_action_delete",
    ),
]

# Each registered evidence kind's own pages (investigations/kinds/), their names unchanged.
urlpatterns += [pattern for kind in kinds() if kind.urls for pattern in kind.urls()]

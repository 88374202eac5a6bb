"""The traffic-path panel: every write returns the panel again (htmx) or goes back to the
page (without JavaScript), and tells the checklist to refresh itself."""

from django.contrib.auth.decorators import login_required
from django.http import FileResponse, Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.cache import patch_vary_headers
from django.utils.translation import gettext_lazy as _
from django.views.decorators.http import require_POST

from investigations.access import investigation_for_user
from investigations.choices import Role
from investigations.forms import (
    PathEdgeForm,
    PathNodeEditForm,
    PathNodeForm,
    PathNodeStateForm,
    PathTextForm,
    format_values,
)
from investigations.selectors import (
    collection_choices,
    hosts_for_user,
    path_edge_get,
    path_edges,
    path_figure,
    path_node_choices,
    path_node_get,
    path_nodes,
)
from investigations.services.path import (
    path_edge_create,
    path_edge_delete,
    path_from_text,
    path_node_create,
    path_node_delete,
    path_node_set_state,
    path_node_update,
)
from investigations.views.case_page import investigation_page
from investigations.views.evidence_items import stored_file
from investigations.views.forms import submit
from investigations.views.pages import form_failed, query_id, wants_partial
from investigations.views.panels import panel


def requested_node(request: HttpRequest, investigation):
    """The path node whose details are open (?node=ID), if any."""
    node_id = query_id(request, "node")
    if node_id is None:
        return None
    return path_node_get(investigation=investigation, node_id=node_id)


def _node(investigation, node_pk: int):
    """The investigation's path node (404 if its path has none with this id)."""
    node = path_node_get(investigation=investigation, node_id=node_pk)
    if node is None:
        raise Http404
    return node


def path_context(investigation, user, *, node=None, **forms) -> dict:
    nodes = path_nodes(investigation=investigation)  # evaluated once, then cached
    edges = list(path_edges(investigation=investigation))
    context = {
        "investigation": investigation,
        "path_nodes": nodes,
        "path_edges": edges,
        "path_figure": path_figure(nodes=nodes, edges=edges),
        "can_write": investigation.user_role != Role.VIEWER,
        "text_form": forms.get("text_form") or PathTextForm(),
        "node_form": forms.get("node_form") or PathNodeForm(),
        "edge_form": forms.get("edge_form") or PathEdgeForm(nodes=nodes),
        "node": node,
    }
    if node is not None:
        hosts = hosts_for_user(user=user, team=investigation.team)
        context["node_edit_form"] = forms.get("node_edit_form") or PathNodeEditForm(
            hosts=hosts,
            initial={
                "kind": node.kind,
                "label": node.label,
                "spec_a": node.spec_a,
                "spec_b": node.spec_b,
                "values_a": format_values(node.values_a),
                "values_b": format_values(node.values_b),
                "hosts_a": node.hosts_a.all(),
                "hosts_b": node.hosts_b.all(),
            },
        )
        context["state_form"] = forms.get("state_form") or PathNodeStateForm(
            collections=collection_choices(investigation=investigation),
            initial={"state": node.state},
        )
        context["node_edges"] = [e for e in edges if node.pk in (e.source_id, e.target_id)]
    return context


@panel(name="path", title=_("Traffic path"), template="investigations/_path.html", order=30)
def path_panel_context(request: HttpRequest, investigation) -> dict:
    # After a form of the path failed without JavaScript: that form, at its node.
    node = getattr(request, "path_node", None) or requested_node(request, investigation)
    return path_context(
        investigation, request.user, node=node, **getattr(request, "failed_forms", {})
    )


def _panel(request: HttpRequest, investigation, *, node=None, status=200, **forms):
    if not wants_partial(request):
        if status != 200:
            # The page with every panel drawn, the form that failed open in this one.
            form_failed(request, **forms)
            request.path_node = node
            return investigation_page(request, investigation, status=status)
        anchor = f"?node={node.pk}#path" if node is not None else "#path"
        return redirect(reverse("investigation_detail", args=[investigation.pk]) + anchor)
    response = render(
        request,
        "investigations/_path.html",
        path_context(investigation, request.user, node=node, **forms),
        status=status,
    )
    # The checklist listens for this and refreshes itself at once.
    response["HX-Trigger"] = "checklistChanged"
    patch_vary_headers(response, ["HX-Request"])
    return response


def _writable(request, pk):
    return investigation_for_user(request.user, pk, Role.RESPONDER)


@login_required
def path_panel(request: HttpRequest, pk: int) -> HttpResponse:
    investigation = investigation_for_user(request.user, pk)
    return _panel(request, investigation, node=requested_node(request, investigation))


@login_required
def path_node_file(request: HttpRequest, pk: int, node_pk: int) -> FileResponse:
    """The evidence file of a hop, for members of the investigation's team only."""
    investigation = investigation_for_user(request.user, pk)
    node = _node(investigation, node_pk)
    if not node.state_file:
        raise Http404(_("This hop has no evidence file."))
    return stored_file(
        node.state_file,
        filename=node.state_file.name.rsplit("/", 1)[-1],
        gone=_("The evidence file is no longer stored."),
    )


@require_POST
@login_required
def path_text(request: HttpRequest, pk: int) -> HttpResponse:
    investigation = _writable(request, pk)
    return submit(
        PathTextForm(request.POST),
        lambda data: path_from_text(investigation=investigation, user=request.user, **data),
        done=lambda path: _panel(request, investigation),
        failed=lambda form: _panel(request, investigation, text_form=form, status=400),
    )


@require_POST
@login_required
def path_node_new(request: HttpRequest, pk: int) -> HttpResponse:
    investigation = _writable(request, pk)
    return submit(
        PathNodeForm(request.POST),
        lambda data: path_node_create(investigation=investigation, user=request.user, **data),
        done=lambda node: _panel(request, investigation, node=node),
        failed=lambda form: _panel(request, investigation, node_form=form, status=400),
    )


@login_required
def path_node(request: HttpRequest, pk: int, node_pk: int) -> HttpResponse:
    """GET: the node's details in the panel. POST: save its specifications and hosts."""
    if request.method != "POST":
        investigation = investigation_for_user(request.user, pk)
        node = _node(investigation, node_pk)
        return _panel(request, investigation, node=node)
    investigation = _writable(request, pk)
    node = _node(investigation, node_pk)
    return submit(
        PathNodeEditForm(
            request.POST, hosts=hosts_for_user(user=request.user, team=investigation.team)
        ),
        lambda data: path_node_update(node=node, user=request.user, **data),
        done=lambda saved: _panel(request, investigation, node=node),
        failed=lambda form: _panel(
            request, investigation, node=node, node_edit_form=form, status=400
        ),
    )


@require_POST
@login_required
def path_node_state(request: HttpRequest, pk: int, node_pk: int) -> HttpResponse:
    investigation = _writable(request, pk)
    node = _node(investigation, node_pk)
    return submit(
        PathNodeStateForm(
            request.POST,
            request.FILES,
            collections=collection_choices(investigation=investigation),
        ),
        lambda data: path_node_set_state(
            node=node,
            user=request.user,
            state=data["state"],
            note=data["note"],
            link=data["link"],
            file=data["file"],
            collection=data["collection"],
        ),
        done=lambda saved: _panel(request, investigation, node=node),
        failed=lambda form: _panel(request, investigation, node=node, state_form=form, status=400),
    )


@require_POST
@login_required
def path_node_remove(request: HttpRequest, pk: int, node_pk: int) -> HttpResponse:
    investigation = _writable(request, pk)
    path_node_delete(node=_node(investigation, node_pk), user=request.user)
    return _panel(request, investigation)


@require_POST
@login_required
def path_edge_new(request: HttpRequest, pk: int) -> HttpResponse:
    investigation = _writable(request, pk)
    return submit(
        PathEdgeForm(request.POST, nodes=path_node_choices(investigation=investigation)),
        lambda data: path_edge_create(investigation=investigation, user=request.user, **data),
        done=lambda edge: _panel(request, investigation),
        failed=lambda form: _panel(request, investigation, edge_form=form, status=400),
    )


@require_POST
@login_required
def path_edge_remove(request: HttpRequest, pk: int, edge_pk: int) -> HttpResponse:
    investigation = _writable(request, pk)
    edge = path_edge_get(investigation=investigation, edge_id=edge_pk)
    if edge is None:
        raise Http404
    path_edge_delete(edge=edge, user=request.user)
    return _panel(request, investigation)

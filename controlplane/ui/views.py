"""The pages. Each renders a shell; the page's script fills it from the REST API, as automation would."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.views.decorators.http import require_GET

from controlplane.clusters.models import Cluster
from controlplane.core.permissions import ADMIN, OPERATOR, VIEWER, has_role
from controlplane.flows.models import Flow
from controlplane.ui import forms


def _require(request: HttpRequest, role: str) -> None:
    # A logged-in user without a role sees nothing, as the API refuses them everything.
    if not has_role(request.user, role):
        raise PermissionDenied(f"this page needs the {role} role")


@require_GET
@login_required
def dashboard(request: HttpRequest) -> HttpResponse:
    _require(request, VIEWER)
    return render(request, "ui/dashboard.html", {"nav": "dashboard"})


@require_GET
@login_required
def cluster_list(request: HttpRequest) -> HttpResponse:
    _require(request, VIEWER)
    return render(request, "ui/cluster_list.html", {"nav": "clusters"})


@require_GET
@login_required
def cluster_form(request: HttpRequest, pk: int | None = None) -> HttpResponse:
    """A new cluster (admin), or one cluster: editable by admins, read-only for the others."""
    _require(request, ADMIN if pk is None else VIEWER)
    cluster = get_object_or_404(Cluster, pk=pk) if pk is not None else None
    context = {"nav": "clusters", "cluster": cluster, "sections": forms.cluster_sections()}
    return render(request, "ui/cluster_form.html", context)


@require_GET
@login_required
def flow_list(request: HttpRequest) -> HttpResponse:
    _require(request, VIEWER)
    return render(request, "ui/flow_list.html", {"nav": "flows"})


@require_GET
@login_required
def flow_form(request: HttpRequest, pk: int | None = None) -> HttpResponse:
    _require(request, ADMIN)
    flow = get_object_or_404(Flow.objects.select_related("source", "target"), pk=pk) if pk is not None else None
    aliases = list(Cluster.objects.values_list("alias", flat=True))
    context = {"nav": "flows", "flow": flow, "sections": forms.flow_sections(aliases), "has_clusters": len(aliases) > 1}
    return render(request, "ui/flow_form.html", context)


@require_GET
@login_required
def flow_detail(request: HttpRequest, pk: int) -> HttpResponse:
    _require(request, VIEWER)
    flow = get_object_or_404(Flow.objects.select_related("source", "target"), pk=pk)
    return render(request, "ui/flow_detail.html", {"nav": "flows", "flow": flow})


@require_GET
@login_required
def flow_import(request: HttpRequest) -> HttpResponse:
    _require(request, ADMIN)
    return render(request, "ui/flow_import.html", {"nav": "flows"})


@require_GET
@login_required
def failover_list(request: HttpRequest) -> HttpResponse:
    _require(request, VIEWER)
    aliases = list(Cluster.objects.values_list("alias", flat=True))
    return render(request, "ui/failover_list.html", {"nav": "failover", "aliases": aliases})


@require_GET
@login_required
def failover_wizard(request: HttpRequest, pk: int) -> HttpResponse:
    _require(request, VIEWER)
    from controlplane.failover.models import Failover

    failover = get_object_or_404(Failover, pk=pk)
    context = {"nav": "failover", "failover": failover, "operator": has_role(request.user, OPERATOR)}
    return render(request, "ui/failover_wizard.html", context)

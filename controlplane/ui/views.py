"""The pages. Each renders a shell; the page's script fills it from the REST API, as automation would.

Every page is one `Page`: its template, its nav tab, the role it needs, and the object its URL names, if any.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.contrib.auth.mixins import LoginRequiredMixin
from django.core.exceptions import PermissionDenied
from django.db.models import Model, QuerySet
from django.http import HttpRequest, HttpResponseBase
from django.shortcuts import get_object_or_404
from django.views.generic import TemplateView

from controlplane.clusters.models import Cluster
from controlplane.core.permissions import OPERATOR, VIEWER, has_role
from controlplane.failover.choices import Status
from controlplane.flows.models import Flow
from controlplane.ui import forms


class Page(LoginRequiredMixin, TemplateView):
    http_method_names = ["get"]
    nav = ""
    role = VIEWER
    # The object the URL's pk names, put in the context under `object_name`; none on a "new" page without a pk.
    queryset: QuerySet[Any] | None = None
    object_name = ""
    # More context the template needs, computed per request.
    extra: Callable[[HttpRequest], dict[str, Any]] | None = None

    def dispatch(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        # A logged-in user without the role sees nothing, as the API refuses them everything.
        if request.user.is_authenticated and not has_role(request.user, self.role):
            raise PermissionDenied(f"this page needs the {self.role} role")
        return super().dispatch(request, *args, **kwargs)

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context = super().get_context_data(**kwargs)
        context["nav"] = self.nav
        if self.queryset is not None:
            pk = self.kwargs.get("pk")
            found: Model | None = get_object_or_404(self.queryset, pk=pk) if pk is not None else None
            context[self.object_name] = found
        if self.extra is not None:
            context.update(self.extra(self.request))
        return context


def cluster_form(request: HttpRequest) -> dict[str, Any]:
    return {"sections": forms.cluster_sections()}


def flow_form(request: HttpRequest) -> dict[str, Any]:
    aliases = list(Cluster.objects.values_list("alias", flat=True))
    return {"sections": forms.flow_sections(aliases), "has_clusters": len(aliases) > 1}


def failover_list(request: HttpRequest) -> dict[str, Any]:
    """The plan starts on the first flow's clusters: the group picker lists groups of a flow's topics, and a pair
    of clusters with no flow between them (the first two aliases were) greeted a new user with an error."""
    aliases = list(Cluster.objects.values_list("alias", flat=True))
    first = Flow.objects.select_related("source", "target").order_by("pk").first()
    if first is not None:
        source, target = first.source.alias, first.target.alias
    else:
        source, target = [*aliases, "", ""][:2]
    return {"aliases": aliases, "source": source, "target": target, "states": Status.choices}


def failover_wizard(request: HttpRequest) -> dict[str, Any]:
    return {"operator": has_role(request.user, OPERATOR)}

"""Top-level URL map: the UI pages, the admin, the versioned REST API and its schema."""

from __future__ import annotations

from csp.decorators import csp_update
from django.contrib import admin
from django.contrib.auth.decorators import login_required
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from controlplane.core import views
from controlplane.orchestration.api.urls import metrics_urlpatterns

handler400 = views.bad_request
handler404 = views.not_found
SWAGGER_UI_STYLE_HASH = "'sha256-MMpT0iDxyjALd9PdfepImGX3DBfJPXZ4IlDWdPAgtn0='"

urlpatterns = [
    path("", include("controlplane.ui.urls")),
    path("healthz", views.healthz, name="healthz"),
    path("admin/", admin.site.urls),
    path("api/v1/", include("controlplane.api_urls")),
    *metrics_urlpatterns,
    path("", include("controlplane.accounts.urls")),
    path("api/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    # A browser gets the login page rather than a bare 403 from the API. The split view serves Swagger UI's start-up
    # code as a script file instead of an inline <script>, as the Content-Security-Policy requires.
    path(
        "api/docs/",
        # drf-spectacular's page keeps one fixed inline <style> block; its hash admits that block and nothing else.
        csp_update({"style-src": [SWAGGER_UI_STYLE_HASH]})(
            login_required(SpectacularSwaggerSplitView.as_view(url_name="api-schema"))
        ),
        name="api-docs",
    ),
]
